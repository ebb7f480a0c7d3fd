package backend

import "os"

// OpenLocalDevice opens a block device on this machine, buffered: writes
// land in the page cache and Sync (fsync) flushes them through the device
// -- a zvol to its pool, DRBD to its disk and on to its peers. It is the
// node agents' OpenDevice where no test stands in for the device.
func OpenLocalDevice(path string, writable bool) (Device, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	return os.OpenFile(path, flag, 0)
}
