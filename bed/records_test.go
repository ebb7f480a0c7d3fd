package bed

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

func mustRef(t *testing.T, s string) chain.Ref {
	t.Helper()
	r, err := chain.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Draw walks each chain across the sites' records in the order of the
// roots' names, naming each member's site and its pairing's last sync.
func TestRecordsDrawEveryChainAcrossTheSites(t *testing.T) {
	a, b := chain.ClusterID("0000000a-0000-4000-8000-00000000000a"), chain.ClusterID("0000000b-0000-4000-8000-00000000000b")
	root := mustRef(t, string(a)+":c5e4b535-d68b-4195-8ed3-2ac870774f09")
	clone := mustRef(t, string(b)+":c232b649-5db2-5556-8231-0d3214426248")
	other := mustRef(t, string(a)+":0a000000-d68b-4195-8ed3-2ac870774f09")
	records := Records{
		root: {
			{Ref: clone, Root: root, Generation: 1, Predecessor: root, State: chain.Active},
			{Ref: root, Root: root, Successor: clone, State: chain.Demoted},
		},
		other: {{Ref: other, Root: other, State: chain.Active}},
	}
	if got := records.Roots(); len(got) != 2 || got[0] != other || got[1] != root {
		t.Fatalf("roots %v, want %v then %v", got, other, root)
	}
	if m, _ := records.Members(b, root); len(m) != 1 || m[0].Ref != clone {
		t.Fatalf("members of %s on %s: %v", root, b, m)
	}
	synced := time.Unix(1000, 0)
	drawn, err := records.Draw([]RecordedSite{{Name: "a", Cluster: a, Store: recordsDouble{pairings: []core.Pairing{
		{Pairing: replication.Pairing{Source: root, Last: replication.Sync{At: synced}}}}}},
		{Name: "b", Cluster: b, Store: recordsDouble{}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(drawn) != 2 || drawn[1].Handle != root.String() || len(drawn[1].Members) != 2 {
		t.Fatalf("drawn %+v", drawn)
	}
	first, second := drawn[1].Members[0], drawn[1].Members[1]
	if first.Ref != root.String() || first.Site != "a" || !first.LastSync.Equal(synced) ||
		second.Ref != clone.String() || second.Site != "b" || second.Generation != 1 || !second.LastSync.IsZero() {
		t.Errorf("the chain drawn: %+v", drawn[1].Members)
	}
	if problems := records.Check(chain.NewChecker()); len(problems) != 0 {
		t.Errorf("a well-formed fail-over's chain has problems: %v", problems)
	}
}

// recordsDouble stands in for a site's Store (controllers/site, over an API
// server this package's tests do not start): fixed records.
type recordsDouble struct {
	volumes  []core.Volume
	pairings []core.Pairing
}

func (d recordsDouble) Volumes() ([]core.Volume, error)   { return d.volumes, nil }
func (d recordsDouble) Pairings() ([]core.Pairing, error) { return d.pairings, nil }

// Records gathers the members by their chain's root, keeping only the
// roots Keep holds; Chains draws just those.
func TestRecordedSitesKeepTheChainsAsked(t *testing.T) {
	root := mustRef(t, "0000000a-0000-4000-8000-00000000000a:c5e4b535-d68b-4195-8ed3-2ac870774f09")
	other := mustRef(t, "0000000a-0000-4000-8000-00000000000a:0a000000-d68b-4195-8ed3-2ac870774f09")
	store := recordsDouble{volumes: []core.Volume{{Member: chain.Member{Ref: root, Root: root, State: chain.Active}},
		{Member: chain.Member{Ref: other, Root: other, State: chain.Active}}}}
	sites := []RecordedSite{{Name: "a", Cluster: root.Cluster, Store: store}}
	all, err := RecordedSites{Sites: sites}.Records()
	if err != nil || len(all) != 2 {
		t.Fatalf("all records: %v, %v", all, err)
	}
	kept := RecordedSites{Sites: sites, Keep: func(r chain.Ref) bool { return r == root }}
	ours, err := kept.Records()
	if err != nil || len(ours) != 1 || len(ours[root]) != 1 {
		t.Fatalf("the kept records: %v, %v", ours, err)
	}
	drawn, err := kept.Chains()
	if err != nil || len(drawn) != 1 || drawn[0].Handle != root.String() || len(drawn[0].Members) != 1 ||
		drawn[0].Members[0].Site != "a" {
		t.Fatalf("the kept chains drawn: %+v, %v", drawn, err)
	}
}
