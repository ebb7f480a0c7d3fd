// Package localdevice opens and fences the block devices of the machine a
// node agent runs on, for the agents' pools and replicators (node/zfs,
// node/drbd).
package localdevice

import (
	"os"

	"github.com/baton-dr/baton/node/fence"
	"github.com/baton-dr/baton/storage/backend"
)

// Open opens a block device on this machine, buffered: writes
// land in the page cache and Sync (fsync) flushes them through the device
// -- a zvol to its pool, DRBD to its disk and on to its peers. It is the
// node agents' OpenDevice where no test stands in for the device.
func Open(path string, writable bool) (backend.Device, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	return os.OpenFile(path, flag, 0)
}

// Fence is the node agents' FenceDevice where no test stands in for the
// device: package fence on the device on this machine, with the file systems
// mounted from it in mounts.
func Fence(mounts fence.Namespace) func(path string, fenced bool) error {
	return func(path string, fenced bool) error { return fence.Path(path, fenced, mounts) }
}
