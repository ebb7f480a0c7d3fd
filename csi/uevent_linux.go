package csi

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// watchBlockChanges listens to the kernel's uevents (a NETLINK_KOBJECT_UEVENT
// socket, the multicast group udev reads) and wakes changed on each "change"
// of a block device: the kernel sends one with RESIZE=1 when a device's
// capacity changes (losetup --set-capacity, a grown zvol). A lost event (the
// socket's buffer overflowed, ENOBUFS) wakes it too: the waiter reads again.
// stop closes the socket and waits for the reader to end.
func watchBlockChanges() (changed <-chan struct{}, stop func(), err error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_KOBJECT_UEVENT)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to open a uevent socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1}); err != nil {
		_ = unix.Close(fd)
		return nil, nil, fmt.Errorf("failed to listen to the kernel's uevents: %w", err)
	}
	// Non-blocking, the file reads through the runtime's poller, so Close
	// wakes a reader blocked in Read.
	socket := os.NewFile(uintptr(fd), "uevents")
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		message := make([]byte, 16<<10)
		for {
			n, err := socket.Read(message)
			lost := errors.Is(err, unix.ENOBUFS)
			if err != nil && !lost {
				return // closed by stop
			}
			if lost || blockChange(message[:n]) {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	return wake, func() { _ = socket.Close(); <-done }, nil
}

// blockChange reports whether a kernel uevent, "ACTION@DEVPATH" and then
// KEY=VALUE fields, each ending in a NUL, tells of a change of a block
// device.
func blockChange(message []byte) bool {
	fields := bytes.Split(message, []byte{0})
	if len(fields) == 0 || !bytes.HasPrefix(fields[0], []byte("change@")) {
		return false
	}
	for _, field := range fields[1:] {
		if string(field) == "SUBSYSTEM=block" {
			return true
		}
	}
	return false
}
