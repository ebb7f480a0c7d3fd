package real

import (
	"fmt"
	"strings"
)

// stories are the scenario stories (the part of a scenario's name after the
// slash) the real bed tells; the others need what it lacks yet, and say
// what.
var stories = map[string]string{
	"protect":  "",
	"relocate": "",
	"failover": "",
	"drill":    "test fail-overs are not supported on the real bed",
	"moves":    "twelve moves are not supported on the real bed (a quarter of an hour of wall time)",
	"deploy":   "the hub's deployment flow (OCM, baton-hub) is not supported on the real bed",
}

// Supports says whether the real bed runs the named scenario, and if not,
// what it lacks.
func Supports(scenario string) error {
	_, story, _ := strings.Cut(scenario, "/")
	lack, known := stories[story]
	switch {
	case !known:
		return fmt.Errorf("%s: the real bed does not know this story", scenario)
	case lack != "":
		return fmt.Errorf("%s: %s", scenario, lack)
	}
	return nil
}

// Lacking lists, in one line, the scenarios of names the real bed does not
// run and why, a story's families folded into "*".
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
