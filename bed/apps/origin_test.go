package apps

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// The records of a WordPress db relocated from site-a (x, the root) to site-b
// (y), then failed over back to site-a (z) before y shipped anything: z is
// cloned from x's final snapshot, which only x's pairing lists. The old
// primary y, cut off, is still Active and knows no successor.
func relocatedThenFailedOver(t *testing.T) (root chain.Ref, volumes []core.Volume, pairings []core.Pairing) {
	ref := func(s string) chain.Ref {
		r, err := chain.ParseRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	x := ref("0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000a")
	y := ref("0000000b-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000b")
	z := ref("0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000c")
	final := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	volumes = []core.Volume{
		{Member: chain.Member{Ref: z, Root: x, Generation: 2, Predecessor: y, State: chain.Active},
			Origin: core.Origin{Snapshot: "final", GUID: "guid-final"}},
		{Member: chain.Member{Ref: x, Root: x, Successor: y, State: chain.Demoted}},
		{Member: chain.Member{Ref: y, Root: x, Generation: 1, Predecessor: x, State: chain.Active},
			Origin: core.Origin{Snapshot: "final", GUID: "guid-final"}},
	}
	pairings = []core.Pairing{
		{Pairing: replication.Pairing{Source: y, Snapshots: []replication.Snapshot{{Name: "y-1", GUID: "guid-y-1"}}}},
		{Pairing: replication.Pairing{Source: x, Snapshots: []replication.Snapshot{
			{Name: "early", GUID: "guid-early", TakenAt: final.Add(-time.Minute)},
			{Name: "final", GUID: "guid-final", TakenAt: final}}}},
	}
	return x, volumes, pairings
}

func TestOriginTakenAtFindsTheNewestActiveEndsOrigin(t *testing.T) {
	root, volumes, pairings := relocatedThenFailedOver(t)
	want := pairings[1].Snapshots[1].TakenAt
	// Whatever order the sites' records come in (a map's, on the local bed),
	// the end is z, not the cut-off old primary y.
	for shift := range volumes {
		rotated := append(append([]core.Volume{}, volumes[shift:]...), volumes[:shift]...)
		got, err := originIn(root, rotated, pairings)
		if err != nil || !got.Equal(want) {
			t.Fatalf("records rotated by %d: origin %s, %v; want %s", shift, got, err, want)
		}
	}
}

func TestOriginTakenAtSaysWhyItFoundNone(t *testing.T) {
	root, volumes, pairings := relocatedThenFailedOver(t)
	for _, c := range []struct {
		name    string
		volumes []core.Volume
		want    string
	}{
		{"only the root, Active", []core.Volume{{Member: chain.Member{Ref: root, Root: root, State: chain.Active}}}, "no fail-over made it"},
		{"nothing Active", volumes[1:2], "no site records an Active member"},
		{"an end without origin", []core.Volume{{Member: chain.Member{Ref: volumes[0].Ref, Root: root, Generation: 2,
			Predecessor: volumes[2].Ref, State: chain.Active}}}, "records no origin snapshot"},
	} {
		if _, err := originIn(root, c.volumes, pairings); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := originIn(root, volumes, pairings[:1]); err == nil || !strings.Contains(err.Error(), "still lists") {
		t.Errorf("the origin's pairing gone: %v, want an error saying no pairing lists it", err)
	}
}

// records are a site's records as the tests give them.
type records struct {
	volumes  []core.Volume
	pairings []core.Pairing
}

func (r records) Volumes() ([]core.Volume, error)   { return r.volumes, nil }
func (r records) Pairings() ([]core.Pairing, error) { return r.pairings, nil }

// A drill's bubble is cloned from any snapshot a member's pairing lists --
// not only the active end's origin -- and its recovery point is when that
// snapshot was ordered.
func TestSnapshotTakenAtFindsTheBubblesSnapshot(t *testing.T) {
	root, volumes, pairings := relocatedThenFailedOver(t)
	siteA, siteB := records{volumes[:2], pairings[1:]}, records{volumes[2:], pairings[:1]}
	got, err := SnapshotTakenAt(root.String(), "guid-early", siteB, siteA)
	if want := pairings[1].Snapshots[0].TakenAt; err != nil || !got.Equal(want) {
		t.Errorf("the early snapshot: %s, %v; want %s", got, err, want)
	}
	for guid, want := range map[string]string{"guid-gone": "lists a snapshot guid-gone", "": "GUID is empty"} {
		if _, err := SnapshotTakenAt(root.String(), guid, siteA, siteB); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("snapshot %q: %v, want an error saying %q", guid, err, want)
		}
	}
	// A snapshot another chain's pairing lists is no snapshot of this one.
	other := records{pairings: []core.Pairing{{Pairing: replication.Pairing{Source: volumes[0].Ref,
		Snapshots: []replication.Snapshot{{Name: "y-1", GUID: "guid-elsewhere", TakenAt: time.Now()}}}}}}
	if _, err := SnapshotTakenAt(root.String(), "guid-elsewhere", other); err == nil {
		t.Error("a snapshot of a volume no site records as the chain's was taken as the chain's")
	}
}
