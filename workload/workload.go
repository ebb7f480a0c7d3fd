package workload

import (
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// Workload is one application's model: it writes to its volumes the way the
// application does and proves from the devices' bytes what survived.
//
// A Workload is not safe for concurrent use; the simulation has one goroutine.
type Workload interface {
	// Name is the instance's name, written into every block it writes.
	Name() string
	// Volumes are the volumes the workload needs, in a fixed order.
	Volumes() []VolumeSpec
	// Step performs one application operation (a transaction, an upload, a
	// push) at the given time, which never goes back. A write or Sync error
	// stops the model: the step is not acknowledged and later steps return
	// ErrStopped until Resume.
	Step(now time.Time, devices Devices) (StepResult, error)
	// Verify reads what the devices hold and reports, per volume, the prefix of
	// the history they hold, the violations, and the acknowledged writes lost.
	Verify(devices Devices, now time.Time) Verdict
	// Resume continues the model from the state a consistent verdict found: the
	// writes after its prefix leave the history for good.
	Resume(verdict Verdict) error
	// Changes counts what the current history wrote to a volume after the write
	// with sequence number afterSeq (0: everything), e.g. after the prefix a
	// fail-over verdict found, to compare with the bytes a fail-back shipped.
	Changes(volume string, afterSeq uint64) (ChangeStats, error)
	// ChangesBetween counts what the current history wrote to a volume in the
	// steps after `after` up to and including `until`: the changes a snapshot
	// taken at until holds over one taken at after, which an incremental
	// stream between them ships.
	ChangesBetween(volume string, after, until time.Time) (ChangeStats, error)
}

// VolumeSpec is one volume a workload needs.
type VolumeSpec struct {
	Name      string // at most 16 bytes; written into every block
	SizeBytes uint64 // the model writes below this offset
	// Files: the application keeps files on it (WordPress's uploads,
	// Gitea's repositories), which a platform that mounts filesystems
	// mounts as one; a database's volume is a raw device.
	Files bool
}

// Devices are a workload's opened volumes, by volume name.
type Devices map[string]backend.Device

// StepResult describes one step.
type StepResult struct {
	Operation string // e.g. "upload file 12 (3 blocks); commit txn 40 (2 log blocks)"
	Writes    int    // block writes issued, acknowledged or not
	Bytes     uint64 // bytes of those writes
	Syncs     int    // Syncs that returned without error
	// Acknowledged: every Sync of the step returned without error, so the
	// application acknowledged the operation.
	Acknowledged bool
}

// ChangeStats counts a volume's writes after a point of its history.
type ChangeStats struct {
	Writes     int    // block writes
	WriteBytes uint64 // Writes × BlockSizeBytes
	Blocks     int    // distinct blocks those writes changed
	BlockBytes uint64 // Blocks × BlockSizeBytes: what an incremental send must ship at least
}
