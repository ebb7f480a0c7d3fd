package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/node/exec"
)

// TestDetachWaitsUntilTheKernelLetsGo holds a real loop device open the way
// blkid or a btrfs-progs device scan does while it is detached: losetup
// succeeds at once, the kernel only marks the device to be cleared at its
// last close, and Detach must not return before that close.
func TestDetachWaitsUntilTheKernelLetsGo(t *testing.T) {
	l, file, device := attachTemp(t, "held.img", false)
	ctx := context.Background()
	holder, err := os.Open(device)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()

	// Held open: the wait ends only at the deadline, with an error.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := l.Detach(short, device); err == nil || !strings.Contains(err.Error(), "still attached") {
		t.Fatalf("detaching a device held open: %v, want a still-attached error", err)
	}
	if !attached(t, device, file) {
		t.Fatal("the held device is gone while held")
	}

	// A fresh device detached while held, then the holder closes: Detach
	// returns, and the device is gone when it does.
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	if device, err = l.Attach(ctx, file, false); err != nil {
		t.Fatal(err)
	}
	hold(t, device)
	if holder, err = os.Open(device); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Detach(ctx, device) }()
	autoclear := filepath.Join("/sys/block", filepath.Base(device), "loop", "autoclear")
	for {
		flag, err := os.ReadFile(autoclear)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(flag)) == "1" {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Detach returned %v while the device was held open", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Detach after the holder closed: %v", err)
	}
	if attached(t, device, file) {
		t.Fatal("Detach returned while the device was still attached")
	}
}

// attachTemp attaches a new 1 MiB file of the test's to a loop device,
// detached at the end of the test if still attached; it skips unless run
// as root.
func attachTemp(t *testing.T, name string, directIO bool) (l Losetup, file, device string) {
	t.Helper()
	l, file = tempImage(t, name)
	device, err := l.Attach(context.Background(), file, directIO)
	if err != nil {
		t.Fatal(err)
	}
	hold(t, device)
	return l, file, device
}

// hold detaches the device's attachment now at the test's end (Clear),
// and only it: a name the test let go of may be another test's device by
// then.
func hold(t *testing.T, device string) {
	t.Helper()
	held, err := Attachment(device)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Clear(held); err != nil {
			t.Error(err)
		}
	})
}

// tempImage writes a new 1 MiB file of the test's, named name, for a loop
// device to be attached to; it skips unless run as root.
func tempImage(t *testing.T, name string) (l Losetup, file string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("attaches loop devices: run as root")
	}
	file = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	return Losetup{Cmder: exec.Local{}}, file
}

func attached(t *testing.T, device, file string) bool {
	t.Helper()
	devices, err := List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(devices, func(d Device) bool { return d.Name == device && d.BackFile == file })
}

// TestAnAttachNeverInheritsAFence: a loop device detached while fenced
// (BLKROSET) keeps the flag, and the next file attached to it got a device
// whose every write failed with EPERM (csi-sanity's mkfs.xfs, after a bed's
// fenced volumes were detached).
func TestAnAttachNeverInheritsAFence(t *testing.T) {
	l, file := tempImage(t, "fenced.img")
	ctx := context.Background()
	out, err := exec.Output(l.Cmder.Command(ctx, "losetup", "--find"))
	if err != nil {
		t.Fatal(err)
	}
	device := strings.TrimSpace(string(out))
	if err := l.Cmder.Command(ctx, "losetup", device, file).Run(); err != nil {
		t.Skipf("%s was taken before this test could attach to it: %v", device, err)
	}
	hold(t, device)
	t.Cleanup(func() {
		// Never leave the fence for the device's next user (a skip can),
		// and never touch that user's device.
		if _, err := Attachment(device); errors.Is(err, os.ErrNotExist) {
			_ = l.Cmder.Command(ctx, "blockdev", "--setrw", device).Run()
		}
	})
	f, err := os.OpenFile(device, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetReadOnly(f, true); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := l.Detach(ctx, device); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Output(l.Cmder.Command(ctx, "blockdev", "--getro", device)); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skipf("this kernel cleared %s's read-only flag at the detach (%q, %v): nothing to inherit", device, out, err)
	}
	again, err := l.Attach(ctx, file, false)
	if err != nil {
		t.Fatal(err)
	}
	hold(t, again)
	if again != device {
		t.Skipf("losetup handed out %s, not the fenced %s (another attach took it)", again, device)
	}
	f, err = os.OpenFile(again, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatalf("writing to %s after a fenced detach: %v", again, err)
	}
}
