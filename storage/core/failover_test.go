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
