package core

import (
	"reflect"
	"slices"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

// A MemoryStore lends what it lists, sorted the same, and a write after a
// loan leaves the loan as it was: a reader holding it keeps its snapshot.
func TestAMemoryStoreLendsWhatItListsAndAWriteLeavesTheLoan(t *testing.T) {
	store := NewMemoryStore()
	refs := []chain.Ref{{Cluster: "a", Volume: "3"}, {Cluster: "a", Volume: "1"}, {Cluster: "a", Volume: "2"}}
	for _, ref := range refs {
		v := Volume{Member: chain.Member{Ref: ref, Root: ref, State: chain.Active}, Present: []string{"n1"}}
		if err := store.PutVolume(v); err != nil {
			t.Fatal(err)
		}
	}
	listed, err := store.Volumes()
	if err != nil {
		t.Fatal(err)
	}
	lent := store.LendVolumes()
	if !reflect.DeepEqual(listed, lent) {
		t.Fatalf("lent %+v, listed %+v", lent, listed)
	}
	if !slices.IsSortedFunc(lent, func(a, b Volume) int { return chain.CompareRefs(a.Ref, b.Ref) }) {
		t.Fatalf("lent %+v unsorted", lent)
	}
	before := slices.Clone(lent)
	changed := lent[0].clone()
	changed.Present = append(changed.Present, "n2")
	if err := store.PutVolume(changed); err != nil {
		t.Fatal(err)
	}
	if err := store.RemoveVolume(refs[2]); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lent, before) {
		t.Fatalf("a write changed the loan: %+v, was %+v", lent, before)
	}
	again := store.LendVolumes()
	if len(again) != 2 || !slices.Equal(again[0].Present, []string{"n1", "n2"}) {
		t.Fatalf("lent after the writes %+v", again)
	}
	// A list is the caller's own: changing it leaves the next loan alone.
	listed, _ = store.Volumes()
	listed[0].Present[0] = "changed"
	if got := store.LendVolumes(); got[0].Present[0] != "n1" {
		t.Fatalf("a change to a list reached the store: %+v", got)
	}
}
