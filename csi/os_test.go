package csi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/storage/core"
)

// loopDevices is the node's Devices on the real OS for tests: each member's
// device is a loop device over a sparse file of the member's size, grown
// when the member is expanded -- what the node agent's zvol would be.
type loopDevices struct {
	dir string
	// format, when set, is the filesystem a new device comes with (a
	// restored volume); empty: new devices are blank.
	format string
	mu     sync.Mutex
	loops  map[string]string // dataset -> /dev/loopN
}

func newLoopDevices(t testing.TB) *loopDevices {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the data-path tests need root (loop devices, mkfs, mount)")
	}
	for _, tool := range []string{"losetup", "blkid", "mkfs.ext4", "mkfs.xfs", "mount", "umount", "resize2fs", "xfs_growfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (apt-get install util-linux e2fsprogs xfsprogs): %v", tool, err)
		}
	}
	// A run killed before its cleanup (SIGKILL of go test) leaves its
	// devices attached: the next run releases them (staleloops_test.go).
	released, err := releaseStaleLoops(os.TempDir())
	if len(released) > 0 {
		t.Logf("released loop devices a dead test run left: %s", strings.Join(released, ", "))
	}
	if err != nil {
		t.Logf("releasing loop devices of dead test runs: %v", err)
	}
	dir, err := os.MkdirTemp("", "csi-loops")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := claimDir(dir)
	if err != nil {
		t.Fatal(errors.Join(err, os.RemoveAll(dir)))
	}
	d := &loopDevices{dir: dir, loops: map[string]string{}}
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, loop := range d.loops {
			if out, err := exec.Command("losetup", "-d", loop).CombinedOutput(); err != nil {
				t.Errorf("losetup -d %s: %v: %s", loop, err, out)
			}
		}
		_ = os.RemoveAll(dir)
		owner.Close()
	})
	return d
}

func (d *loopDevices) Device(ctx context.Context, v core.Volume) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	file := filepath.Join(d.dir, v.Dataset()+".img")
	info, err := os.Stat(file)
	if err != nil || uint64(info.Size()) < v.SizeBytes {
		if err := os.Truncate(file, int64(v.SizeBytes)); err != nil {
			f, createErr := os.Create(file)
			if createErr != nil {
				return "", createErr
			}
			_ = f.Close()
			if err := os.Truncate(file, int64(v.SizeBytes)); err != nil {
				return "", err
			}
		}
		if loop, ok := d.loops[v.Dataset()]; ok {
			if out, err := exec.CommandContext(ctx, "losetup", "-c", loop).CombinedOutput(); err != nil {
				return "", fmt.Errorf("losetup -c %s: %v: %s", loop, err, out)
			}
		}
	}
	if loop, ok := d.loops[v.Dataset()]; ok {
		return loop, nil
	}
	out, err := exec.CommandContext(ctx, "losetup", "-f", "--show", file).Output()
	if err != nil {
		return "", fmt.Errorf("losetup -f --show %s: %w", file, err)
	}
	loop := strings.TrimSpace(string(out))
	d.loops[v.Dataset()] = loop
	if d.format != "" {
		if out, err := exec.CommandContext(ctx, "mkfs."+d.format, "-q", loop).CombinedOutput(); err != nil {
			return "", fmt.Errorf("mkfs.%s %s: %v: %s", d.format, loop, err, out)
		}
	}
	return loop, nil
}

// mountType is the filesystem type mounted at path, from /proc/self/mountinfo.
func mountType(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	found := ""
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		for i, field := range fields {
			if field == "-" && len(fields) > i+1 && fields[4] == path {
				found = fields[i+1]
			}
		}
	}
	return found
}

func blkid(t testing.TB, device string) string {
	t.Helper()
	out, _ := exec.Command("blkid", "-p", "-o", "value", "-s", "TYPE", device).Output()
	return strings.TrimSpace(string(out))
}

func statBlock(t testing.TB, path string) (rdev uint64, ok bool) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Rdev, st.Mode&unix.S_IFMT == unix.S_IFBLK
}

// scratch is a directory for staging and target paths, unmounted at the end.
func scratch(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "csi-paths")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 4; i++ { // nested bind mounts: innermost first, bounded
			_ = exec.Command("sh", "-c", "grep -o ' "+dir+"[^ ]*' /proc/self/mountinfo | sort -r | xargs -r -n1 umount").Run()
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}
