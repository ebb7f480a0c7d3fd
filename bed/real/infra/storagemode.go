package infra

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/deploy/chart"
	"github.com/baton-dr/baton/node/drbd"
)

// StorageMode is how the bed's sites keep their volumes: btrfs (one storage
// node per site, a loop-backed btrfs pool, no DRBD: what runs on a host
// without the ZFS and DRBD modules) or zfs-drbd (two storage nodes per site,
// a ZFS pool on each, DRBD between them inside the site).
type StorageMode string

// The storage modes, as BATON_REALBED_STORAGE and --storage name them.
const (
	StorageBtrfs   StorageMode = "btrfs"
	StorageZFSDRBD StorageMode = "zfs-drbd"
)

// StorageEnv chooses the storage mode; empty is btrfs.
const StorageEnv = "BATON_REALBED_STORAGE"

// ParseStorageMode reads a storage mode's name; "" is btrfs.
func ParseStorageMode(name string) (StorageMode, error) {
	switch StorageMode(name) {
	case "", StorageBtrfs:
		return StorageBtrfs, nil
	case StorageZFSDRBD:
		return StorageZFSDRBD, nil
	}
	return "", fmt.Errorf("storage mode %q: want %s or %s", name, StorageBtrfs, StorageZFSDRBD)
}

// StorageModeFromEnv is the mode BATON_REALBED_STORAGE names.
func StorageModeFromEnv() (StorageMode, error) {
	mode, err := ParseStorageMode(os.Getenv(StorageEnv))
	if err != nil {
		return "", fmt.Errorf("%s: %w", StorageEnv, err)
	}
	return mode, nil
}

// ErrKernelLacksModules is what the zfs-drbd preflight refuses a kernel with.
var ErrKernelLacksModules = errors.New("the host's kernel cannot run zfs-drbd mode")

// Kernel is a kernel's modules as its files show them, under Root: "/" for
// the host's (HostKernel); a test's temporary directory laid out the same
// way is a test double of a kernel.
type Kernel struct{ Root string }

// HostKernel is the kernel this process runs on.
func HostKernel() Kernel { return Kernel{Root: "/"} }

func (k Kernel) path(p string) string { return filepath.Join(k.Root, p) }

// moduleState is where a module stands in a kernel.
type moduleState int

const (
	stateMissing  moduleState = iota
	stateLoadable             // under /lib/modules/<release>, not loaded
	stateLoaded               // in /proc/modules
	stateBuiltIn              // compiled into the kernel
)

// kernelModules is what a kernel says of its modules.
type kernelModules struct {
	release string
	// loadsModules: the kernel has loadable module support (/proc/modules).
	loadsModules bool
	loaded       map[string]bool // /proc/modules
	available    map[string]bool // /lib/modules/<release>/modules.dep
	builtIn      map[string]bool // /lib/modules/<release>/modules.builtin
}

// readModules reads /proc/sys/kernel/osrelease, /proc/modules and the
// release's modules.dep and modules.builtin. A file that is not there says
// nothing (a kernel without module support has no /proc/modules; a host
// need not carry /lib/modules); one that cannot be read is an error.
func (k Kernel) readModules() (kernelModules, error) {
	m := kernelModules{loaded: map[string]bool{}, available: map[string]bool{}, builtIn: map[string]bool{}}
	release, err := os.ReadFile(k.path("proc/sys/kernel/osrelease"))
	if err != nil {
		return m, fmt.Errorf("the kernel's release: %w", err)
	}
	m.release = strings.TrimSpace(string(release))
	proc, err := os.ReadFile(k.path("proc/modules"))
	switch {
	case err == nil:
		m.loadsModules = true
		for name := range procModules(proc) {
			m.loaded[name] = true
		}
	case !errors.Is(err, fs.ErrNotExist):
		return m, err
	}
	dir := path.Join("lib/modules", m.release)
	for file, into := range map[string]map[string]bool{"modules.dep": m.available, "modules.builtin": m.builtIn} {
		data, err := os.ReadFile(k.path(path.Join(dir, file)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return m, err
		}
		for name := range moduleFiles(data) {
			into[name] = true
		}
	}
	return m, nil
}

// procModules are the names /proc/modules lists, the first word of each
// line: "zfs 6225920 7 - Live 0x0000000000000000 (POE)".
func procModules(data []byte) map[string]bool {
	out := map[string]bool{}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for scanner.Scan() {
		if fields := strings.Fields(scanner.Text()); len(fields) > 0 {
			out[normalModule(fields[0])] = true
		}
	}
	return out
}

// moduleFiles are the module names of modules.dep ("updates/dkms/zfs.ko.xz:
// updates/dkms/spl.ko.xz") or modules.builtin ("kernel/drivers/block/drbd/
// drbd.ko") lines: the file name before its first colon, less ".ko" and any
// compression suffix after it.
func moduleFiles(data []byte) map[string]bool {
	out := map[string]bool{}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for scanner.Scan() {
		file, _, _ := strings.Cut(scanner.Text(), ":")
		base := path.Base(strings.TrimSpace(file))
		name, suffix, ok := strings.Cut(base, ".ko")
		if ok && name != "" && (suffix == "" || strings.HasPrefix(suffix, ".")) {
			out[normalModule(name)] = true
		}
	}
	return out
}

// normalModule is a module's name as the kernel compares them: "-" and "_"
// are one.
func normalModule(name string) string { return strings.ReplaceAll(name, "-", "_") }

// state is where the named module stands. A module the kernel lists under
// /sys/module but not in /proc/modules is built in (a kernel without module
// support lists only built-in ones there).
func (k Kernel) state(m kernelModules, name string) moduleState {
	switch {
	case m.loaded[name]:
		return stateLoaded
	case m.builtIn[name]:
		return stateBuiltIn
	}
	if _, err := os.Stat(k.path(path.Join("sys/module", name))); err == nil {
		return stateBuiltIn
	}
	if m.available[name] {
		return stateLoadable
	}
	return stateMissing
}

// why says what a module that is not there lacks, for the refusal.
func (m kernelModules) why(name string, s moduleState) string {
	switch {
	case s == stateLoadable:
		return fmt.Sprintf("%s is built for it but not loaded (modprobe %s)", name, name)
	case !m.loadsModules:
		return fmt.Sprintf("%s is not built in and the kernel loads no modules (no /proc/modules)", name)
	}
	return fmt.Sprintf("%s is neither loaded, built in, nor under /lib/modules/%s", name, m.release)
}

// Preflight checks that the kernel can run the mode, before any cluster is
// made: btrfs needs nothing this checks; zfs-drbd needs the zfs and drbd
// modules loaded or built in, and DRBD 9 (node/drbd drives 8.4 too, but 8.4,
// the kernel's in-tree module, opens its connections in the host's network
// namespace, init_net, never in a kind node's, so the nodes' addresses are
// not its own). It returns what it found, or one error naming everything
// that is missing, wrapping ErrKernelLacksModules.
func (mode StorageMode) Preflight(k Kernel) (string, error) {
	if mode != StorageZFSDRBD {
		return "btrfs: no kernel modules beyond btrfs and loop", nil
	}
	m, err := k.readModules()
	if err != nil {
		return "", fmt.Errorf("zfs-drbd mode: reading the kernel's modules: %w", err)
	}
	var missing, lacks []string
	for _, name := range []string{"zfs", "drbd"} {
		if s := k.state(m, name); s != stateLoaded && s != stateBuiltIn {
			missing, lacks = append(missing, name), append(lacks, m.why(name, s))
		}
	}
	if len(missing) == 2 && !m.loadsModules {
		lacks = []string{"neither is built in and the kernel loads no modules (no /proc/modules)"}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: kernel %s lacks the %s module%s: %s; run on a kernel with both (zfs from zfs-dkms, DRBD 9 from drbd-dkms) or with %s=btrfs",
			ErrKernelLacksModules, m.release, strings.Join(missing, " and "), plural(len(missing)), strings.Join(lacks, "; "), StorageEnv)
	}
	proc, err := os.ReadFile(k.path("proc/drbd"))
	if err != nil {
		return "", fmt.Errorf("%w: kernel %s has the drbd module but its version cannot be read: %w", ErrKernelLacksModules, m.release, err)
	}
	version, err := drbd.ParseProcVersion(proc)
	if err != nil {
		return "", fmt.Errorf("%w: kernel %s: %w", ErrKernelLacksModules, m.release, err)
	}
	if version != drbd.V9 {
		return "", fmt.Errorf("%w: kernel %s has DRBD %s, whose connections live in the host's network namespace, not a kind node's: the bed needs DRBD 9 (drbd-dkms), or %s=btrfs",
			ErrKernelLacksModules, m.release, version, StorageEnv)
	}
	zfsVersion := "?"
	if data, err := os.ReadFile(k.path("sys/module/zfs/version")); err == nil {
		zfsVersion = strings.TrimSpace(string(data))
	}
	return fmt.Sprintf("kernel %s: zfs %s and DRBD %s", m.release, zfsVersion, version), nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// StorageLabel marks a site's storage nodes in kind's node configuration;
// the node DaemonSet of a zfs-drbd site runs where it is.
const StorageLabel = "storage.baton.dev/node"

// zfsDRBDStorageNodes is how many storage nodes a zfs-drbd site has: two,
// DRBD between them inside the site (8.4's limit, and placeCount 2).
const zfsDRBDStorageNodes = 2

// zfsPoolSizeBytes is each zfs-drbd node's pool file.
const zfsPoolSizeBytes = 4 << 30

// workerNode is kind's name of a cluster's i-th worker (from 0):
// <cluster>-worker, <cluster>-worker2, ...
func workerNode(c Cluster, i int) string {
	if i == 0 {
		return c.Name + "-worker"
	}
	return fmt.Sprintf("%s-worker%d", c.Name, i+1)
}

// StorageNodes are the names of the site's nodes that keep a pool: its one
// node in btrfs mode, its two workers in zfs-drbd mode; none for the hub.
func (mode StorageMode) StorageNodes(c Cluster) []string {
	switch {
	case c.Site == "":
		return nil
	case mode == StorageZFSDRBD:
		var out []string
		for i := range zfsDRBDStorageNodes {
			out = append(out, workerNode(c, i))
		}
		return out
	}
	return []string{c.Node()}
}

// NodeNames are the names of the cluster's kind nodes (kindNodes): its
// control plane, then a zfs-drbd site's storage workers.
func (mode StorageMode) NodeNames(c Cluster) []string {
	if mode != StorageZFSDRBD {
		return []string{c.Node()}
	}
	return append([]string{c.Node()}, mode.StorageNodes(c)...)
}

// workerPodCIDR is the i-th worker's pod range: the /24 after the control
// plane's (Cluster.NodePodCIDR), one per node, which its own static CNI
// config hands out (kind's CNI, kindnet, is not served here).
func workerPodCIDR(c Cluster, i int) netip.Prefix {
	addr := c.PodSubnet.Addr().As4()
	addr[2] += byte(i + 1)
	return netip.PrefixFrom(netip.AddrFrom4(addr), 24)
}

func workerCNIConfigPath(c Cluster, paths Paths, i int) string {
	return filepath.Join(paths.Run(), workerNode(c, i)+".conflist")
}

// kindNodes are the cluster's kind nodes: the control plane alone in btrfs
// mode and on the hub; in zfs-drbd mode a site's control plane (which keeps
// the site's host directory, where the CSI controller's sockets live) and two
// storage workers, each with its own CNI config, the host's /dev (zvols and
// DRBD devices appear there, made by the host's kernel), the host's udev
// database (node/zfs waits for a zvol's /dev/zvol link with udevadm) and the
// site's host directory, where its pool file lives ($(NODE_NAME) in the
// chart's values keeps the nodes' files apart).
func (mode StorageMode) kindNodes(c Cluster, paths Paths, controlPlane v1alpha4.Node) []v1alpha4.Node {
	nodes := []v1alpha4.Node{controlPlane}
	if mode != StorageZFSDRBD || c.Site == "" {
		return nodes
	}
	for i := range zfsDRBDStorageNodes {
		nodes = append(nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: NodeImage,
			Labels: map[string]string{StorageLabel: "true"},
			ExtraMounts: []v1alpha4.Mount{
				{HostPath: workerCNIConfigPath(c, paths, i), ContainerPath: "/etc/cni/net.d/10-baton-realbed.conflist", Readonly: true},
				{HostPath: "/dev", ContainerPath: "/dev"},
				{HostPath: "/run/udev", ContainerPath: "/run/udev", Readonly: true},
				{HostPath: paths.SiteState(c.Name), ContainerPath: hostDir},
			}})
	}
	return nodes
}

// writeWorkerCNIConfigs writes each storage worker's CNI config (the
// control plane's is createCluster's).
func (mode StorageMode) writeWorkerCNIConfigs(c Cluster, paths Paths) error {
	if mode != StorageZFSDRBD || c.Site == "" {
		return nil
	}
	for i := range zfsDRBDStorageNodes {
		config, err := cniConfigFor(workerPodCIDR(c, i))
		if err != nil {
			return err
		}
		if err := os.WriteFile(workerCNIConfigPath(c, paths, i), config, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// routedNode is a node as pod routing sees it: its address on the kind
// network and the pod range its CNI config hands out.
type routedNode struct {
	name    string
	address string
	pods    netip.Prefix
}

// podRoutes are the routes each node needs to reach the others' pods (what
// kindnet would add): every other node's pod range via that node's address,
// as `ip route replace` arguments.
func podRoutes(nodes []routedNode) map[string][][]string {
	out := map[string][][]string{}
	for _, n := range nodes {
		for _, other := range nodes {
			if other.name != n.name {
				out[n.name] = append(out[n.name], []string{"route", "replace", other.pods.String(), "via", other.address})
			}
		}
	}
	return out
}

// routePods adds the routes between a zfs-drbd site's nodes (a one-node
// cluster needs none), on every bring-up: a node container that restarted
// has lost them.
func (mode StorageMode) routePods(p *cluster.Provider, c Cluster) error {
	if mode != StorageZFSDRBD || c.Site == "" {
		return nil
	}
	list, err := p.ListNodes(c.Name)
	if err != nil {
		return fmt.Errorf("%s: its nodes: %w", c.Name, err)
	}
	pods := map[string]netip.Prefix{c.Node(): c.NodePodCIDR()}
	for i := range zfsDRBDStorageNodes {
		pods[workerNode(c, i)] = workerPodCIDR(c, i)
	}
	var routed []routedNode
	byName := map[string]nodes.Node{}
	for _, n := range list {
		ip, _, err := n.IP()
		if err != nil {
			return fmt.Errorf("%s: the address of %s: %w", c.Name, n, err)
		}
		prefix, ok := pods[n.String()]
		if !ok {
			return fmt.Errorf("%s: node %s is not one of the bed's (want %s and its workers)", c.Name, n, c.Node())
		}
		routed, byName[n.String()] = append(routed, routedNode{name: n.String(), address: ip, pods: prefix}), n
	}
	for name, routes := range podRoutes(routed) {
		for _, args := range routes {
			if err := byName[name].Command("ip", args...).Run(); err != nil {
				return fmt.Errorf("%s: ip %s on %s: %w", c.Name, strings.Join(args, " "), name, err)
			}
		}
	}
	return nil
}

// zfsDRBDMinors are each site's DRBD minors: /dev/drbdN is the host
// kernel's, which both sites' nodes share, so their ranges must not
// overlap. Ports need not differ: each node has its own network namespace.
var zfsDRBDMinors = map[string]v1alpha1.MinorRange{
	SiteA.Name: {Min: 1000, Max: 24999},
	SiteB.Name: {Min: 25000, Max: 49999},
}

// zfsDRBDMinorStride separates the minors of a site's storage nodes, which
// share the host's kernel as well: the node agent of a site's i-th storage
// node adds i times this to the site's minors (node/drbd.SharedKernel), so
// site A's nodes use 1000-24999 and 51000-74999, site B's 25000-49999 and
// 75000-99999. It is past the end of every site's range.
const zfsDRBDMinorStride = 50000

// siteStorage sets the storage part of the site's chart values for the mode
// and returns the addresses the node agents' stream certificate must name.
// btrfs: the one node, at address, placeCount 1. zfs-drbd: the two storage
// workers (addressOf reads their addresses), a ZFS pool per node named after
// it on a sparse file in the site's host directory (pool names, like DRBD's
// minors, are kernel-wide, and the nodes share the host's kernel), the
// site's own DRBD minors, each node's resources named after it and its
// minors shifted apart (DRBD's names and minors are kernel-wide too),
// placeCount 2, the node DaemonSet on the storage nodes.
func (mode StorageMode) siteStorage(c Cluster, values *chart.Values, address string, addressOf func(node string) (string, error)) ([]net.IP, error) {
	if mode != StorageZFSDRBD {
		values.Storage.Nodes = []chart.StorageNode{{Name: c.Node(), Address: address}}
		values.Storage.Btrfs.PoolSizeBytes = poolSizeBytes
		values.StorageCluster.PlaceCount = 1
		return []net.IP{net.ParseIP(address)}, nil
	}
	values.Storage.Mode = chart.ModeZFSDRBD
	values.Storage.Nodes = nil
	var ips []net.IP
	for _, name := range mode.StorageNodes(c) {
		a, err := addressOf(name)
		if err != nil {
			return nil, err
		}
		offset := uint32(len(values.Storage.Nodes)) * zfsDRBDMinorStride
		values.Storage.Nodes = append(values.Storage.Nodes, chart.StorageNode{Name: name, Address: a, DRBDMinorOffset: offset})
		ips = append(ips, net.ParseIP(a))
	}
	values.Storage.ZFS = chart.ZFS{Dataset: "$(NODE_NAME)/volumes", PoolFile: hostDir + "/$(NODE_NAME).zfs.img", PoolSizeBytes: zfsPoolSizeBytes,
		SharedKernel: true}
	values.StorageCluster.PlaceCount = zfsDRBDStorageNodes
	values.StorageCluster.DRBDMinors = zfsDRBDMinors[c.Name]
	values.Node.NodeSelector = map[string]string{StorageLabel: "true"}
	return ips, nil
}

// kindNodeAddress is a node's address on the bed's network, as kind reads it.
func kindNodeAddress(c Cluster, name string) (string, error) {
	list, err := provider(io.Discard).ListNodes(c.Name)
	if err != nil {
		return "", fmt.Errorf("%s: its nodes: %w", c.Name, err)
	}
	for _, n := range list {
		if n.String() == name {
			ip, _, err := n.IP()
			if err != nil || ip == "" {
				return "", fmt.Errorf("%s: the address of %s: %q, %v", c.Name, name, ip, err)
			}
			return ip, nil
		}
	}
	return "", fmt.Errorf("%s: no node %s (a zfs-drbd site has %s); was the site made in btrfs mode? make realbed-down first",
		c.Name, name, strings.Join(StorageZFSDRBD.StorageNodes(c), " and "))
}
