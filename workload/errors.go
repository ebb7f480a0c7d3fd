package workload

import "errors"

// The expected outcomes of Step and Resume. Test them with errors.Is.
var (
	// ErrStopped: an earlier step's write or Sync failed, so the application has
	// stopped, as a database does at a failed fsync. Verify, then Resume.
	ErrStopped = errors.New("workload stopped after a failed write; verify and resume")
	// ErrNoDevice: the Devices lack one of the workload's volumes.
	ErrNoDevice = errors.New("no device for volume")
	// ErrUnknownVolume: the workload has no volume of that name.
	ErrUnknownVolume = errors.New("no such volume")
	// ErrVolumeFull: the model has no room left on a volume for its next
	// operation; nothing was written. Size the volume for the run.
	ErrVolumeFull = errors.New("volume full")
	// ErrInconsistent: Resume was given a verdict with violations; there is no
	// consistent state to continue from.
	ErrInconsistent = errors.New("verdict has violations")
	// ErrStaleVerdict: Resume was given a verdict of another workload, or one
	// taken before the model wrote again.
	ErrStaleVerdict = errors.New("verdict is stale")
)
