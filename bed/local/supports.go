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
	"moves":    "twelve moves take too long at the operators' pace on a shared machine; not on the local bed yet",
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
