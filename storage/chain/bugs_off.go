//go:build !baton_bugs

package chain

// stopsShort says whether a walk that took hops hops stops there, short of
// the chain's end: never (rule 5). A build with the baton_bugs tag puts the
// first seed's 8-hop bound here (bugs_on.go, internal/bugs).
func stopsShort(hops int) bool { return false }
