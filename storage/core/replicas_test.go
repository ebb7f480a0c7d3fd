package core_test

import (
	"slices"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/core"
)

// When a replica's receiving nodes disagree -- b2 lost the newest snapshot
// b1 holds -- the site's holdings (the bases a fail-back delta may start
// from) name only what every receiving node holds, while a drill still
// clones the newest snapshot any of them holds.
func TestReceiversThatDisagreeHoldOnlyWhatEachHolds(t *testing.T) {
	w := newWorld(t)
	v := createProtected(w)
	b := w.sites[clusterB]
	w.cut[clusterA] = true // nothing ships while the nodes disagree
	dataset := (core.Replica{Source: v.Ref}).Dataset()
	b1, b2 := w.node(clusterB, "b1"), w.node(clusterB, "b2")
	received := b1.Datasets[dataset]
	if len(received) < 2 || !slices.Equal(received, b2.Datasets[dataset]) {
		t.Fatalf("b1 received %v, b2 %v: want the same two or more", received, b2.Datasets[dataset])
	}
	newest, older := received[len(received)-1], received[:len(received)-1]
	b2.Datasets[dataset] = slices.Clone(older)
	w.run(2 * time.Second) // the nodes report what they hold

	holdings, err := b.Holdings(v.Ref)
	w.must(err)
	if slices.Contains(holdings, newest.GUID) {
		t.Errorf("B's holdings %v name %s, which b2 lacks", holdings, newest.Name)
	}
	for _, s := range older {
		if !slices.Contains(holdings, s.GUID) {
			t.Errorf("B's holdings %v leave out %s, which both nodes hold", holdings, s.Name)
		}
	}
	bubble, err := b.Drill(core.DrillRequest{Name: "drill", Root: v.Ref})
	w.must(err)
	if bubble.Origin.GUID != newest.GUID {
		t.Errorf("the drill cloned %s, want the newest snapshot any node holds, %s", bubble.Origin.Snapshot, newest.Name)
	}
}
