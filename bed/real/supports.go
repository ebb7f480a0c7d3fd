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
