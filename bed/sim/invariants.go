package sim

import (
	"fmt"

	"github.com/baton-dr/baton/bed"
)

// records gathers every chain's members from every site's records: the
// omniscient view no component has, which the checkers judge.
func (w *World) records() bed.Records {
	defer w.unfaulted()()
	out := bed.Records{}
	for _, s := range w.sites {
		volumes, err := s.Store.Volumes()
		if err != nil {
			panic(fmt.Sprintf("bed/sim: %s's memory store failed: %v", s.Name, err))
		}
		for _, v := range volumes {
			out[v.Root] = append(out[v.Root], v.Member)
		}
	}
	return out
}

// CheckChains runs the chain invariants over every chain and returns the
// violations, sorted.
func (w *World) CheckChains() []error {
	chains := w.records()
	var problems []error
	for _, root := range chains.Roots() {
		problems = append(problems, w.checker.Check(root, chains[root])...)
	}
	return problems
}
