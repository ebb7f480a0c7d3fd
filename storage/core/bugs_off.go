//go:build !baton_bugs

package core

// findsUndecided: CreateVolume finds a volume whose record lacks its DRBD
// values (its adoption undecided) by its name, and answers ErrAdopting for
// it and for any new volume until adoption decided: a volume it cannot find
// is never created anew. A build with the baton_bugs tag puts the second
// seed's bug here (bugs_on.go, internal/bugs).
func findsUndecided() bool { return true }
