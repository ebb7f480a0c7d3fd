package zfs

import (
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// TestRefusalsInZfsWords pins each refusal's kind and words, as libzfs and
// the zfs command print them.
func TestRefusalsInZfsWords(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, p.Snapshot("v", "s"))
	mustDo(t, p.Snapshot("v", "t"))
	mustDo(t, p.Clone("v", "s", "c"))
	mustDo(t, p.CreateVolume("ro", 1<<20, backend.Thin))
	mustDo(t, p.SetReadOnly("ro", true))
	dev, err := p.Open("ro")
	mustDo(t, err)
	_, writeErr := dev.WriteAt([]byte{1}, 0)
	mustDo(t, dev.Close())
	busy, err := p.Open("c")
	mustDo(t, err)
	defer busy.Close()
	_, sendErr := p.Send("v", "t", "s")

	for _, c := range []struct {
		err  error
		kind error
		want string
	}{
		{p.CreateVolume("v", 1<<20, backend.Thin), backend.ErrExists, "cannot create 'tank/v': dataset already exists"},
		{p.CreateVolume("a@b", 1<<20, backend.Thin), backend.ErrInvalid, "cannot create 'tank/a@b': snapshot delimiter '@' is not expected here"},
		{p.CreateVolume("a/b", 1<<20, backend.Thin), backend.ErrInvalid, "cannot create 'tank/a/b': invalid character '/' in name"},
		{p.CreateVolume("", 1<<20, backend.Thin), backend.ErrInvalid, "cannot create 'tank/': empty component or misplaced '@' or '#' delimiter in name"},
		{p.CreateVolume("z", 0, backend.Thin), backend.ErrInvalid, "cannot create 'tank/z': volume size cannot be zero"},
		{p.ResizeVolume("missing", 1<<20), backend.ErrNotFound, "cannot open 'tank/missing': dataset does not exist"},
		{p.ResizeVolume("v", 1<<20+1), backend.ErrInvalid, "cannot set property for 'tank/v': 'volsize' must be a multiple of volume block size (8K)"},
		{p.ResizeVolume("ro", 2<<20), backend.ErrRefused, "cannot set property for 'tank/ro': dataset is read-only"},
		{p.DestroyVolume("v"), backend.ErrBusy, "cannot destroy 'tank/v': volume has dependent clones"},
		{p.DestroyVolume("c"), backend.ErrBusy, "cannot destroy 'tank/c': dataset is busy"},
		{p.DestroySnapshot("v", "s"), backend.ErrBusy, "cannot destroy 'tank/v@s': snapshot has dependent clones"},
		{p.DestroySnapshot("v", "x"), backend.ErrNotFound, "could not find any snapshots to destroy; check snapshot names."},
		{p.Snapshot("v", "s"), backend.ErrExists, "cannot create snapshot 'tank/v@s': dataset already exists"},
		{p.Rollback("v", "s"), backend.ErrBusy, "cannot rollback to 'tank/v@s': more recent snapshots or bookmarks exist"},
		{p.Rollback("v", "x"), backend.ErrNotFound, "cannot open 'tank/v@x': dataset does not exist"},
		{p.Clone("v", "s", "c"), backend.ErrExists, "cannot create 'tank/c': dataset already exists"},
		{sendErr, backend.ErrInvalid, "warning: cannot send 'tank/v@s': not an earlier snapshot from the same fs"},
		{writeErr, backend.ErrRefused, "cannot write '/dev/zvol/tank/ro': Read-only file system"},
	} {
		if !errors.Is(c.err, c.kind) || c.err.Error() != "zfs: "+c.want {
			t.Errorf("got %v (kind %v), want %q (kind %v)", c.err, errors.Unwrap(c.err), c.want, c.kind)
		}
	}
}

// replicatedPair is a volume on pool a with its replica "r" on pool b,
// holding snapshot s1.
func replicatedPair(t *testing.T) (a, b *Pool) {
	t.Helper()
	a = New(Options{SizeBytes: 1 << 30, Seed: 1})
	b = New(Options{SizeBytes: 1 << 30, Seed: 2})
	mustDo(t, a.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, write(a, "v", 0, 100))
	mustDo(t, a.Snapshot("v", "s1"))
	mustDo(t, b.Receive("r", sendOf(t, a, "v", "", "s1")))
	return a, b
}

func sendOf(t *testing.T, p *Pool, volume, base, snapshot string) *Stream {
	t.Helper()
	s, err := p.Send(volume, base, snapshot)
	mustDo(t, err)
	return s.(*Stream)
}

// TestReceiveRefusalsInZfsWords pins Receive's refusals, checked in the
// order zfs checks them.
func TestReceiveRefusalsInZfsWords(t *testing.T) {
	a, b := replicatedPair(t)
	mustDo(t, write(a, "v", 0, 10))
	mustDo(t, a.Snapshot("v", "s2"))
	mustDo(t, a.Clone("v", "s2", "c"))
	mustDo(t, write(a, "c", 0, 10))
	mustDo(t, a.Snapshot("c", "T1"))
	other := New(Options{SizeBytes: 1 << 30, Seed: 3})
	mustDo(t, other.CreateVolume("r", 1<<20, backend.Thin))
	mustDo(t, other.Snapshot("r", "s2"))
	_, diverged := replicatedPair(t)
	mustDo(t, write(diverged, "r", 0, 1))

	for _, c := range []struct {
		err  error
		kind error
		want string
	}{
		{b.Receive("r", sendOf(t, a, "v", "", "s1")), backend.ErrExists,
			"cannot receive new filesystem stream: destination 'tank/r' exists"},
		{b.Receive("x", sendOf(t, a, "v", "s1", "s2")), backend.ErrNoBase,
			"cannot receive incremental stream: destination 'tank/x' does not exist"},
		{b.Receive("x", sendOf(t, a, "c", "v@s2", "T1")), backend.ErrNoBase,
			"cannot receive: local origin for clone tank/x@T1 does not exist"},
		{other.Receive("r", sendOf(t, a, "v", "s1", "s2")), backend.ErrExists,
			"cannot restore to tank/r@s2: destination already exists"},
		{diverged.Receive("r", sendOf(t, a, "v", "s1", "s2")), backend.ErrDiverged,
			"cannot receive incremental stream: destination tank/r has been modified since most recent snapshot"},
	} {
		if !errors.Is(c.err, c.kind) || c.err.Error() != "zfs: "+c.want {
			t.Errorf("got %v, want %q (kind %v)", c.err, c.want, c.kind)
		}
	}
	mustDo(t, other.DestroySnapshot("r", "s2"))
	mustDo(t, other.Snapshot("r", "s1"))
	err := other.Receive("r", sendOf(t, a, "v", "s1", "s2"))
	if !errors.Is(err, backend.ErrNoBase) || err.Error() !=
		"zfs: cannot receive incremental stream: most recent snapshot of tank/r does not match incremental source" {
		t.Errorf("a delta whose base GUID the volume lacks, under the base's name: %v", err)
	}
}
