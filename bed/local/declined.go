package local

import "github.com/baton-dr/baton/bed"

// Declined are the stories the local bed does not tell although it has
// every capability they call (what a story calls and the bed lacks,
// bed.Can says: scenarios' Scenario.Lacks).
var Declined = bed.Declined{
	"moves": "twelve moves would take a quarter of an hour of wall time at the sites' pace; not on the local bed yet",
}
