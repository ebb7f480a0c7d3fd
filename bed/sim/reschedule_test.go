package sim_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/bed"
	bedsim "github.com/baton-dr/baton/bed/sim"
)

// A crash of the node under the application's pod moves the pod to the
// site's other node, whose replica DRBD kept in step: the application finds
// every acknowledged write there and keeps writing; the crashed node comes
// back as a secondary and the application relocates to the other site intact.
func TestAPodLostWithItsNodeRunsOnTheOtherWithEveryAcknowledgedWrite(t *testing.T) {
	for _, kind := range []bed.Kind{bed.WordPress, bed.Gitea} {
		t.Run(string(kind), func(t *testing.T) {
			w, err := bedsim.New(bedsim.Options{Seed: 7, Scenario: "test/pod-node-crash"})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Deploy(bed.App{Name: "app", Kind: kind, Site: "site-a"}); err != nil {
				t.Fatal(err)
			}
			if err := w.Protect("app"); err != nil {
				t.Fatal(err)
			}
			w.Run(time.Minute)
			first, err := w.Pod("app")
			if err != nil {
				t.Fatal(err)
			}
			w.CrashNode("site-a", first)
			w.Run(5 * time.Second)
			if pod, err := w.Pod("app"); err == nil {
				t.Fatalf("the pod runs on %s five seconds after %s crashed under it", pod, first)
			}
			verdict, err := w.Verify("app") // waits for the pod to run again
			if err != nil {
				t.Fatal(err)
			}
			second, err := w.Pod("app")
			if err != nil {
				t.Fatal(err)
			}
			if second == first {
				t.Fatalf("the pod came back on %s, which is down", first)
			}
			if !verdict.Consistent() || verdict.LostAcknowledged() > 0 {
				t.Fatalf("after the move to %s: %s", second, verdict.String())
			}
			w.Run(2 * time.Minute)
			if err := w.RestartNode("site-a", first); err != nil {
				t.Fatal(err)
			}
			w.Run(5 * time.Minute)
			if v := w.Violations(); len(v) > 0 {
				t.Fatalf("%d violations, first: %s: %s", len(v), v[0].Invariant, v[0].Message)
			}
			verdict, err = w.Relocate("app", "site-b")
			if err != nil {
				t.Fatal(err)
			}
			if !verdict.Consistent() || verdict.LostAcknowledged() > 0 {
				t.Fatalf("relocated after the crash: %s", verdict.String())
			}
			if v := w.Violations(); len(v) > 0 {
				t.Fatalf("%d violations, first: %s: %s", len(v), v[0].Invariant, v[0].Message)
			}
		})
	}
}

// A split brain inside a site -- here forced by hand: the secondary promoted
// over a live primary it cannot reach -- is an invariant violation once the
// nodes report their replicas StandAlone.
func TestASplitBrainInsideASiteIsAViolation(t *testing.T) {
	w := newWorld(t, 5)
	a := w.Site("site-a")
	v, other := placedPair(t, w, a)
	write(t, w, a, v.Ref, 0, 'a')
	w.Partition("site-a/node-1", "site-a/node-2", true)
	w.Run(30 * time.Second)
	if err := a.DRBD.Node(other).Primary(v.Dataset(), true); err != nil {
		t.Fatal(err)
	}
	write(t, w, a, v.Ref, 8192, 'b')
	w.HealAll()
	w.Run(time.Minute)
	for _, violation := range w.Violations() {
		if violation.Invariant == "volume: split brain inside a site" {
			return
		}
	}
	t.Fatalf("no split-brain violation; violations: %+v", w.Violations())
}
