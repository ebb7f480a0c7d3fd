//go:build !invariants

package core

// invariantsChecked: checkInvariants runs after every decision only in
// builds tagged invariants (go test -tags invariants): it reads every record.
const invariantsChecked = false
