package core_test

import (
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// A demoted end (a relocation's old primary) is ready only once a snapshot
// taken after its fence has shipped: the final sync. Reporting it ready
// earlier lets the relocation's fail-over clone from a snapshot that misses
// the last acknowledged writes. Once the successor exists, resync is the new
// end's business.
func TestADemotedEndIsReadyOnlyAfterItsFinalSync(t *testing.T) {
	w := newWorld(t)
	v := createDemoted(w)
	a, b := w.sites[clusterA], w.sites[clusterB]
	if ready, err := a.Resync(v.Ref, clusterA); ready || err != nil {
		t.Fatalf("right after the demote: ready=%v %v, want not ready", ready, err)
	}
	if !resyncUntilReady(w, a, v.Ref, clusterA) {
		t.Fatal("the final sync never arrived")
	}
	demoted, err := a.Volume(v.Ref)
	w.must(err)
	p := pairingOf(t, a, v.Ref)
	final, ok := p.NewestShipped()
	if !ok || final.TakenAt.Before(demoted.FencedAt) {
		t.Fatalf("ready with the newest shipped snapshot %+v, fenced at %s", final, demoted.FencedAt)
	}
	next, err := b.Failover(v.Ref, false)
	w.must(err)
	if _, err := a.Resync(v.Ref, clusterA); !errors.Is(err, core.ErrSuperseded) {
		t.Errorf("resync of %s, followed by %s: %v, want ErrSuperseded", v.Ref, next.Ref, err)
	}
}

// Resync toward a site the end's pairing is not aimed at re-aims it there:
// ready means the fail-back source, not the old target, holds a snapshot
// taken since.
func TestResyncReaimsAPairingAimedElsewhere(t *testing.T) {
	const clusterC chain.ClusterID = "cccccccc-0000-4000-8000-00000000000c"
	w := newWorldOf(t, clusterA, clusterB, clusterC)
	v := createProtected(w) // A ships to B
	a := w.sites[clusterA]
	if !resyncUntilReady(w, a, v.Ref, clusterC) {
		t.Fatal("resync toward C never ready")
	}
	p := pairingOf(t, a, v.Ref)
	if p.Target != clusterC {
		t.Fatalf("ready with the pairing aimed at %s, want %s", p.Target, clusterC)
	}
	dataset := (core.Replica{Source: v.Ref}).Dataset()
	if received := w.node(clusterC, "c1").Datasets[dataset]; len(received) == 0 {
		t.Errorf("ready, yet c1 received nothing of %s", v.Ref)
	}
}
