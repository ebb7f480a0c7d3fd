package fence

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// standIn is a stand-in /proc/<pid> directory whose mountinfo holds table.
func standIn(t testing.TB, table []byte) Namespace {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mountinfo"), table, 0o600); err != nil {
		t.Fatal(err)
	}
	return Namespace{Proc: dir}
}

func mountPoints(mounts []*mountinfo.Info) []string {
	var points []string
	for _, m := range mounts {
		points = append(points, m.Mountpoint)
	}
	return points
}

// TestMountsOfFindsTheDeviceByNumber: a node's table (testdata/mountinfo,
// shaped like a kind node's with a staged and a published volume) gives a
// device's mounts by major:minor only, in order and unescaped; a btrfs on a
// loop device shows an anonymous number and is not among them.
func TestMountsOfFindsTheDeviceByNumber(t *testing.T) {
	table, err := os.ReadFile("testdata/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	ns := standIn(t, table)
	for _, c := range []struct {
		rdev uint64
		want []string
	}{
		{unix.Mkdev(7, 3), []string{
			"/var/lib/kubelet/plugins/kubernetes.io/csi/baton.dev/4f1c/globalmount",
			"/var/lib/kubelet/pods/9a2e/volumes/kubernetes.io~csi/pvc one/mount",
		}},
		{unix.Mkdev(7, 4), nil},
		{unix.Mkdev(7, 9), nil},
	} {
		mounts, err := ns.mountsOf(c.rdev)
		if err != nil {
			t.Fatal(err)
		}
		if got := mountPoints(mounts); !slices.Equal(got, c.want) {
			t.Errorf("mounts of %d:%d: %q, want %q", unix.Major(c.rdev), unix.Minor(c.rdev), got, c.want)
		}
	}
	ro, err := ns.mountsOf(unix.Mkdev(7, 5))
	if err != nil || len(ro) != 1 || !readOnlySuper(ro[0]) {
		t.Fatalf("the read-only xfs: %v %v, want one mount of a read-only file system", ro, err)
	}
	if rw, _ := ns.mountsOf(unix.Mkdev(7, 3)); readOnlySuper(rw[0]) {
		t.Errorf("the staged ext4 %+v is taken for read-only", rw[0])
	}
}

// TestAnUnreadableTableIsAnError: a table that does not parse, or is not
// there, is an error naming it, never "no mounts" (which would fence only
// the flag).
func TestAnUnreadableTableIsAnError(t *testing.T) {
	if _, err := standIn(t, []byte("7:3 / /mnt\n")).mountsOf(unix.Mkdev(7, 3)); err == nil {
		t.Error("a truncated line parsed")
	}
	if _, err := (Namespace{Proc: t.TempDir()}).mountsOf(unix.Mkdev(7, 3)); err == nil {
		t.Error("a missing mountinfo read as empty")
	}
}

// FuzzMountsOf feeds the mountinfo parser tables it was not written for:
// it errs or returns only mounts of the device asked for, and never panics.
func FuzzMountsOf(f *testing.F) {
	table, err := os.ReadFile("testdata/mountinfo")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(table, uint32(7), uint32(3))
	f.Add([]byte("1 0 0:1 / / rw - rootfs rootfs rw\n"), uint32(0), uint32(1))
	f.Add([]byte("1 0 7:3 /a\\ /b\\0 rw a b - - ext4 /dev/x rw\n"), uint32(7), uint32(3))
	f.Fuzz(func(t *testing.T, table []byte, major, minor uint32) {
		rdev := unix.Mkdev(major, minor)
		mounts, err := standIn(t, table).mountsOf(rdev)
		if err != nil {
			return
		}
		for _, m := range mounts {
			if uint32(m.Major) != major || uint32(m.Minor) != minor {
				t.Fatalf("mounts of %d:%d include %+v", major, minor, m)
			}
		}
	})
}
