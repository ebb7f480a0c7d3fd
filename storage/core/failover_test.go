package core_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
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
