package chain

import (
	"fmt"
	"slices"
)

// Checker holds the chain invariants of ARCHITECTURE §7 that records alone can
// show, over everything every cluster records (an omniscient view: the
// simulation's, not a resolver's). It remembers what it saw, because some
// invariants are about history: a reaped member never becomes live again.
type Checker struct {
	states map[Ref]State
}

// NewChecker returns a checker with no history.
func NewChecker() *Checker { return &Checker{states: map[Ref]State{}} }

// Check examines all records of root's chain and returns each broken
// invariant as an error, sorted by message whatever order they were found in.
func (c *Checker) Check(root Ref, records []Member) []error {
	var problems []error
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("chain %s: "+format, append([]any{root}, args...)...))
	}
	byRef := map[Ref]Member{}
	for _, m := range records {
		if err := m.Validate(); err != nil {
			fail("%v", err)
		}
		if m.Root != root {
			fail("member %s belongs to chain %s", m.Ref, m.Root)
		}
		if _, dup := byRef[m.Ref]; dup {
			fail("member %s is recorded twice", m.Ref)
		}
		byRef[m.Ref] = m
	}
	superseded := map[Ref]bool{}
	for _, ref := range sortedRefs(byRef) {
		m := byRef[ref]
		if p, ok := byRef[m.Predecessor]; ok {
			superseded[p.Ref] = true
			if m.Generation != p.Generation+1 {
				fail("%s is generation %d after %s of generation %d", m.Ref, m.Generation, p.Ref, p.Generation)
			}
			if !p.Successor.IsZero() && p.Successor != m.Ref {
				fail("%s names successor %s, but %s names it as predecessor", p.Ref, p.Successor, m.Ref)
			}
		}
		if !m.Successor.IsZero() {
			superseded[m.Ref] = true
			if m.State == Active {
				fail("%s knows its successor %s and is still Active: it must acknowledge no further write", m.Ref, m.Successor)
			}
		}
		if before, ok := c.states[m.Ref]; ok && before == Tombstone && m.State != Tombstone {
			fail("reaped member %s became %s again", m.Ref, m.State)
		}
	}
	var ends []string
	for _, ref := range sortedRefs(byRef) {
		if m := byRef[ref]; !superseded[ref] && m.State != Tombstone {
			ends = append(ends, ref.String())
		}
	}
	if len(ends) > 1 {
		fail("%d members are live ends: %v", len(ends), ends)
	}
	if _, err := walkFrom(root, byRef, mustLinks(byRef, fail)); err != nil {
		fail("%v", err)
	}
	for ref, m := range byRef {
		c.states[ref] = m.State
	}
	slices.SortFunc(problems, func(a, b error) int {
		if a.Error() < b.Error() {
			return -1
		}
		return 1
	})
	return problems
}

func mustLinks(records map[Ref]Member, fail func(string, ...any)) map[Ref]Ref {
	next, err := links(records)
	if err != nil {
		fail("%v", err)
		return map[Ref]Ref{}
	}
	return next
}
