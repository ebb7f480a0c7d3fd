package reports

import (
	"slices"
	"testing"
)

func TestChainProblems(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []Member
		want    []string
	}{
		{"alternating, one active", []Member{
			{Site: "site-a", Generation: 0, State: "Tombstone"},
			{Site: "site-b", Generation: 1, State: "Demoted"},
			{Site: "site-a", Generation: 2, State: "Active"}}, nil},
		{"a hop that stays", []Member{
			{Site: "site-a", Generation: 0, State: "Demoted"},
			{Site: "site-a", Generation: 1, State: "Active"}},
			[]string{"hop 1 stays on site-a: hops must alternate sites"}},
		{"two active ends and a gap", []Member{
			{Site: "site-a", Generation: 0, State: "Active"},
			{Site: "site-b", Generation: 2, State: "Active"}},
			[]string{"generation 2 follows 0", "2 members are Active: at most one may be"}},
	} {
		view := buildChain(Result{}, Chain{Handle: "h", Members: tc.members})
		if !slices.Equal(view.Problems, tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.name, view.Problems, tc.want)
		}
		if len(view.Members) != len(tc.members) || len(view.Hops) != len(tc.members)-1 {
			t.Errorf("%s: %d boxes, %d hops", tc.name, len(view.Members), len(view.Hops))
		}
	}
}

func TestChainRowsPutSiteAOnTop(t *testing.T) {
	view := buildChain(Result{}, Chain{Members: []Member{{Site: "site-b"}, {Site: "site-a", Generation: 1}}})
	if view.Rows[0].Name != "site-a" || view.Members[0].Y <= view.Members[1].Y {
		t.Errorf("rows %+v; site-b's member must sit below site-a's", view.Rows)
	}
}

func TestRefTail(t *testing.T) {
	for ref, want := range map[string]string{
		"":          "",
		"A:v1":      "A:v1",
		"123456789": "123456789",
		"6f1c9a52-3d4e-4b8a-9c07-1e2f3a4b5c6d:82f8ac34-0000-4000-8c34-000082f8ac34": "…82f8ac34",
	} {
		if got := refTail(ref); got != want {
			t.Errorf("refTail(%q) = %q, want %q", ref, got, want)
		}
	}
}
