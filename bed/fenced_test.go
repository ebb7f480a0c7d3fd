package bed_test

import (
	"testing"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/storage/chain"
)

// A chain failed over A->B and relocated back: root on A reaped, the clone
// on B demoted by the relocation, the newest member on A active.
func failedOverAndBack(t *testing.T) (a, b chain.ClusterID, records []chain.Member) {
	t.Helper()
	refs := make([]chain.Ref, 3)
	for i, s := range []string{
		"0000000a-0000-4000-8000-00000000000a:c5e4b535-d68b-4195-8ed3-2ac870774f09",
		"0000000b-0000-4000-8000-00000000000b:c232b649-5db2-5556-8231-0d3214426248",
		"0000000a-0000-4000-8000-00000000000a:dea65315-635a-5e23-a014-4735fc68924f",
	} {
		ref, err := chain.ParseRef(s)
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = ref
	}
	root := refs[0]
	return refs[0].Cluster, refs[1].Cluster, []chain.Member{
		{Ref: refs[2], Root: root, Generation: 2, Predecessor: refs[1], State: chain.Active},
		{Ref: refs[0], Root: root, Successor: refs[1], State: chain.Tombstone},
		{Ref: refs[1], Root: root, Generation: 1, Predecessor: refs[0], Successor: refs[2], State: chain.Demoted},
	}
}

func TestTheMemberAnApplicationWritesIsTheNewestOnItsSite(t *testing.T) {
	a, b, records := failedOverAndBack(t)
	if m, fenced := bed.FencedPrimary(records, a); fenced || m.Generation != 2 {
		t.Errorf("on A: member %v fenced %v, want generation 2 active (the reaped root is history)", m, fenced)
	}
	if m, fenced := bed.FencedPrimary(records, b); !fenced || m.State != chain.Demoted {
		t.Errorf("on B: member %v fenced %v, want the demoted clone reported", m, fenced)
	}
	if _, fenced := bed.FencedPrimary(records[:1], b); fenced {
		t.Error("a site with no member of the chain reported a fenced primary")
	}
}
