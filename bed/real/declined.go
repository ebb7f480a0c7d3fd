package real

import "github.com/baton-dr/baton/bed"

// Declined are the stories the real bed does not tell although it has
// every capability they call. What a story calls and the bed lacks -- the
// hub's storage requests, the faults beyond partitions -- the Bed does not
// offer, and bed.Can says so before a run (scenarios' Scenario.Lacks).
var Declined = bed.Declined{
	"moves": "twelve moves are not run on the real bed (a quarter of an hour of wall time)",
}
