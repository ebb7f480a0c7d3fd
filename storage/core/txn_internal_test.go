package core

import (
	"slices"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

// A txn over a MemoryStore keeps what it read: a list it hands on after a
// removal drops the removed record (slices.DeleteFunc, which zeroes what it
// drops) and must not take the removal's chain with it -- a node's report
// removing a destroyed volume made a write of no chain, which panicked
// storageapi's chainwise commit in csi-sanity.
func TestATxnRemovalKeepsItsChainAfterTheCallerEditsItsList(t *testing.T) {
	store := NewMemoryStore()
	refs := []chain.Ref{{Cluster: "a", Volume: "1"}, {Cluster: "a", Volume: "2"}}
	for _, ref := range refs {
		if err := store.PutVolume(Volume{Member: chain.Member{Ref: ref, Root: ref, State: chain.Active}}); err != nil {
			t.Fatal(err)
		}
	}
	tx := &txn{base: store}
	if err := tx.RemoveVolume(refs[0]); err != nil {
		t.Fatal(err)
	}
	listed, err := tx.Volumes()
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(listed, func(v Volume) bool { return v.Ref == refs[0] }) {
		t.Fatalf("listed %v after removing %s", listed, refs[0])
	}
	tx.root()
	if len(tx.writes) != 1 || tx.writes[0].Root != refs[0] {
		t.Fatalf("writes %+v, want the removal of %s in its own chain", tx.writes, refs[0])
	}
}
