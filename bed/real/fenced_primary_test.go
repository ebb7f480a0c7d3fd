package real

import (
	"strings"
	"testing"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/real/infra"
	"github.com/baton-dr/baton/storage/chain"
)

// A fail-over's chain: the root on A (the old primary, told of its
// successor) and the clone on B the application writes after the move.
func failedOverChain(t *testing.T, clone chain.State) (chain.Ref, map[chain.Ref][]chain.Member) {
	t.Helper()
	root, err := chain.ParseRef("0000000a-0000-4000-8000-00000000000a:c5e4b535-d68b-4195-8ed3-2ac870774f09")
	if err != nil {
		t.Fatal(err)
	}
	successor, err := chain.ParseRef("0000000b-0000-4000-8000-00000000000b:c232b649-5db2-5556-8231-0d3214426248")
	if err != nil {
		t.Fatal(err)
	}
	return root, map[chain.Ref][]chain.Member{root: {
		{Ref: root, Root: root, Successor: successor, State: chain.Demoted},
		{Ref: successor, Root: root, Generation: 1, Predecessor: root, State: clone},
	}}
}

// bedWithAppOn is a bed of two sites and the application wordpress
// running where (stopped: ""), writing the chain of root.
func bedWithAppOn(root chain.Ref, where string) (*Bed, []*apps.App) {
	a := &apps.App{Spec: bed.App{Name: "wordpress"}, Site: where, Volumes: []apps.Volume{{Name: "db", Handle: root.String()}}}
	b := &Bed{options: Options{}.withDefaults(), sites: []*site{{Cluster: infra.SiteA, ID: infra.SiteA.ChartID}, {Cluster: infra.SiteB, ID: infra.SiteB.ChartID}}}
	return b, []*apps.App{a}
}

// The first seed's bug on this bed: the recovered old site's demote fenced
// the clone the application writes on the other site.
func TestADemotedMemberUnderARunningApplicationIsAViolation(t *testing.T) {
	root, records := failedOverChain(t, chain.Demoted)
	b, running := bedWithAppOn(root, infra.SiteB.Site)
	b.checkPrimariesWritable(running, records)
	b.checkPrimariesWritable(running, records) // once per member, however often it is seen
	if len(b.Violations()) != 1 {
		t.Fatalf("violations %v, want one", b.Violations())
	}
	v := b.Violations()[0]
	if v.Invariant != bed.InvariantFencedPrimary || !strings.Contains(v.Message, "wordpress writes db on site-b") ||
		!strings.Contains(v.Message, "is Demoted") {
		t.Errorf("violation %q: %q", v.Invariant, v.Message)
	}
}

// Fences the story itself makes are no violation: the clone active under
// the application on B (the old site's root is fenced: a fail-over does
// that), or the clone demoted once the application stopped (a relocation
// demotes the old primary after its pod is gone).
func TestFencesTheStoryMakesAreNoViolation(t *testing.T) {
	for _, c := range []struct {
		name  string
		clone chain.State
		where string
	}{
		{"the clone active under the application", chain.Active, infra.SiteB.Site},
		{"the application stopped", chain.Demoted, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, records := failedOverChain(t, c.clone)
			b, running := bedWithAppOn(root, c.where)
			b.checkPrimariesWritable(running, records)
			if len(b.Violations()) != 0 {
				t.Errorf("violations %v", b.Violations())
			}
		})
	}
}
