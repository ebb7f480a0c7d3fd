// Package looptest attaches files to loop devices for tests and, at a
// test's end, detaches only the attachments the test made.
//
// A loop device's name is anyone's once its attachment is gone. A cleanup
// that runs `losetup --detach /dev/loop3` after the test (or the teardown
// it tests) already let go of loop3 detaches whatever another package's
// test attached there since: a btrfs pool's volume between its attach and
// its first read, which then read an empty device.
package looptest

import (
	"context"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/loop"
)

// Attach attaches file to a free loop device until the test ends and
// returns the device's path (see Hold).
func Attach(t testing.TB, file string) string {
	t.Helper()
	device, err := loop.Losetup{Cmder: exec.Local{}}.Attach(context.Background(), file, false)
	if err != nil {
		t.Fatalf("attaching %s: %v", file, err)
	}
	Hold(t, device)
	return device
}

// Hold records what is attached to each device now and, at the test's
// end, detaches those attachments (loop.Clear): one the test detached
// itself is left alone, whatever is attached under its name by then.
func Hold(t testing.TB, devices ...string) {
	t.Helper()
	for _, device := range devices {
		held, err := loop.Attachment(device)
		if err != nil {
			t.Fatalf("%s: %v", device, err)
		}
		t.Cleanup(func() {
			if err := loop.Clear(held); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
	}
}
