//go:build invariants

package placement

// checkEveryStep is on: every allocator step is checked from the records
// (costs a snapshot per step; for tests and the simulation).
const checkEveryStep = true
