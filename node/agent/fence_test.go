package agent_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/core"
)

// unfenceablePool is a test double of a pool whose fence fails the way the
// btrfs pool's does under a mounted file system it cannot stop, or cannot
// lift while a file system it shut down stays mounted.
type unfenceablePool struct {
	*simzfs.Pool
	err error
}

func (p unfenceablePool) SetReadOnly(string, bool) error { return p.err }

// TestAFenceThatFailsIsReportedAndTakesNoSnapshot: a demoted member whose
// fence does not hold reports it and takes no snapshot -- a final snapshot
// of a member still taking writes would ship as if it held them all -- and
// a promoted member whose fence cannot be lifted says so, not "fenced".
func TestAFenceThatFailsIsReportedAndTakesNoSnapshot(t *testing.T) {
	sim := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})
	pool := unfenceablePool{Pool: sim, err: errors.New("a file system mounted read-write from the device cannot be shut down")}
	a := newAgent(t, pool, clusterA, loopback{})
	for _, c := range []struct {
		readOnly bool
		want     string
	}{
		{true, "failed to fence vol-1: a file system mounted read-write"},
		{false, "failed to lift the fence of vol-1: a file system mounted read-write"},
	} {
		v := volumeSpec("vol-1")
		v.ReadOnly, v.Snapshots = c.readOnly, []string{"baton-000001"}
		status := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{v}})
		if !slices.ContainsFunc(status.Errors, func(e string) bool { return strings.HasPrefix(e, c.want) }) {
			t.Errorf("read-only %v: errors %q, want one starting %q", c.readOnly, status.Errors, c.want)
		}
		if snaps, err := sim.Snapshots("vol-1"); err != nil || len(snaps) != 0 {
			t.Errorf("read-only %v: snapshots %v %v, want none past a failed fence", c.readOnly, snaps, err)
		}
	}
}
