// Package local is the local bed: the scenarios of package scenarios on real
// kube-apiservers and etcds, the real baton-controller, baton-node (btrfs on
// loop files) and baton-csi binaries, each site's processes in a network
// namespace of its own, joined to the other site's by veth pairs on a bridge.
//
// The bed's own process plays the hub and Ramen: it issues the csi-addons
// Replication RPCs in Ramen's order to each site's driver over its unix
// socket, and runs the applications' workload models on the block devices the
// sites' CSI node plugins stage and publish. docs/localbed.md says what runs
// where and what has not landed on this bed yet.
package local
