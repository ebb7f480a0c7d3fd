package drbd

import (
	"errors"
	"fmt"

	"github.com/baton-dr/baton/storage/backend"
)

// ErrNodeDown: the node crashed and has not restarted; nothing on it answers.
var ErrNodeDown = errors.New("node is down")

// stateChange is a DRBD state change result (enum drbd_state_rv); drbdsetup
// prints "<object>: State change failed: (<code>) <text>".
type stateChange int

const (
	ssTwoPrimaries   stateChange = -1
	ssNoUpToDateDisk stateChange = -2
	ssPrimaryNop     stateChange = -7
	ssDeviceInUse    stateChange = -12
	ssNoQuorum       stateChange = -25
)

func (s stateChange) String() string {
	switch s {
	case ssTwoPrimaries:
		return "Multiple primaries not allowed by config"
	case ssNoUpToDateDisk:
		return "Need access to UpToDate data"
	case ssPrimaryNop:
		return "Refusing to be Primary while peer is not outdated"
	case ssDeviceInUse:
		return "Device is held open by someone"
	case ssNoQuorum:
		return "No quorum"
	}
	return "stateChange(?)"
}

// retCode is a DRBD netlink error (enum drbd_ret_code); drbdsetup prints
// "<object>: Failure: (<code>) <text>".
type retCode int

const (
	errLocalAddr         retCode = 102
	errOpenDisk          retCode = 104
	errBdclaimDisk       retCode = 114
	errMdInvalid         retCode = 119
	errDiskConfigured    retCode = 124
	errNetConfigured     retCode = 125
	errNoDisk            retCode = 138
	errConnected         retCode = 151
	errMinorOrVolumeUsed retCode = 161
)

func (r retCode) String() string {
	switch r {
	case errLocalAddr:
		return "Local address(port) already in use."
	case errOpenDisk:
		return "Can not open backing device."
	case errBdclaimDisk:
		return "Lower device is already claimed. This usually means it is mounted."
	case errMdInvalid:
		return "No valid meta-data signature found.\n\n\t==> Use 'drbdadm create-md res' to initialize meta-data area. <=="
	case errDiskConfigured:
		return "Device is attached to a disk (use detach first)"
	case errNetConfigured:
		return "Device has a net-config (use disconnect first)"
	case errNoDisk:
		return "Device does not have a disk-config"
	case errConnected:
		return "Need to be StandAlone"
	case errMinorOrVolumeUsed:
		return "Minor or volume exists already (delete it first)"
	}
	return "retCode(?)"
}

func stateChangeFailed(kind error, object string, code stateChange) error {
	return backend.Refusal(kind, "drbdsetup", "%s: State change failed: (%d) %s", object, int(code), code)
}

func failure(kind error, object string, code retCode) error {
	return backend.Refusal(kind, "drbdsetup", "%s: Failure: (%d) %s", object, int(code), code)
}

func noSuchResource(resource string) error {
	return backend.Refusal(backend.ErrNotFound, "drbdsetup", "%s: No such resource", resource)
}

func nodeDown(node string) error {
	return fmt.Errorf("drbd on %s: %w", node, ErrNodeDown)
}
