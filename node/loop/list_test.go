package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestListReadsTheKernelsView attaches a real file with direct I/O, fences
// the device, and checks that List shows what losetup --list showed:
// the backing path, the flags, the backing file's identity by stat, and the
// device node's own identity (what a loop device attached over it shows).
func TestListReadsTheKernelsView(t *testing.T) {
	l, file, device := attachTemp(t, "listed.img", true)
	ctx := context.Background()
	f, err := os.Open(device)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := SetReadOnly(f, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Cmder.Command(ctx, "blockdev", "--setrw", device).Run() })

	devices, err := List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(devices, func(a, b Device) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("not sorted by name: %v", devices)
	}
	i := slices.IndexFunc(devices, func(d Device) bool { return d.Name == device })
	if i < 0 {
		t.Fatalf("%s is not listed: %v", device, devices)
	}
	d := devices[i]
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	var node unix.Stat_t
	if err := unix.Stat(device, &node); err != nil {
		t.Fatal(err)
	}
	if d.BackFile != file || !d.Backs(info) || !d.ReadOnly || d.Node != (FileID{node.Dev, node.Ino}) || d.Number != node.Rdev {
		t.Errorf("listed %+v; want back-file %s with its identity, read-only, node %d:%d, number %d",
			d, file, node.Dev, node.Ino, node.Rdev)
	}
	seq, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(device), "diskseq"))
	if err == nil && (d.DiskSeq == 0 || strings.TrimSpace(string(seq)) != strconv.FormatUint(d.DiskSeq, 10)) {
		t.Errorf("listed disk sequence %d, sysfs says %q", d.DiskSeq, seq)
	}
	// Direct I/O needs a backing file system that takes O_DIRECT (tmpfs
	// does not): where the kernel fell back, sysfs says so and so must List.
	if dio, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(device), "loop", "dio")); err != nil || (string(dio) == "1\n") != d.DirectIO {
		t.Errorf("direct I/O listed %v, sysfs says %q (%v)", d.DirectIO, dio, err)
	}
}

// TestDiskSeqNamesOneAttachment: the device's sequence number changes when
// it is detached, so a test holding (name, DiskSeq) of a device it let go of
// never mistakes the next attach of that name (another test's) for it.
func TestDiskSeqNamesOneAttachment(t *testing.T) {
	l, _, device := attachTemp(t, "sequenced.img", false)
	ctx := context.Background()
	before, err := DiskSeq(device)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("this kernel has no diskseq (before 5.15)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Detach(ctx, device); err != nil {
		t.Fatal(err)
	}
	after, err := DiskSeq(device)
	if err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Errorf("%s's diskseq is %d before and after its detach", device, before)
	}
}
