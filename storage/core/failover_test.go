package core_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// A retried fail-over finds the clone its first attempt made and returns it
// as it is now -- here fenced since -- instead of making it anew: a fresh
// Active clone over a fenced one would be a second primary of the chain.
// The clone is the only volume of its site, the first its listing holds.
func TestARetriedFailoverReturnsTheCloneAsItIsNow(t *testing.T) {
	w := newWorld(t)
	_, clone := failoverCutOff(w)
	b := w.sites[clusterB]
	w.run(time.Minute)
	fenced, err := b.Demote(clone.Ref)
	w.must(err)
	again, err := b.Failover(clone.Predecessor, true)
	w.must(err)
	now, err := b.Volume(clone.Ref)
	w.must(err)
	if again.Ref != clone.Ref || again.State != chain.Demoted || !reflect.DeepEqual(now, fenced) {
		t.Errorf("the retried fail-over returned %s (%s), stored %s (%s); want the fenced clone %s as it was",
			again.Ref, again.State, now.Ref, now.State, fenced.Ref)
	}
}

// A clone announces itself to its predecessor's site until that site has
// answered, and not after: once the cut-off site is back and learned its
// successor, a tick sends no further announcement.
func TestAnAnsweredAnnouncementIsNotSentAgain(t *testing.T) {
	w := newWorld(t)
	_, clone := failoverCutOff(w)
	b := w.sites[clusterB]
	w.cut[clusterA] = false
	w.run(10 * time.Second)
	announced, err := b.Volume(clone.Ref)
	w.must(err)
	if !announced.SuccessorAnnounced {
		t.Fatalf("the clone %s was never announced to its healed predecessor's site", clone.Ref)
	}
	_, effects, err := b.Decide().Tick()
	w.must(err)
	for _, r := range effects.Requests {
		if r.Kind == core.AnnounceSuccessor {
			t.Errorf("a tick after the answer announces again: %+v", r)
		}
	}
}

// An answer to an announcement marks the clone announced only when it is
// about the clone's own predecessor, and only once: an answer naming
// another member leaves the clone to be announced again, and the same
// answer a second time writes nothing.
func TestAnAnnouncementsAnswerMustNameThePredecessor(t *testing.T) {
	w := newWorld(t)
	v, clone := failoverCutOff(w)
	b := w.sites[clusterB]
	stranger := chain.Ref{Cluster: clusterA, Volume: "a0000000-0000-4000-8000-000000000977"}
	answer := func(member chain.Ref) core.Effects {
		t.Helper()
		_, effects, err := b.Decide().Answer(core.Answer{Request: core.Request{Kind: core.AnnounceSuccessor,
			Member: member, Successor: clone.Ref, Root: clone.Root}})
		w.must(err)
		return effects
	}
	if effects := answer(stranger); len(effects.Writes) != 0 {
		t.Errorf("an answer about %s, not the clone's predecessor: writes %d records, want none", stranger, len(effects.Writes))
	}
	w.must(core.Commit(b.Store(), answer(v.Ref).Writes))
	got, err := b.Volume(clone.Ref)
	w.must(err)
	if !got.SuccessorAnnounced {
		t.Fatalf("the predecessor's answer did not mark %s announced", clone.Ref)
	}
	if effects := answer(v.Ref); len(effects.Writes) != 0 {
		t.Errorf("the same answer again writes %d records, want none", len(effects.Writes))
	}
}

// Handover names a final snapshot only for a fenced member that no
// successor followed yet: a live primary writes on after any snapshot it
// shipped, and a superseded member's last snapshot is no longer the chain's.
func TestHandoverNamesAFinalSnapshotOnlyForAFencedEnd(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := createProtected(w)
	if h, err := a.Handover(v.Ref); err != nil || h.State != chain.Active || h.Final != "" {
		t.Errorf("Handover of the live primary: %+v, %v; want Active and no final snapshot", h, err)
	}
	_, err := a.Demote(v.Ref)
	w.must(err)
	if !resyncUntilReady(w, a, v.Ref, clusterA) {
		t.Fatal("the final sync never arrived")
	}
	if h, err := a.Handover(v.Ref); err != nil || h.Final == "" {
		t.Fatalf("Handover of the fenced member after its final sync: %+v, %v; want its final snapshot", h, err)
	}
	successor := chain.Ref{Cluster: clusterB, Volume: "b0000000-0000-4000-8000-000000000931"}
	w.must(a.LearnSuccessor(v.Ref, successor))
	if h, err := a.Handover(v.Ref); err != nil || h.Successor != successor || h.Final != "" {
		t.Errorf("Handover of a superseded member: %+v, %v; want its successor and no final snapshot", h, err)
	}
}
