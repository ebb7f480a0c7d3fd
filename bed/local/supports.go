package local

import (
	"fmt"
	"strings"
)

// stories are the scenario stories (the part of a scenario's name after the
// slash) the local bed tells; the others need what it lacks yet.
var stories = map[string]string{
	"protect":  "",
	"relocate": "",
	"failover": "",
	"drill":    "test fail-overs (TestFailover on the site's API server) are not on the local bed yet",
	"moves":    "twelve moves would take a quarter of an hour of wall time at the sites' pace; not on the local bed yet",
	"deploy":   "the hub (baton-hub, OCM's work and view agents) is not on the local bed yet",
}

// Supports says whether the local bed runs the named scenario, and if not,
// what it lacks.
func Supports(scenario string) error {
	_, story, _ := strings.Cut(scenario, "/")
	lack, known := stories[story]
	switch {
	case !known:
		return fmt.Errorf("%s: the local bed does not know this story", scenario)
	case lack != "":
		return fmt.Errorf("%s: %s", scenario, lack)
	}
	return nil
}

// Lacking lists, in one line, the scenarios the local bed does not run yet
// and why, for make localbed's last word.
func Lacking(names []string) string {
	families := map[string][]string{}
	var order []string
	for _, name := range names {
		family, story, _ := strings.Cut(name, "/")
		if Supports(name) == nil {
			continue
		}
		if _, seen := families[story]; !seen {
			order = append(order, story)
		}
		families[story] = append(families[story], family)
	}
	var out []string
	for _, story := range order {
		family := families[story][0]
		if len(families[story]) > 1 {
			family = "*"
		}
		reason := stories[story]
		if reason == "" {
			reason = "an unknown story"
		}
		out = append(out, fmt.Sprintf("%s/%s (%s)", family, story, reason))
	}
	return strings.Join(out, "; ")
}
