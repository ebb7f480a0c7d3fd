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
