package core_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// A member ships only to the other site: a pairing to its own site, or to
// none, is refused and leaves no pairing behind.
func TestEnableRefusesATargetThatIsNotAnotherSite(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "pvc-self", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block})
	for _, target := range []chain.ClusterID{clusterA, ""} {
		if _, err := a.Enable(v.Ref, target); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Enable toward %q: %v, want ErrInvalid", target, err)
		}
	}
	if _, found, err := a.Pairing(v.Ref); err != nil || found {
		t.Errorf("after refused Enables: pairing found=%v, %v; want none", found, err)
	}
}

// Enable is idempotent: once a pairing has shipped, enabling again -- toward
// the same site or another -- returns it as it is. A fresh pairing in its
// place would forget what shipped and start over from a new base.
func TestEnableLeavesAnExistingPairingAlone(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := createProtected(w)
	before, found, err := a.Pairing(v.Ref)
	w.must(err)
	if !found || len(before.Snapshots) == 0 {
		t.Fatalf("a protected volume's pairing: found=%v, %d snapshots; want one that shipped", found, len(before.Snapshots))
	}
	for _, target := range []chain.ClusterID{clusterB, "c0000000-0000-4000-8000-000000000003"} {
		got, err := a.Enable(v.Ref, target)
		w.must(err)
		after, _, err := a.Pairing(v.Ref)
		w.must(err)
		if !reflect.DeepEqual(got, before) || !reflect.DeepEqual(after, before) {
			t.Errorf("Enable toward %s again: returned %+v, stored %+v; want the pairing as it was, %+v", target, got, after, before)
		}
	}
}

// Disable stops a member shipping: its pairing goes, and a second Disable
// is a no-op; the replica on the other site stays, that site's to drop. An
// unknown member is not found.
func TestDisableRemovesOnlyThePairing(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	v := createProtected(w)
	replicasBefore, err := b.Store().Replicas()
	w.must(err)
	w.must(a.Disable(v.Ref))
	w.must(a.Disable(v.Ref))
	if _, found, err := a.Pairing(v.Ref); err != nil || found {
		t.Errorf("after Disable: pairing found=%v, %v; want none", found, err)
	}
	if replicas, err := b.Store().Replicas(); err != nil || len(replicas) != len(replicasBefore) || len(replicas) == 0 {
		t.Errorf("after Disable: B's replicas %d (%v), want the %d it had", len(replicas), err, len(replicasBefore))
	}
	stranger := chain.Ref{Cluster: clusterA, Volume: "a0000000-0000-4000-8000-000000000999"}
	if err := a.Disable(stranger); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Disable of an unknown member: %v, want ErrNotFound", err)
	}
}
