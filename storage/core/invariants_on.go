//go:build invariants

package core

// invariantsChecked: this build checks the site's invariants after every
// decision (checkInvariants), against the records it would leave.
const invariantsChecked = true
