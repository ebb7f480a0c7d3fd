package localdevice

import (
	"github.com/baton-dr/baton/node/fence"
	"github.com/baton-dr/baton/storage/backend"
)

// Devices is how a pool or a replicator reaches the block devices it makes,
// on the machine where its Cmder runs the commands that make them. node/zfs
// and node/drbd embed it in their Options; the zero value reaches this
// machine's devices.
type Devices struct {
	// OpenDevice opens a block device; nil opens it on this machine (Open).
	OpenDevice func(path string, writable bool) (backend.Device, error)
	// Mounts is the mount namespace whose file systems on a device the fence
	// shuts down (package fence): the node's, through /proc/1, unless set.
	Mounts fence.Namespace
	// FenceDevice sets the fence on a block device (fenced) or lifts it; nil
	// does it on this machine, with package fence in Mounts (Fence).
	FenceDevice func(path string, fenced bool) error
}

// OrThisMachine is d with what is unset done on this machine.
func (d Devices) OrThisMachine() Devices {
	if d.OpenDevice == nil {
		d.OpenDevice = Open
	}
	if d.FenceDevice == nil {
		d.FenceDevice = Fence(d.Mounts)
	}
	return d
}
