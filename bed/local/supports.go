package local

import (
	"fmt"
	"strings"
)

// declined are the stories (the part of a scenario's name after the slash)
// the local bed does not tell although it has every capability they call:
// what a story calls and the bed lacks, bed.Can says (scenarios'
// Scenario.Lacks).
var declined = map[string]string{
	"moves": "twelve moves would take a quarter of an hour of wall time at the sites' pace; not on the local bed yet",
}

// Declines says why the local bed does not tell the scenario's story,
// though it could; nil when it tells it.
func Declines(scenario string) error {
	_, story, _ := strings.Cut(scenario, "/")
	if why, ok := declined[story]; ok {
		return fmt.Errorf("%s: %s", scenario, why)
	}
	return nil
}
