package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

func TestFailoverWithoutForceRefusesWhileTheSourceIsALivePrimary(t *testing.T) {
	w := newWorld(t)
	v := createProtected(w)
	b := w.sites[clusterB]
	before, _ := b.Members(v.Ref)
	if _, err := b.Failover(v.Ref, false); !errors.Is(err, core.ErrPeerPrimary) {
		t.Fatalf("fail-over of a live primary without force: %v, want ErrPeerPrimary", err)
	}
	if after, _ := b.Members(v.Ref); len(after) != len(before) {
		t.Fatalf("a refused fail-over created members: %v", after)
	}
}

func TestFailoverWithoutForceWaitsForTheFinalSync(t *testing.T) {
	w := newWorld(t)
	v := createDemoted(w)
	if _, err := w.sites[clusterB].Failover(v.Ref, false); !errors.Is(err, core.ErrFinalSyncPending) {
		t.Fatalf("fail-over before the final sync arrived: %v, want ErrFinalSyncPending", err)
	}
	w.run(5 * time.Second)
	w.relocate(v)
}

func TestFailoverNeedsAReplicaWithASnapshot(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	v := w.create(a, "lonely", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block})
	if _, err := b.Failover(v.Ref, true); !errors.Is(err, core.ErrNoReplica) {
		t.Fatalf("fail-over without a replica: %v, want ErrNoReplica", err)
	}
	w.cut[clusterB] = true // nothing arrives
	_, err := a.Enable(v.Ref, clusterB)
	w.must(err)
	w.cut[clusterB] = false
	w.must(a.Tick()) // receivers prepared, but nothing shipped yet
	if _, err := b.Failover(v.Ref, true); !errors.Is(err, core.ErrNoSnapshot) {
		t.Fatalf("fail-over of an empty replica: %v, want ErrNoSnapshot", err)
	}
}

// failoverCutOff is an unplanned fail-over: B clones A's protected volume
// while A is cut off, and A stays cut off.
func failoverCutOff(w *world) (v, clone core.Volume) {
	w.t.Helper()
	v = createProtected(w)
	w.cut[clusterA] = true
	clone, err := w.sites[clusterB].Failover(v.Ref, true)
	w.must(err)
	return v, clone
}

// The diverged tail: writes the cut-off site took after the last shipped
// snapshot stay there as a named snapshot and never enter the other site.
func TestTheDivergedTailNeverShips(t *testing.T) {
	w := newWorld(t)
	v, clone := failoverCutOff(w)
	a, b := w.sites[clusterA], w.sites[clusterB]
	w.cut[clusterA] = false
	w.cut[clusterB] = true
	w.run(3 * time.Minute) // A keeps writing and snapshotting, cut off from B
	w.cut[clusterB] = false
	mark := len(w.Sends)
	w.run(3 * time.Minute) // B announces the successor; A learns it
	for _, s := range w.Sends[mark:] {
		if s.Dataset == "vol-"+string(v.Ref.Volume) {
			t.Errorf("superseded %s was asked to ship %s to %s", v.Ref, s.Snapshot, s.Target[:8])
		}
	}
	replica := w.node(clusterB, "b1").Datasets["rep-"+string(v.Ref.Volume)]
	if last := replica[len(replica)-1]; last.GUID != clone.Origin.GUID {
		t.Errorf("B's replica of %s received %s after the fail-over cloned %s", v.Ref, last.Name, clone.Origin.Snapshot)
	}
	got, _ := a.Volume(v.Ref)
	if got.Successor != clone.Ref || got.Tail != core.TailSnapshot(clone.Ref) || got.State == chain.Active {
		t.Errorf("A:v1 after its return: %+v tail %q", got.Member, got.Tail)
	}
	if _, err := b.PrepareReceive(core.ReceiveRequest{Source: v.Ref, Root: v.Ref, Shape: v.Shape}); !errors.Is(err, core.ErrSuperseded) {
		t.Errorf("preparing to receive a superseded member: %v, want ErrSuperseded", err)
	}
}

// Fail-back ships only the delta: B's clone re-aimed at A starts from the
// snapshot it was cloned from, which A holds under the same GUID.
func TestFailbackShipsACloneStreamFromTheCommonSnapshot(t *testing.T) {
	w := newWorld(t)
	v, clone := failoverCutOff(w)
	a, b := w.sites[clusterA], w.sites[clusterB]
	if ready, err := b.Resync(clone.Ref, clusterA); ready || err != nil {
		t.Fatalf("resync toward a cut-off site: ready=%v %v, want not ready", ready, err)
	}
	w.cut[clusterA] = false
	_, err := a.Demote(v.Ref)
	w.must(err)
	mark := len(w.Sends)
	if !resyncUntilReady(w, b, clone.Ref, clusterA) {
		t.Fatal("resync never ready")
	}
	var first *core.SendSpec
	for i := range w.Sends[mark:] {
		if s := w.Sends[mark+i]; s.Dataset == clone.Dataset() && s.Target == clusterA {
			first = &s
			break
		}
	}
	if first == nil {
		t.Fatal("B's clone shipped nothing to A")
	}
	want := clone.Origin.Dataset + "@" + clone.Origin.Snapshot
	if first.Base != want || first.BaseGUID != clone.Origin.GUID {
		t.Errorf("first fail-back stream from %q (%s), want the clone stream from %q (%s)", first.Base, first.BaseGUID, want, clone.Origin.GUID)
	}
	if _, err := b.Resync(clone.Ref, clusterB); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("resync with the end's own site as source: %v, want ErrInvalid", err)
	}
}

func TestCreateVolumeIsIdempotentByName(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	shape := core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Filesystem}
	first := w.create(a, "pvc-1", shape)
	second, err := a.CreateVolume(core.CreateRequest{Name: "pvc-1", Shape: shape})
	if err != nil || second.Ref != first.Ref {
		t.Fatalf("repeat: %s, %v; want %s", second.Ref, err, first.Ref)
	}
	bigger := shape
	bigger.SizeBytes *= 2
	if _, err := a.CreateVolume(core.CreateRequest{Name: "pvc-1", Shape: bigger}); !errors.Is(err, core.ErrExists) {
		t.Fatalf("same name, other size: %v, want ErrExists", err)
	}
	if first.Allocation.Port < 7000 || len(first.Allocation.Replicas) != 2 || first.Primary == "" {
		t.Fatalf("allocation %+v primary %q", first.Allocation, first.Primary)
	}
	other := w.create(a, "pvc-2", shape)
	if other.Allocation.Port == first.Allocation.Port || other.Allocation.Minor == first.Allocation.Minor {
		t.Fatalf("two volumes share port or minor: %+v %+v", first.Allocation, other.Allocation)
	}
}

func TestCreateVolumeRefusesBadRequests(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	for _, tt := range []struct {
		request core.CreateRequest
		want    error
	}{
		{core.CreateRequest{Shape: core.Shape{SizeBytes: 1, PlaceCount: 1, VolumeMode: core.Block}}, core.ErrInvalid},
		{core.CreateRequest{Name: "x", Shape: core.Shape{PlaceCount: 1, VolumeMode: core.Block}}, core.ErrInvalid},
		{core.CreateRequest{Name: "x", Shape: core.Shape{SizeBytes: 1, PlaceCount: 0, VolumeMode: core.Block}}, core.ErrInvalid},
		{core.CreateRequest{Name: "x", Shape: core.Shape{SizeBytes: 1, PlaceCount: 1, VolumeMode: "Raw"}}, core.ErrInvalid},
		{core.CreateRequest{Name: "x", Shape: core.Shape{SizeBytes: 1, PlaceCount: 3, VolumeMode: core.Block}}, core.ErrNoCapacity},
		{core.CreateRequest{Name: "x", Shape: core.Shape{SizeBytes: 1 << 50, PlaceCount: 1, VolumeMode: core.Block}}, core.ErrNoCapacity},
	} {
		if _, err := a.CreateVolume(tt.request); !errors.Is(err, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.request, err, tt.want)
		}
	}
	if vs, _ := a.Members(chain.Ref{}); len(vs) != 0 {
		t.Errorf("refused requests left records")
	}
}

func TestDeleteVolumeDestroysOnlyUnreplicatedVolumes(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	plain := w.create(a, "scratch", core.Shape{SizeBytes: 1 << 20, PlaceCount: 2, VolumeMode: core.Block})
	w.run(2 * time.Second)
	w.must(a.DeleteVolume(plain.Ref))
	w.run(2 * time.Second)
	if _, err := a.Volume(plain.Ref); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("deleted volume still recorded: %v", err)
	}
	for _, n := range []string{"a1", "a2"} {
		if _, ok := w.node(clusterA, n).Datasets[plain.Dataset()]; ok {
			t.Errorf("%s still holds the deleted volume's dataset", n)
		}
	}
	w.must(a.DeleteVolume(plain.Ref)) // idempotent
	protected := createProtected(w)
	if err := a.DeleteVolume(protected.Ref); !errors.Is(err, core.ErrReplicated) {
		t.Fatalf("deleting a replicated volume: %v, want ErrReplicated", err)
	}
}

func TestLearnSuccessorRefusesASecondSuccessor(t *testing.T) {
	w := newWorld(t)
	v := createProtected(w)
	a := w.sites[clusterA]
	one := chain.Ref{Cluster: clusterB, Volume: "b0000000-0000-4000-8000-000000000901"}
	two := chain.Ref{Cluster: clusterB, Volume: "b0000000-0000-4000-8000-000000000902"}
	w.must(a.LearnSuccessor(v.Ref, one))
	w.must(a.LearnSuccessor(v.Ref, one))
	if err := a.LearnSuccessor(v.Ref, two); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("a second successor: %v, want ErrConflict", err)
	}
	if err := a.LearnSuccessor(v.Ref, chain.Ref{Cluster: clusterA, Volume: v.Ref.Volume}); err == nil {
		t.Fatal("a successor on the same site was accepted")
	}
}

// A successor on the member's own site is no fail-over's: the record is
// refused before it fences anything, and the live primary stays writable.
func TestLearnSuccessorOnTheSameSiteLeavesThePrimaryActive(t *testing.T) {
	w := newWorld(t)
	v := createProtected(w)
	a := w.sites[clusterA]
	sameSite := chain.Ref{Cluster: clusterA, Volume: "a0000000-0000-4000-8000-000000000901"}
	if err := a.LearnSuccessor(v.Ref, sameSite); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("a successor on the same site: %v, want ErrInvalid", err)
	}
	got, err := a.Volume(v.Ref)
	w.must(err)
	if got.State != chain.Active || !got.Successor.IsZero() || got.Tail != "" {
		t.Errorf("after a refused successor: %s, successor %q, tail %q; want Active, none, none", got.State, got.Successor, got.Tail)
	}
}

func TestStatusOfAnUnreplicatedVolume(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "plain", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block})
	st, err := a.Status(v.Ref)
	if err != nil || st.Health != core.HealthUnknown || !strings.Contains(st.Message, "not replicated") {
		t.Fatalf("status %+v %v", st, err)
	}
	if _, err := a.Status(chain.Ref{Cluster: clusterB, Volume: v.Ref.Volume}); !errors.Is(err, core.ErrNotLocal) {
		t.Fatalf("status of another site's member: %v, want ErrNotLocal", err)
	}
}

// A member lost before it shipped anything -- right after a relocation made it
// -- still fails over: its origin is the relocation's final snapshot, which
// the old site holds as a snapshot of its own member.
func TestAFailoverBeforeTheFirstShipmentClonesThePredecessorsFinalSnapshot(t *testing.T) {
	w := newWorld(t)
	v1 := createProtected(w)
	a, b := w.sites[clusterA], w.sites[clusterB]
	_, err := a.Demote(v1.Ref)
	w.must(err)
	if !resyncUntilReady(w, a, v1.Ref, clusterA) {
		t.Fatal("final sync never arrived")
	}
	v2, err := b.Failover(v1.Ref, false) // the relocation's promote on B
	w.must(err)
	w.cut[clusterB] = true // B is lost before v2 shipped a byte
	w.must(a.Tick())       // A learns of v2's replica only if B told it: it did not
	if _, err := a.PrepareReceive(core.ReceiveRequest{Source: v2.Ref, Root: v1.Ref, Generation: 1,
		Shape: v2.Shape, OriginGUID: v2.Origin.GUID}); err != nil {
		t.Fatal(err) // what B's Tick would have done had it reached A
	}
	v3, err := a.Failover(v2.Ref, true)
	w.must(err)
	old, _ := a.Volume(v1.Ref)
	if v3.Origin.Dataset != old.Dataset() || v3.Origin.GUID != v2.Origin.GUID || v3.Generation != 2 {
		t.Fatalf("fail-over clone %+v from %+v, want generation 2 from %s@%s", v3.Member, v3.Origin, old.Dataset(), v2.Origin.GUID)
	}
}
