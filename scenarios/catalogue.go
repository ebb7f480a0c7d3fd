package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/bed"
)

// Scenario is one DR story for one application kind.
type Scenario struct {
	Name  string // "wordpress/failover"
	Kind  bed.Kind
	Story string
	// Needs is what the bed must offer when it is made for the scenario.
	Needs bed.Needs
	run   func(s *Script) error
	// uses checks the capabilities the story calls (bed.Can); nil: none.
	uses func(b bed.Bed) error
}

// Lacks says what b lacks of the capabilities the scenario's story calls,
// nil when it has them all. It asks b's type only: a nil bed of a type is
// asked before a bed is made.
func (sc Scenario) Lacks(b bed.Bed) error {
	if sc.uses == nil {
		return nil
	}
	return sc.uses(b)
}

// What the stories call beyond bed.Bed.
const (
	drilling = "a test fail-over (drill)"
	hubbing  = "the hub's storage requests"
)

func usesDrills(b bed.Bed) error {
	_, err := bed.Can[bed.Driller](b, drilling)
	return err
}

func usesTheHub(b bed.Bed) error {
	_, err := bed.Can[bed.StorageHub](b, hubbing)
	return err
}

// stories are told for every application kind.
var stories = []struct {
	name, story string
	run         func(s *Script) error
	uses        func(b bed.Bed) error
	needs       bed.Needs
}{
	{"protect", "deploy on site A, protect, keep writing: every volume ships and verifies", protect, nil, bed.Needs{}},
	{"relocate", "planned relocation A→B and back: no acknowledged write lost either way", relocateTwice, nil, bed.Needs{}},
	{"failover", "site A cut off, unplanned fail-over to B, A returns, resyncs, and the application fails back", failoverAndBack, nil, bed.Needs{}},
	{"drill", "the application's files on XFS claims, its database a Block claim: a test fail-over on B verifies the replica " +
		"through the bubble's PVs and claims without disturbing replication, then the application relocates to B on it",
		drill, usesDrills, bed.Needs{Objects: true, Claims: true}},
	{"moves", "twelve planned and unplanned moves: a chain of thirteen members that resolves from each site", twelveMoves, nil, bed.Needs{}},
	{"replace", "the site's operator stopped while the application writes, its store restored without the DRBD values, " +
		"started again: every volume adopted from what the nodes run -- none created anew, the same ports, minors and " +
		"node-ids, no resync, no acknowledged write lost", replace, usesReplacement, bed.Needs{}},
}

// hubStories are told once, about the hub and the sites' storage; the
// application that ends them is a WordPress.
var hubStories = []Scenario{
	{Name: "hub/deploy", Kind: bed.WordPress, Needs: bed.Needs{Objects: true, Undeployed: true}, run: hubDeploy, uses: usesTheHub,
		Story: "both sites' storage requested from the hub through OCM, discovered, widened (a new run), approved and Online " +
			"under hub<->site partitions; the request withdrawn, the storage stays and a protected WordPress runs on it"},
}

// Catalogue lists every scenario, sorted by family (the name before the
// slash), each family's stories in the order they are told.
func Catalogue() []Scenario {
	var out []Scenario
	for _, kind := range []bed.Kind{bed.Gitea, bed.WordPress} {
		for _, st := range stories {
			out = append(out, Scenario{Name: string(kind) + "/" + st.name, Kind: kind, Story: st.story, run: st.run, uses: st.uses,
				Needs: st.needs})
		}
	}
	out = append(out, hubStories...)
	slices.SortStableFunc(out, func(a, b Scenario) int { return strings.Compare(family(a.Name), family(b.Name)) })
	return out
}

func family(name string) string {
	f, _, _ := strings.Cut(name, "/")
	return f
}

// Find returns the scenario with that name.
func Find(name string) (Scenario, error) {
	for _, sc := range Catalogue() {
		if sc.Name == name {
			return sc, nil
		}
	}
	return Scenario{}, fmt.Errorf("no scenario %q (see batonctl sim list)", name)
}

func deployAndProtect(s *Script) error {
	if err := s.phase("deploy on "+s.App.Site, func() error { return s.Bed.Deploy(s.App) }); err != nil {
		return err
	}
	if err := s.phase("protect", func() error { return s.Bed.Protect(s.App.Name) }); err != nil {
		return err
	}
	writing := s.about(3 * time.Minute)
	return s.phase("write for "+writing.String(), func() error {
		if err := s.Bed.Run(writing); err != nil {
			return err
		}
		_, err := s.verify(true)
		return err
	})
}

func other(s *Script, site string) string {
	for _, name := range s.Bed.Sites() {
		if name != site {
			return name
		}
	}
	return site
}

func protect(s *Script) error { return deployAndProtect(s) }

func relocateTwice(s *Script) error {
	if err := deployAndProtect(s); err != nil {
		return err
	}
	a, b := s.App.Site, other(s, s.App.Site)
	if err := s.relocate(b); err != nil {
		return err
	}
	writing := s.about(2 * time.Minute)
	if err := s.phase("write for "+writing.String(), func() error { return s.Bed.Run(writing) }); err != nil {
		return err
	}
	return s.relocate(a)
}

func failoverAndBack(s *Script) error {
	if err := deployAndProtect(s); err != nil {
		return err
	}
	a, b := s.App.Site, other(s, s.App.Site)
	if err := s.failover(b); err != nil {
		return err
	}
	away := s.about(2 * time.Minute)
	if err := s.phase("write on "+b+" while "+a+" is away", func() error { return s.Bed.Run(away) }); err != nil {
		return err
	}
	if err := s.phase(a+" returns and resyncs", func() error {
		s.Bed.HealAll()
		return s.Bed.Run(3 * time.Minute)
	}); err != nil {
		return err
	}
	return s.relocate(a)
}

func drill(s *Script) error {
	if err := deployAndProtect(s); err != nil {
		return err
	}
	b := other(s, s.App.Site)
	if err := s.phase("drill on "+b, func() error {
		driller, err := bed.Can[bed.Driller](s.Bed, drilling)
		if err != nil {
			return err
		}
		v, err := driller.Drill(s.App.Name, b)
		if err != nil {
			return err
		}
		if !v.Consistent() {
			return fmt.Errorf("%w: the drill's bubble: %s", ErrVerification, v.String())
		}
		_, err = s.verify(true) // the primary was not disturbed
		return err
	}); err != nil {
		return err
	}
	// Replication went on undisturbed: a planned move onto the replica the
	// drill cloned loses nothing, its claims restored on B as Ramen
	// restores them.
	return s.relocate(b)
}

func twelveMoves(s *Script) error {
	if err := deployAndProtect(s); err != nil {
		return err
	}
	for move := 1; move <= 12; move++ {
		from, err := s.Bed.Where(s.App.Name)
		if err != nil {
			return err
		}
		to := other(s, from)
		if move%4 == 0 {
			if err := s.failover(to); err != nil {
				return err
			}
			if err := s.phase(from+" returns", func() error {
				s.Bed.HealAll()
				return s.Bed.Run(3 * time.Minute)
			}); err != nil {
				return err
			}
		} else if err := s.relocate(to); err != nil {
			return err
		}
	}
	return s.phase("the chain has thirteen members", func() error {
		chains, err := s.Bed.Chains()
		if err != nil {
			return err
		}
		for _, c := range chains {
			if len(c.Members) != 13 {
				return fmt.Errorf("chain %s has %d members, want 13", c.Handle, len(c.Members))
			}
		}
		return nil
	})
}
