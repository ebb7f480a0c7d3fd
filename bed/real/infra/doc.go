// Package infra is the real bed's infrastructure, beneath the bed the
// scenarios drive (package real): the host's checks, the private dockerd's
// network and firewall rule, the kind hub and two kind sites (kind's Go
// API), the images loaded into their nodes, baton's chart installed in each
// site and the sites registered as each other's peers, and teardown, which
// takes everything the bed made away again -- clusters, network, firewall
// rule, the host kernel's DRBD resources and ZFS pools, and every loop
// device the sites' node agents attached. docs/realbed.md says what runs
// where.
package infra
