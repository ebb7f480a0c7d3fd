package core_test

import (
	"errors"
	"testing"

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
