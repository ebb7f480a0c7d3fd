package csi_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/node/loop/looptest"
)

// TestReleaseStaleLoopsTakesOnlyADeadRunsDevices: three loop-devices
// directories under a base of the test's own -- one whose owner (a child
// process holding its lock, as a test run does) is SIGKILLed with its
// device attached, formatted, mounted and bind-mounted; one this process
// owns; one with no lock at all -- and a sweep before and after the kill.
// Only the dead owner's device goes, with its mounts, and its directory
// with it.
func TestReleaseStaleLoopsTakesOnlyADeadRunsDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: loop devices and mounts")
	}
	base := t.TempDir()
	// attach attaches a file in dir: its device and that attachment.
	attach := func(dir string) (string, loop.Device) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		image := filepath.Join(dir, "vol.img")
		if err := os.Truncate(image, 0); err != nil {
			if err := os.WriteFile(image, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Truncate(image, 32<<20); err != nil {
			t.Fatal(err)
		}
		device := looptest.Attach(t, image)
		held, err := loop.Attachment(device)
		if err != nil {
			t.Fatal(err)
		}
		return device, held
	}
	dead, live, unowned := filepath.Join(base, "csi-loops-dead"), filepath.Join(base, "csi-loops-live"), filepath.Join(base, "csi-loops-old")
	deadDevice, deadHeld := attach(dead)
	_, liveHeld := attach(live)
	_, unownedHeld := attach(unowned)
	owner, err := claimDir(live)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()

	staging, target := filepath.Join(base, "staging"), filepath.Join(base, "target")
	for _, dir := range []string{staging, target} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range [][]string{{"mkfs.ext4", "-q", deadDevice}, {"mount", deadDevice, staging}, {"mount", "--bind", staging, target}} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", cmd, err, out)
		}
	}
	t.Cleanup(func() {
		for _, m := range []string{target, staging} {
			if mountType(t, m) != "" {
				unix.Unmount(m, unix.MNT_DETACH)
			}
		}
	})
	// The dead run's lock, held by a process of its own as a test binary
	// holds its directory's.
	holder := exec.Command("sh", "-c", `exec 9>"$1/`+ownerLock+`" && flock -n 9 && echo locked && exec sleep 600`, "sh", dead)
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	line := make([]byte, len("locked\n"))
	if _, err := stdout.Read(line); err != nil || string(line) != "locked\n" {
		t.Fatalf("the holder did not take the lock: %q, %v", line, err)
	}

	released, err := releaseStaleLoops(base)
	if err != nil || len(released) > 0 {
		t.Fatalf("with every owner alive the sweep released %v (%v)", released, err)
	}
	if err := holder.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := holder.Wait(); !errors.As(err, &exit) {
		t.Fatalf("the holder ended with %v, not killed", err)
	}

	released, err = releaseStaleLoops(base)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(released, []string{deadDevice}) {
		t.Errorf("released %v, want only the dead run's %s", released, deadDevice)
	}
	if deadHeld.StillAttached() {
		t.Errorf("%s is still attached", deadHeld)
	}
	if mountType(t, staging) != "" || mountType(t, target) != "" {
		t.Errorf("the dead run's mounts are still there")
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead run's directory is still there: %v", err)
	}
	for _, d := range []loop.Device{liveHeld, unownedHeld} {
		if !d.StillAttached() {
			t.Errorf("%s, not a dead run's, was detached", d)
		}
	}
	for _, dir := range []string{live, unowned} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s, not a dead run's, is gone: %v", dir, err)
		}
	}
}
