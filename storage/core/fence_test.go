package core_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
)

// A fenced node is named to the Primary's node, so its agent may promote
// without it; the secondary's spec names nobody, and unfencing takes it back.
func TestAFencedNodeIsNamedToThePrimaryOnly(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "db", core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Block})
	down, up := "a1", "a2"
	_, err := a.Attach(v.Ref, up)
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
	if err := a.FenceNode("nowhere", true); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("fencing an unknown node: %v, want ErrNotFound", err)
	}
}

// A node whose DRBD replica stopped connecting to a peer (StandAlone: a split
// brain DRBD dropped the connection on) is recorded on the volume until the
// node reports it connecting again; nodes without DRBD change nothing.
func TestAStandAloneReplicaIsRecorded(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "db", core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Block})
	report := func(node string, connection backend.ConnectionState, withDRBD bool) []string {
		t.Helper()
		status := core.NodeStatus{Node: node, Address: node}
		if withDRBD {
			status.Resources = []backend.ResourceStatus{{Name: v.Dataset(), Role: backend.Secondary, Disk: backend.UpToDate,
				Peers: []backend.PeerStatus{{Node: "other", Connection: connection}}}}
		}
		w.must(a.Report(status))
		got, err := a.Volume(v.Ref)
		w.must(err)
		return got.StandAlone
	}
	if got := report("a2", backend.StandAlone, true); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("after a2 reported StandAlone: %v", got)
	}
	if got := report("a1", backend.StandAlone, true); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("after a1 reported StandAlone too: %v, want sorted [a1 a2]", got)
	}
	if got := report("a2", backend.Connected, false); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("a report without DRBD resources changed the record: %v", got)
	}
	if got := report("a2", backend.Connecting, true); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("after a2 reported Connecting: %v, want [a1]", got)
	}
}
