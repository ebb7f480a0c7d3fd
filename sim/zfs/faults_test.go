package zfs

import (
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

var errInjected = errors.New("injected")

// TestFailNextFailsOnceAndChangesNothing injects a failure into every kind of
// operation in turn: the call fails with the injected error, changes nothing,
// and the next call runs.
func TestFailNextFailsOnceAndChangesNothing(t *testing.T) {
	for op := Op(0); op < opCount; op++ {
		t.Run(op.String(), func(t *testing.T) {
			p := New(Options{SizeBytes: 1 << 30, Seed: 1})
			mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
			mustDo(t, write(p, "v", 0, 100))
			mustDo(t, p.Snapshot("v", "s"))
			dev, err := p.Open("v")
			mustDo(t, err)
			_, err = dev.WriteAt([]byte{1}, 0)
			mustDo(t, err)
			before := allocated(t, p)
			p.FailNext(op, errInjected)
			call := operations(p, dev)[op]
			if err := call(); !errors.Is(err, errInjected) {
				t.Fatalf("%v with a queued failure: %v", op, err)
			}
			if got := allocated(t, p); got != before || len(p.volumes) != 1 || len(p.volumes["v"].snapshots) != 1 ||
				len(p.volumes["v"].pending) != 1 {
				t.Fatalf("a failed %v changed the pool", op)
			}
			if err := call(); errors.Is(err, errInjected) {
				t.Fatalf("%v failed twice on one queued failure", op)
			}
			mustDo(t, p.Verify())
		})
	}
}

// operations calls each kind of operation once, on a pool prepared by the
// test above.
func operations(p *Pool, dev backend.Device) [opCount]func() error {
	return [opCount]func() error{
		OpCreate:          func() error { return p.CreateVolume("w", 1<<20, backend.Thin) },
		OpResize:          func() error { return p.ResizeVolume("v", 2<<20) },
		OpDestroy:         func() error { return p.DestroyVolume("missing") },
		OpSetReadOnly:     func() error { return p.SetReadOnly("v", true) },
		OpSnapshot:        func() error { return p.Snapshot("v", "t") },
		OpDestroySnapshot: func() error { return p.DestroySnapshot("v", "missing") },
		OpClone:           func() error { return p.Clone("v", "s", "c") },
		OpRollback:        func() error { return p.Rollback("v", "missing") },
		OpSend:            func() error { _, err := p.Send("v", "", "s"); return err },
		OpReceive:         func() error { return p.Receive("r", nil) },
		OpList:            func() error { _, err := p.Volumes(); return err },
		OpOpen:            func() error { _, err := p.Open("v"); return err },
		OpRead:            func() error { _, err := dev.ReadAt(make([]byte, 1), 0); return err },
		OpWrite:           func() error { _, err := dev.WriteAt([]byte{1}, 0); return err },
		OpSync:            func() error { return dev.Sync() },
	}
}

// TestSetFaultsSeesEveryCall: the fault function sees the operation and its
// target, and its error comes back unchanged.
func TestSetFaultsSeesEveryCall(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	var seen []string
	p.SetFaults(func(op Op, target string) error {
		seen = append(seen, op.String()+" "+target)
		if op == OpSnapshot {
			return backend.Refusal(backend.ErrBusy, tool, "pool I/O is currently suspended")
		}
		return nil
	})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	if err := p.Snapshot("v", "s"); !errors.Is(err, backend.ErrBusy) {
		t.Fatalf("the fault function's error was not returned: %v", err)
	}
	p.SetFaults(nil)
	mustDo(t, p.Snapshot("v", "s"))
	if len(seen) != 2 || seen[0] != "create v" || seen[1] != "snapshot v@s" {
		t.Fatalf("the fault function saw %q", seen)
	}
}
