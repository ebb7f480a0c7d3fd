package chain_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

func resolve(t *testing.T, d *directory, root chain.Ref) chain.Resolution {
	t.Helper()
	r, err := chain.Resolve(d, both, root)
	if err != nil {
		t.Fatalf("Resolve(%s): %v", root, err)
	}
	return r
}

func TestAPlainVolumeIsItsOwnEnd(t *testing.T) {
	v := moves(0)[0]
	r := resolve(t, newDirectory(v), v.Ref)
	if r.End() != v || !r.Recorded() || !r.Confirmed() || len(r.Walk) != 1 {
		t.Errorf("got end %+v recorded=%v confirmed=%v walk=%d", r.End(), r.Recorded(), r.Confirmed(), len(r.Walk))
	}
}

func TestAHandleWithoutRecordsIsNotRecorded(t *testing.T) {
	root := chain.Ref{Cluster: siteA, Volume: volume(99)}
	r := resolve(t, newDirectory(moves(3)...), root)
	if r.Recorded() || r.End().State != chain.Unknown || r.End().Ref != root {
		t.Errorf("unknown handle: recorded=%v end=%+v, want not recorded and an Unknown root", r.Recorded(), r.End())
	}
}

// The seed's 2026-10-02 WordPress case: after an unplanned fail-over A→B, Ramen
// demotes the old primary on A. Demote must act on A's last member, not on the
// live primary on B.
func TestDemoteActsOnTheLastLocalMemberNotTheRemoteEnd(t *testing.T) {
	chainAB := moves(1) // A:v1 (Demoted, knows B:v2) → B:v2 (Active)
	r := resolve(t, newDirectory(chainAB...), chainAB[0].Ref)

	got, err := r.LastLocal([]chain.ClusterID{siteA})
	if err != nil || got.Ref != chainAB[0].Ref {
		t.Errorf("LastLocal(A) = %s, %v; want A's member %s", got.Ref, err, chainAB[0].Ref)
	}
	if r.End().Ref != chainAB[1].Ref {
		t.Errorf("End = %s, want the live primary %s", r.End().Ref, chainAB[1].Ref)
	}
	// A secret that marks no cluster local keeps the old behaviour: the end.
	if got, _ := r.LastLocal(nil); got.Ref != chainAB[1].Ref {
		t.Errorf("LastLocal(no locals) = %s, want the end %s", got.Ref, chainAB[1].Ref)
	}
}

func TestLastLocalWithoutALocalMemberIsAnError(t *testing.T) {
	v := moves(0)[0]
	r := resolve(t, newDirectory(v), v.Ref)
	if _, err := r.LastLocal([]chain.ClusterID{siteB}); !errors.Is(err, chain.ErrNoLocalMember) {
		t.Errorf("LastLocal(B) on a chain living only on A: %v, want ErrNoLocalMember", err)
	}
}

// A cut-off member does not know it was superseded; its successor knows it.
func TestTheSuccessorsPredecessorLinkSupersedesACutOffMember(t *testing.T) {
	chainAB := moves(1)
	chainAB[0].Successor = chain.Ref{} // A was cut off during the fail-over
	chainAB[0].State = chain.Active    // and still believes it is primary
	r := resolve(t, newDirectory(chainAB...), chainAB[0].Ref)
	if r.End().Ref != chainAB[1].Ref {
		t.Errorf("End = %s (%s), want B's clone %s", r.End().Ref, r.End().State, chainAB[1].Ref)
	}
}

// Rule 6, and the seed's 2026-10-03 case: the ninth move of a volume put its
// clone one hop beyond an 8-hop walk, and the node on the partitioned site
// attached the original. Twelve moves, staged from each site while the other is
// unreachable, resolve through the site's own records to its newest member.
func TestTwelveMovesResolveFromEachSiteWhileTheOtherIsUnreachable(t *testing.T) {
	c := moves(12) // 13 members, the end v13 on A
	end := c[12]
	fromA := resolve(t, newDirectory(c...).cut(siteB), c[0].Ref)
	if fromA.End() != end || len(fromA.Walk) != 13 {
		t.Fatalf("from A: end %s (%s) after %d members, want %s after 13", fromA.End().Ref, fromA.End().State, len(fromA.Walk), end.Ref)
	}
	if fromA.Confirmed() {
		// B's members appear through A's predecessor links, but only B could hold
		// a successor of A's end: the answer is the best known, not a certainty.
		t.Errorf("from A with B cut off: confirmed, want unconfirmed")
	}
	if got, _ := fromA.LastLocal([]chain.ClusterID{siteA}); got != end {
		t.Errorf("from A: LastLocal = %s, want %s", got.Ref, end.Ref)
	}
	for i, m := range fromA.Walk {
		if m.Generation != uint32(i) {
			t.Errorf("walk[%d] = %s generation %d, want %d", i, m.Ref, m.Generation, i)
		}
		if m.Ref.Cluster == siteB && m.State != chain.Unknown {
			t.Errorf("walk[%d] = %s on unreachable B has state %s, want Unknown", i, m.Ref, m.State)
		}
	}

	// Thirteen moves: the end v14 is on B; from B with A cut off.
	c = moves(13)
	fromB := resolve(t, newDirectory(c...).cut(siteA), c[0].Ref)
	if fromB.End() != c[13] {
		t.Errorf("from B: end %s, want %s", fromB.End().Ref, c[13].Ref)
	}
}

func TestAnEndWhoseOtherSiteIsCutOffIsUnconfirmed(t *testing.T) {
	v := moves(0)[0]
	r := resolve(t, newDirectory(v).cut(siteB), v.Ref)
	if r.End() != v || r.Confirmed() {
		t.Errorf("end %s confirmed=%v; want A's volume, unconfirmed while B is cut off", r.End().Ref, r.Confirmed())
	}
	if len(r.Unreachable) != 1 || r.Unreachable[0] != siteB {
		t.Errorf("unreachable = %v, want [B]", r.Unreachable)
	}
}

func TestALoopingPairIsAnErrorNotAHang(t *testing.T) {
	c := moves(1)
	c[1].Successor = c[0].Ref // B:v2 claims A:v1 follows it
	_, err := chain.Resolve(newDirectory(c...), both, c[0].Ref)
	if !errors.Is(err, chain.ErrCycle) {
		t.Errorf("looping pair: %v, want ErrCycle", err)
	}
}

// A loop's error says where it closes and after how many hops, so the
// corrupt record can be found: here the end names the root as its successor.
func TestALoopSaysWhereItClosesAndAfterHowManyHops(t *testing.T) {
	c := moves(3) // A:v1 → B:v2 → A:v3 → B:v4
	c[3].Successor = c[0].Ref
	c[3].State = chain.Demoted
	_, err := chain.Resolve(newDirectory(c...), both, c[0].Ref)
	want := fmt.Sprintf("%s returns to %s after 3 hops", c[3].Ref, c[0].Ref)
	if !errors.Is(err, chain.ErrCycle) || !strings.Contains(err.Error(), want) {
		t.Errorf("a loop back to the root: %v, want ErrCycle saying %q", err, want)
	}
}

func TestTheWalkBoundIsFarAboveRealChains(t *testing.T) {
	if _, err := chain.Resolve(newDirectory(moves(chain.MaxHops)...), both, moves(0)[0].Ref); err != nil {
		t.Errorf("a chain of exactly MaxHops=%d hops: %v", chain.MaxHops, err)
	}
	c := moves(chain.MaxHops + 1)
	if _, err := chain.Resolve(newDirectory(c...), both, c[0].Ref); !errors.Is(err, chain.ErrTooLong) {
		t.Errorf("a chain of MaxHops+1 hops: %v, want ErrTooLong", err)
	}
}

func TestTwoSuccessorsOfOneMemberAreAFork(t *testing.T) {
	c := moves(1)
	rogue := chain.Member{Ref: chain.Ref{Cluster: siteB, Volume: volume(77)}, Root: c[0].Ref,
		Generation: 1, Predecessor: c[0].Ref, State: chain.Active}
	_, err := chain.Resolve(newDirectory(append(c, rogue)...), both, c[0].Ref)
	if !errors.Is(err, chain.ErrForked) {
		t.Errorf("two fail-overs of one member: %v, want ErrForked", err)
	}
}

func TestAClusterAnsweringWithAnotherClustersRecordIsRefused(t *testing.T) {
	c := moves(1)
	d := newDirectory(c...)
	d.records[siteA] = append(d.records[siteA], c[1]) // A claims B's member
	if _, err := chain.Resolve(d, both, c[0].Ref); !errors.Is(err, chain.ErrForeignRecord) {
		t.Errorf("foreign record: %v, want ErrForeignRecord", err)
	}
}

func TestAnInvalidRecordIsRefused(t *testing.T) {
	c := moves(1)
	c[1].Generation = 0 // a clone that claims to be a root
	if _, err := chain.Resolve(newDirectory(c...), both, c[0].Ref); !errors.Is(err, chain.ErrInvalidMember) {
		t.Errorf("invalid record: %v, want ErrInvalidMember", err)
	}
}

func TestAReapedMemberStaysRecordedInItsChain(t *testing.T) {
	c := moves(2) // A:v1 tombstone → B:v2 demoted → A:v3 active
	r := resolve(t, newDirectory(c...), c[0].Ref)
	if !r.Contains(c[0].Ref) || !r.Recorded() {
		t.Errorf("the reaped root must stay part of the recorded chain")
	}
	if r.Contains(chain.Ref{Cluster: siteA, Volume: volume(42)}) {
		t.Errorf("Contains of a stranger")
	}
}

func TestOtherDirectoryErrorsAreNotUnreachable(t *testing.T) {
	_, err := chain.Resolve(failing{}, both, moves(0)[0].Ref)
	if err == nil || errors.Is(err, chain.ErrUnreachable) {
		t.Errorf("a directory failure must fail resolution: %v", err)
	}
}

type failing struct{}

func (failing) Members(chain.ClusterID, chain.Ref) ([]chain.Member, error) {
	return nil, errors.New("permission denied")
}

// TestResolveMatchesANaiveModel compares Resolve with the plainest statement of
// what it should find: the walk goes on while the link to the next member is
// known from either side, over random chains, cut-off members that never
// learned their successor, and unreachable sites.
func TestResolveMatchesANaiveModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iteration := 0; iteration < 2000; iteration++ {
		n := rng.IntN(30)
		c := moves(n)
		for i := range c {
			if rng.IntN(3) == 0 {
				c[i].Successor = chain.Ref{} // never learned of its successor
			}
		}
		d := newDirectory(c...)
		answered := map[chain.ClusterID]bool{siteA: true, siteB: true}
		for _, site := range both {
			if rng.IntN(3) == 0 {
				d.cut(site)
				answered[site] = false
			}
		}
		// The naive model: member i+1 is reached when i's own record names it or
		// i+1's record exists (it names i as predecessor).
		want := 1
		for i := 0; i < n; i++ {
			known := (answered[c[i].Ref.Cluster] && !c[i].Successor.IsZero()) || answered[c[i+1].Ref.Cluster]
			if !known {
				break
			}
			want++
		}
		r, err := chain.Resolve(d, both, c[0].Ref)
		if err != nil {
			t.Fatalf("iteration %d: %v", iteration, err)
		}
		if len(r.Walk) != want {
			t.Fatalf("iteration %d (n=%d, answered=%v): walk of %d, naive model %d", iteration, n, answered, len(r.Walk), want)
		}
		if got := r.End().Ref; got != c[want-1].Ref {
			t.Fatalf("iteration %d: end %s, want %s", iteration, got, c[want-1].Ref)
		}
	}
}

func BenchmarkResolve256MemberChain(b *testing.B) {
	c := moves(chain.MaxHops - 1)
	d := newDirectory(c...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := chain.Resolve(d, both, c[0].Ref); err != nil {
			b.Fatal(err)
		}
	}
}
