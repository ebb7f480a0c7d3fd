package main

import (
	"fmt"
	"strings"

	"github.com/baton-dr/baton/bed/local"
	"github.com/baton-dr/baton/bed/real"
	"github.com/baton-dr/baton/scenarios"
)

// localRuns says whether the local bed runs sc, and if not, what it lacks:
// a capability the story calls (asked of the bed's type, before a bed is
// made), or the wall time it would take (local.Declines).
func localRuns(sc scenarios.Scenario) error {
	if err := sc.Lacks((*local.Bed)(nil)); err != nil {
		return fmt.Errorf("%s: %w", sc.Name, err)
	}
	return local.Declines(sc.Name)
}

// localLacking lists, in one line, the scenarios the local bed does not run
// and why, for make localbed's last word; empty when it runs them all.
func localLacking(catalogue []scenarios.Scenario) string { return lackingLine(catalogue, localRuns) }

// realLacking lists, in one line, the scenarios the real bed does not run
// and why (real.Supports), for make realbed's lacking line.
func realLacking(catalogue []scenarios.Scenario) string {
	return lackingLine(catalogue, func(sc scenarios.Scenario) error { return real.Supports(sc.Name) })
}

// lackingLine lists, in one line, the scenarios of catalogue that runs
// refuses and why (its error, less the scenario's name), a story once for
// all its families ("*/drill" where more than one lacks it); empty when
// runs refuses none.
func lackingLine(catalogue []scenarios.Scenario, runs func(scenarios.Scenario) error) string {
	families := map[string][]string{}
	reasons := map[string]string{}
	var order []string
	for _, sc := range catalogue {
		err := runs(sc)
		if err == nil {
			continue
		}
		family, story, _ := strings.Cut(sc.Name, "/")
		if _, seen := families[story]; !seen {
			order = append(order, story)
			reasons[story] = strings.TrimPrefix(err.Error(), sc.Name+": ")
		}
		families[story] = append(families[story], family)
	}
	var out []string
	for _, story := range order {
		family := families[story][0]
		if len(families[story]) > 1 {
			family = "*"
		}
		out = append(out, fmt.Sprintf("%s/%s (%s)", family, story, reasons[story]))
	}
	return strings.Join(out, "; ")
}
