//go:build !invariants

package placement

// checkEveryStep is off: the allocator trusts its indexes. Build with
// -tags invariants to check every step from the records.
const checkEveryStep = false
