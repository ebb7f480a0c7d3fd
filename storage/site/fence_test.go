package site_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/baton-dr/baton/storage/site"
)

// A fenced node is named to the Primary's node, so its agent may promote
// without it; the secondary's spec names nobody, and unfencing takes it back.
func TestAFencedNodeIsNamedToThePrimaryOnly(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v, err := a.CreateVolume(site.CreateRequest{Name: "db", Shape: site.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: site.Block}})
	w.must(err)
	down, up := "a1", "a2"
	_, err = a.Attach(v.Ref, up)
	w.must(err)
	fenced := func(node string) []string {
		t.Helper()
		spec, err := a.Spec(node)
		w.must(err)
		if len(spec.Volumes) != 1 {
			t.Fatalf("spec of %s: %d volumes, want 1", node, len(spec.Volumes))
		}
		return spec.Volumes[0].FencedPeers
	}
	if got := fenced(up); len(got) != 0 {
		t.Fatalf("before any fencing the primary's spec names %v", got)
	}
	w.must(a.FenceNode(down, true))
	w.must(a.FenceNode(down, true)) // idempotent
	if got := fenced(up); !slices.Equal(got, []string{down}) {
		t.Fatalf("the primary's spec names %v fenced, want [%s]", got, down)
	}
	if got := fenced(down); len(got) != 0 {
		t.Fatalf("the fenced secondary's own spec names %v", got)
	}
	w.must(a.FenceNode(down, false))
	if got := fenced(up); len(got) != 0 {
		t.Fatalf("after unfencing the primary's spec names %v", got)
	}
	if err := a.FenceNode("nowhere", true); !errors.Is(err, site.ErrNotFound) {
		t.Fatalf("fencing an unknown node: %v, want ErrNotFound", err)
	}
}
