// Package real is the real bed: a kind hub and two kind sites, each site
// running baton as it runs in production (operator, node agent on a
// loop-backed btrfs pool, CSI driver), brought up through kind's Go API on
// the private dockerd of ci/realbed, and torn down so that nothing it made
// is left: clusters, network, firewall rule, and every loop device its node
// agents attached. docs/realbed.md says what runs where.
package real
