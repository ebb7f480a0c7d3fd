package main

import (
	"fmt"
	"strings"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/local"
	"github.com/baton-dr/baton/bed/real"
	"github.com/baton-dr/baton/scenarios"
)

// bedRuns says whether a bed of b's type runs sc, and if not, what it lacks:
// a capability the story calls (asked of the bed's type, before a bed is
// made: bed.Can), or the bed declines the story (declined: the wall time
// it would take).
func bedRuns(sc scenarios.Scenario, b bed.Bed, declined bed.Declined) error {
	if err := sc.Lacks(b); err != nil {
		return fmt.Errorf("%s: %w", sc.Name, err)
	}
	return declined.Of(sc.Name)
}

// localRuns says whether the local bed runs sc (bedRuns).
func localRuns(sc scenarios.Scenario) error { return bedRuns(sc, (*local.Bed)(nil), local.Declined) }

// realRuns says whether the real bed runs sc (bedRuns).
func realRuns(sc scenarios.Scenario) error { return bedRuns(sc, (*real.Bed)(nil), real.Declined) }

// localLacking lists, in one line, the scenarios the local bed does not run
// and why, for make localbed's last word; empty when it runs them all.
func localLacking(catalogue []scenarios.Scenario) string { return lackingLine(catalogue, localRuns) }

// realLacking lists, in one line, the scenarios the real bed does not run
// and why, for make realbed's lacking line.
func realLacking(catalogue []scenarios.Scenario) string { return lackingLine(catalogue, realRuns) }

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
