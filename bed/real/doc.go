// Package real is the real bed the scenarios drive (bed.Bed): it attaches
// to the kind hub and two kind sites that package infra brought up, with
// baton running in each site as it runs in production (operator, node
// agent on a loop-backed pool, CSI driver, csi-addons), plays the hub and
// Ramen there, runs the applications on the sites' claims, cuts the paths
// between the clusters, and checks the invariants over what the sites
// record. Closing it takes away what its run made. docs/realbed.md says
// what runs where.
package real
