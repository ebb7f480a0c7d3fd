package infra

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/baton-dr/baton/storage/chain"
)

// Cluster is one kind cluster of the bed and the address ranges it owns.
// No two clusters share a range, so that an address seen from one site
// means one thing on every site (issue 16: with one pod subnet for both,
// site A's controller's pod IP answered, from site B, with B's own).
type Cluster struct {
	// Name is kind's cluster name; its control plane is <Name>-control-plane,
	// its only node but in a zfs-drbd site (StorageMode.kindNodes).
	Name string
	// Site is the scenario's name of the site ("site-a"); "" for the hub.
	Site string
	// PodSubnet is the cluster's pod range; its node's pods get the first
	// /24 (the node's podCIDR), which the static CNI config names.
	PodSubnet netip.Prefix
	// ServiceSubnet is the cluster's service range.
	ServiceSubnet netip.Prefix
	// ChartID is the storage cluster UUID the bed's chart values give the
	// site when the chart makes its StorageCluster (site A; site B with
	// BATON_REALBED_OCM=0). A StorageCluster the hub deploys through OCM
	// draws its own UUID on the site: Infra.StorageClusterID reads the one
	// a site runs, whichever made it.
	ChartID chain.ClusterID
}

// Node is the name of the cluster's control plane (its container too): its
// one node on the hub and in a btrfs site; a zfs-drbd site's storage nodes
// are its workers (StorageMode.StorageNodes).
func (c Cluster) Node() string { return c.Name + "-control-plane" }

// NodePodCIDR is the first /24 of the pod subnet: the podCIDR the
// controller-manager gives the cluster's only node.
func (c Cluster) NodePodCIDR() netip.Prefix {
	return netip.PrefixFrom(c.PodSubnet.Addr(), 24)
}

// The bed's clusters, hub first, and the ranges of the networks around
// them. Every range is inside 10.0.0.0/8, clear of the 172.17.0.0/16 a
// host's docker0 takes and of kind's default 172.18.0.0/16; Check refuses
// to start when the host routes any of them already.
var (
	Hub   = Cluster{Name: "baton-hub", PodSubnet: prefix("10.240.0.0/16"), ServiceSubnet: prefix("10.110.0.0/16")}
	SiteA = Cluster{Name: "baton-site-a", Site: "site-a", PodSubnet: prefix("10.241.0.0/16"), ServiceSubnet: prefix("10.111.0.0/16"),
		ChartID: "0000000a-0000-4000-8000-00000000000a"}
	SiteB = Cluster{Name: "baton-site-b", Site: "site-b", PodSubnet: prefix("10.242.0.0/16"), ServiceSubnet: prefix("10.112.0.0/16"),
		ChartID: "0000000b-0000-4000-8000-00000000000b"}

	// KindSubnet is the docker network the nodes share (KindNetwork): where the
	// sites reach each other and the hub (the nodes' addresses).
	KindSubnet = prefix("10.250.0.0/24")
	// DockerdSubnet is the private dockerd's default bridge (dockerd.sh's
	// DOCKERD_BRIDGE_CIDR); nothing of the bed runs on it.
	DockerdSubnet = prefix("10.254.253.0/24")
)

// Clusters are the bed's clusters, hub first.
func Clusters() []Cluster { return []Cluster{Hub, SiteA, SiteB} }

// Sites are the bed's two sites, the first one where applications start.
func Sites() []Cluster { return []Cluster{SiteA, SiteB} }

// ClusterNames are the kind names of the bed's clusters.
func ClusterNames() []string {
	var out []string
	for _, c := range Clusters() {
		out = append(out, c.Name)
	}
	return out
}

// SiteNames are the kind names of the bed's sites.
func SiteNames() []string {
	var out []string
	for _, c := range Sites() {
		out = append(out, c.Name)
	}
	return out
}

// Bridge names: fixed, so that teardown finds them and one firewall rule
// lets the nodes reach each other (ci/realbed/lib.sh names the same).
const (
	KindBridge    = "br-batonrb"
	DockerdBridge = "batonrb0"
	// KindNetwork is the bed's docker network (kind's
	// KIND_EXPERIMENTAL_DOCKER_NETWORK): not kind's default "kind", which
	// another user's kind cluster on the same dockerd may hold.
	KindNetwork = "baton-realbed"
	// NodeImage is the node image images.sh builds.
	NodeImage = "baton.local/kind-node:v1.37.2"
)

func prefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// Paths are where the bed keeps what it builds and runs, as
// ci/realbed/lib.sh lays them out.
type Paths struct {
	// Cache is ${BATON_CACHE:-$XDG_CACHE_HOME/baton or ~/.cache/baton}/realbed.
	Cache string
}

// DefaultPaths reads the cache directory from the environment as lib.sh does.
func DefaultPaths() (Paths, error) {
	base := os.Getenv("BATON_CACHE")
	if base == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return Paths{}, fmt.Errorf("the real bed's cache: %w", err)
			}
			cache = filepath.Join(home, ".cache")
		}
		base = filepath.Join(cache, "baton")
	}
	return Paths{Cache: filepath.Join(base, "realbed")}, nil
}

// Run holds what a running bed writes: kubeconfigs, kind configs, the CA,
// the pools' images (one directory per site, mounted into its node).
func (p Paths) Run() string { return filepath.Join(p.Cache, "run") }

// Kubeconfig is the cluster's admin kubeconfig.
func (p Paths) Kubeconfig(cluster string) string {
	return filepath.Join(p.Run(), cluster+".kubeconfig")
}

// SiteState is the host directory mounted as the site's node's
// /var/lib/baton-realbed, where its pool's image lives.
func (p Paths) SiteState(cluster string) string { return filepath.Join(p.Run(), cluster, "baton") }

// Tools holds kind and the node's runtime (tools.sh).
func (p Paths) Tools() string { return filepath.Join(p.Cache, "tools") }

// DockerSocket is the private dockerd's socket (dockerd.sh).
func (p Paths) DockerSocket() string { return filepath.Join(p.Cache, "dockerd", "docker.sock") }

// AddonsSocket is the site's CSI controller's csi-addons socket, in the
// site's host directory (site.yaml mounts it there).
func (p Paths) AddonsSocket(cluster string) string {
	return filepath.Join(p.SiteState(cluster), cluster, "csi-controller", "addons.sock")
}

// AppImages is the file ci/realbed/apps/images.sh writes its name=image
// lines to.
func (p Paths) AppImages() string { return filepath.Join(p.Cache, "apps", "images.txt") }
