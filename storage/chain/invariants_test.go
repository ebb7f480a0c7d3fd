package chain_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

func TestCheckerAcceptsAHealthyChain(t *testing.T) {
	c := chain.NewChecker()
	for n := 0; n <= 12; n++ {
		if problems := c.Check(moves(0)[0].Ref, moves(n)); len(problems) > 0 {
			t.Fatalf("after %d moves: %v", n, problems)
		}
	}
}

func TestCheckerCatchesBrokenInvariants(t *testing.T) {
	root := moves(0)[0].Ref
	tests := []struct {
		name   string
		mutate func([]chain.Member) []chain.Member
		want   string
	}{
		{"an Active member that knows its successor", func(c []chain.Member) []chain.Member {
			c[0].State = chain.Active
			return c
		}, "still Active"},
		{"two live ends", func(c []chain.Member) []chain.Member {
			return append(c, chain.Member{Ref: chain.Ref{Cluster: siteA, Volume: volume(50)}, Root: root,
				Generation: 1, Predecessor: chain.Ref{Cluster: siteB, Volume: volume(51)}, State: chain.Active})
		}, "live ends"},
		{"a generation gap", func(c []chain.Member) []chain.Member {
			c[2].Generation = 5
			return c
		}, "generation 5"},
		{"a fork", func(c []chain.Member) []chain.Member {
			return append(c, chain.Member{Ref: chain.Ref{Cluster: siteB, Volume: volume(60)}, Root: root,
				Generation: 1, Predecessor: root, State: chain.Demoted, Successor: chain.Ref{Cluster: siteA, Volume: volume(3)}})
		}, "fork"},
		{"a loop", func(c []chain.Member) []chain.Member {
			c = c[:2]
			c[1].Successor = c[0].Ref
			return c
		}, "loops"},
	}
	for _, tt := range tests {
		problems := chain.NewChecker().Check(root, tt.mutate(moves(2)))
		if len(problems) == 0 || !strings.Contains(joined(problems), tt.want) {
			t.Errorf("%s: %v, want a problem mentioning %q", tt.name, problems, tt.want)
		}
	}
}

func TestCheckerRemembersReapedMembers(t *testing.T) {
	c := chain.NewChecker()
	healthy := moves(2)
	if problems := c.Check(healthy[0].Ref, healthy); len(problems) > 0 {
		t.Fatal(problems)
	}
	revived := moves(2)
	revived[0].State = chain.Demoted
	if problems := c.Check(revived[0].Ref, revived); !strings.Contains(joined(problems), "reaped member") {
		t.Errorf("a reaped member came back: %v", problems)
	}
}

func joined(errs []error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}

// The problems come sorted by message, whatever order the checks found them
// in: a run's failure report, and its replay's, list them alike.
func TestCheckerSortsItsProblemsByMessage(t *testing.T) {
	c := moves(2)
	c[0].State = chain.Active // knows its successor and still Active
	c = append(c, chain.Member{Ref: chain.Ref{Cluster: siteB, Volume: volume(50)}, Root: c[0].Ref,
		Generation: 1, Predecessor: chain.Ref{Cluster: siteA, Volume: volume(51)}, State: chain.Active}) // a second live end
	problems := chain.NewChecker().Check(c[0].Ref, c)
	if len(problems) < 2 {
		t.Fatalf("want at least two problems to order, got %v", problems)
	}
	if !slices.IsSortedFunc(problems, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) }) {
		t.Errorf("problems out of order:\n%s", joined(problems))
	}
}
