// Package sim is the simulation bed: a hub and two sites, each with its storage
// nodes, assembled inside one deterministic sim.World. The production logic
// runs in it -- the site control plane (storage/core), the node agent
// (node/agent) over simulated ZFS and DRBD, the CSI driver's services -- and
// every message between components crosses the simulated network, so a
// partition bites everywhere a real one would.
//
// Like the rest of the simulation it runs on one goroutine, in simulated time,
// from one seed: the same seed and the same code replay the same run, byte for
// byte (sim.World's event-log hash proves it).
package sim
