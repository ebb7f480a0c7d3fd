// Package coretest is a test double of the world around sites' control
// planes, for the tests of every package that runs the core: "paper" node
// agents that keep only dataset and snapshot names (no blocks) and obey each
// NodeSpec the way the real agent does, ZFS's receive rules included; peers
// that reach each other unless cut off; one clock. The real agent and the
// simulated pools replace it in the simulation bed (bed/sim).
//
// A test builds its sites as it needs them -- the core over a memory store,
// over the operator's CRD store, or behind the storage API -- and hands the
// World what its nodes reach of each (Site).
package coretest
