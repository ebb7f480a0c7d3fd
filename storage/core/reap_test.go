package core_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// TestAFailbackThatReachesOneNodeReapsTheOldMember: a fail-back stream may
// reach only some of the recovered site's receivers -- on DRBD sites only
// the old primary's node holds the snapshots the delta is based on, and the
// others refuse it -- and the chain's data is safe here all the same: the old
// member is reaped once the successor's stream arrived on any node. Waiting
// for every receiver left it Demoted for ever on the simulation, and a
// reaped member's 404 (rule 2) never came to pass.
func TestAFailbackThatReachesOneNodeReapsTheOldMember(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	v1 := createProtected(w)
	w.cut[clusterA] = true
	v2, err := b.Failover(v1.Ref, true)
	w.must(err)
	w.run(10 * time.Second)
	w.cut[clusterA] = false
	// a2 refuses every stream of v2's replica: its dataset is in the way.
	w.node(clusterA, "a2").Datasets["rep-"+string(v2.Ref.Volume)] = []core.SnapshotInfo{{Name: "foreign", GUID: "foreign"}}
	_, err = a.Demote(v1.Ref)
	w.must(err)
	w.run(5 * time.Second)
	if !resyncUntilReady(w, b, v2.Ref, clusterA) {
		t.Fatal("resync never became ready")
	}
	w.run(5 * time.Second)
	received := w.node(clusterA, "a1").Datasets["rep-"+string(v2.Ref.Volume)]
	if len(received) == 0 {
		t.Fatalf("the fail-back stream did not reach a1 either: %v", w.node(clusterA, "a1").Datasets)
	}
	if old, _ := a.Volume(v1.Ref); old.State != chain.Tombstone {
		t.Fatalf("A:v1 is %s after its successor's stream arrived on a1, want Tombstone", old.State)
	}
}
