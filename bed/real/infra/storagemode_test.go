package infra

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/deploy/chart"
)

// fakeKernel is a test double of a kernel: a temporary directory laid out as
// the files Preflight reads (proc/sys/kernel/osrelease, proc/modules,
// proc/drbd, sys/module/*, lib/modules/<release>/modules.dep and
// modules.builtin), made from files (path -> contents; a path ending in "/"
// is a directory). No kernel here has zfs or drbd; this one says what a
// kernel with them would.
func fakeKernel(t *testing.T, files map[string]string) Kernel {
	t.Helper()
	root := t.TempDir()
	for name, contents := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Kernel{Root: root}
}

const (
	release      = "6.1.0-28-amd64"
	procZFS      = "zfs 6225920 7 - Live 0x0000000000000000 (POE)\nspl 118784 1 zfs, Live 0x0000000000000000 (OE)\n"
	procDRBD     = "drbd 430080 0 - Live 0x0000000000000000\nlru_cache 16384 1 drbd, Live 0x0000000000000000\n"
	procDRBD9    = "version: 9.2.12 (api:2/proto:86-122)\nGIT-hash: 1b7a9ee4c6b43b8f4e3d9c8b4b6e1a3e0a1e3f4b build by root@host\nTransports (api:21): tcp (9.2.12)\n"
	procDRBD84   = "version: 8.4.11 (api:1/proto:86-101)\nsrcversion: 2DCD1FF2B5E7D1D0A8A4B5E\n"
	modulesDep   = "kernel/fs/btrfs/btrfs.ko.xz: kernel/lib/zstd/zstd_compress.ko.xz\nupdates/dkms/zfs.ko.xz: updates/dkms/spl.ko.xz\nupdates/dkms/spl.ko.xz:\nkernel/drivers/block/drbd/drbd.ko.xz: kernel/lib/lru_cache.ko.xz\n"
	modulesDepNo = "kernel/fs/btrfs/btrfs.ko.xz: kernel/lib/zstd/zstd_compress.ko.xz\n"
)

func TestZFSDRBDPreflightReadsTheKernelsModules(t *testing.T) {
	// with is files on a kernel of the release.
	with := func(files map[string]string) map[string]string {
		files["proc/sys/kernel/osrelease"] = release + "\n"
		return files
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		// ok is what a passing check says; refused are the words a refusal
		// must carry, absent the words it must not.
		ok      string
		refused []string
		absent  []string
	}{
		{
			// This host: a kernel without loadable modules, no /lib/modules.
			name:    "no module support (this host)",
			files:   map[string]string{"proc/sys/kernel/osrelease": "6.18.44-fc-v669\n", "sys/module/loop/": ""},
			refused: []string{"the host's kernel cannot run zfs-drbd mode: kernel 6.18.44-fc-v669 lacks the zfs and drbd modules: neither is built in and the kernel loads no modules (no /proc/modules)", "BATON_REALBED_STORAGE=btrfs"},
		},
		{
			name: "both loaded, DRBD 9",
			files: with(map[string]string{"proc/modules": procZFS + procDRBD, "proc/drbd": procDRBD9,
				"sys/module/zfs/version": "2.2.7-1\n", "sys/module/drbd/": ""}),
			ok: "kernel " + release + ": zfs 2.2.7-1 and DRBD 9",
		},
		{
			name:  "drbd built in (modules.builtin), zfs loaded",
			files: with(map[string]string{"proc/modules": procZFS, "lib/modules/" + release + "/modules.builtin": "kernel/drivers/block/drbd/drbd.ko\n", "proc/drbd": procDRBD9}),
			ok:    "kernel " + release + ": zfs ? and DRBD 9",
		},
		{
			name:    "DRBD 8.4, the in-tree module",
			files:   with(map[string]string{"proc/modules": procZFS + procDRBD, "proc/drbd": procDRBD84}),
			refused: []string{"has DRBD 8.4", "host's network namespace", "needs DRBD 9"},
		},
		{
			name:    "drbd loadable, not loaded",
			files:   with(map[string]string{"proc/modules": procZFS, "lib/modules/" + release + "/modules.dep": modulesDep}),
			refused: []string{"lacks the drbd module:", "drbd is built for it but not loaded (modprobe drbd)"},
			absent:  []string{"zfs is", "zfs and drbd"},
		},
		{
			name:    "zfs nowhere, drbd loaded",
			files:   with(map[string]string{"proc/modules": procDRBD, "proc/drbd": procDRBD9, "lib/modules/" + release + "/modules.dep": modulesDepNo}),
			refused: []string{"lacks the zfs module:", "zfs is neither loaded, built in, nor under /lib/modules/" + release},
			absent:  []string{"drbd is"},
		},
		{
			name:    "neither loadable nor loaded",
			files:   with(map[string]string{"proc/modules": "btrfs 1777664 0 - Live 0x0\n"}),
			refused: []string{"lacks the zfs and drbd modules", "zfs is neither loaded", "drbd is neither loaded"},
		},
		{
			name:    "drbd loaded but /proc/drbd is not its",
			files:   with(map[string]string{"proc/modules": procZFS + procDRBD, "proc/drbd": "GIT-hash: 1b7a9ee\n"}),
			refused: []string{"/proc/drbd does not start with its version"},
		},
		{
			name:    "drbd loaded, no /proc/drbd",
			files:   with(map[string]string{"proc/modules": procZFS + procDRBD}),
			refused: []string{"has the drbd module but its version cannot be read"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StorageZFSDRBD.Preflight(fakeKernel(t, tc.files))
			if tc.ok != "" {
				if err != nil || got != tc.ok {
					t.Fatalf("got %q, %v; want %q", got, err, tc.ok)
				}
				return
			}
			if !errors.Is(err, ErrKernelLacksModules) {
				t.Fatalf("got %q, %v; want a refusal", got, err)
			}
			for _, want := range tc.refused {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal lacks %q: %v", want, err)
				}
			}
			for _, not := range tc.absent {
				if strings.Contains(err.Error(), not) {
					t.Errorf("the refusal names %q, which the kernel has: %v", not, err)
				}
			}
		})
	}
}

// TestBtrfsModeChecksNoModules: btrfs mode runs on this host's kernel, and a
// kernel whose files cannot be read does not stop it.
func TestBtrfsModeChecksNoModules(t *testing.T) {
	if _, err := StorageBtrfs.Preflight(Kernel{Root: filepath.Join(t.TempDir(), "absent")}); err != nil {
		t.Fatal(err)
	}
	if _, err := StorageZFSDRBD.Preflight(Kernel{Root: filepath.Join(t.TempDir(), "absent")}); err == nil ||
		!strings.Contains(err.Error(), "the kernel's release") {
		t.Errorf("zfs-drbd on an unreadable kernel: %v", err)
	}
}

func TestStorageModesByName(t *testing.T) {
	for name, want := range map[string]StorageMode{"": StorageBtrfs, "btrfs": StorageBtrfs, "zfs-drbd": StorageZFSDRBD} {
		if got, err := ParseStorageMode(name); err != nil || got != want {
			t.Errorf("%q: %q, %v", name, got, err)
		}
	}
	for _, name := range []string{"zfs", "ZFS-DRBD", "drbd"} {
		if _, err := ParseStorageMode(name); err == nil || !strings.Contains(err.Error(), "want btrfs or zfs-drbd") {
			t.Errorf("%q: %v", name, err)
		}
	}
	t.Setenv(StorageEnv, "lvm")
	if _, err := StorageModeFromEnv(); err == nil || !strings.Contains(err.Error(), StorageEnv) {
		t.Errorf("a bad %s: %v", StorageEnv, err)
	}
}

// FuzzKernelModuleLists: /proc/modules, modules.dep and modules.builtin are
// the host's text; no line of them panics the reader, and a name read back
// is never empty.
func FuzzKernelModuleLists(f *testing.F) {
	f.Add([]byte(procZFS + procDRBD))
	f.Add([]byte(modulesDep))
	f.Add([]byte("kernel/drivers/block/drbd/drbd.ko\n.ko\n:\n\x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, names := range []map[string]bool{procModules(data), moduleFiles(data)} {
			if names[""] {
				t.Errorf("an empty module name from %q", data)
			}
		}
	})
}

// TestZFSDRBDSitesHaveTwoStorageWorkers: a zfs-drbd site is a control plane
// and two labelled storage workers, each with the host's /dev and udev
// database, the site's host directory and its own pod range; the hub and a
// btrfs site stay one node.
func TestZFSDRBDSitesHaveTwoStorageWorkers(t *testing.T) {
	paths := Paths{Cache: t.TempDir()}
	if err := os.MkdirAll(paths.Run(), 0o755); err != nil {
		t.Fatal(err)
	}
	if n := len(kindConfig(Hub, paths, StorageZFSDRBD).Nodes); n != 1 {
		t.Errorf("the hub has %d nodes in zfs-drbd mode", n)
	}
	if n := len(kindConfig(SiteA, paths, StorageBtrfs).Nodes); n != 1 {
		t.Errorf("a btrfs site has %d nodes", n)
	}
	for _, c := range Sites() {
		config := kindConfig(c, paths, StorageZFSDRBD)
		if len(config.Nodes) != 3 || config.Nodes[0].Role != v1alpha4.ControlPlaneRole {
			t.Fatalf("%s: nodes %+v", c.Name, config.Nodes)
		}
		if got := StorageZFSDRBD.StorageNodes(c); !slices.Equal(got, []string{c.Name + "-worker", c.Name + "-worker2"}) {
			t.Errorf("%s: storage nodes %v", c.Name, got)
		}
		if got := StorageZFSDRBD.NodeNames(c); !slices.Equal(got, []string{c.Node(), c.Name + "-worker", c.Name + "-worker2"}) {
			t.Errorf("%s: nodes %v", c.Name, got)
		}
		ranges := map[netip.Prefix]string{c.NodePodCIDR(): c.Node()}
		if err := StorageZFSDRBD.writeWorkerCNIConfigs(c, paths); err != nil {
			t.Fatal(err)
		}
		for i, n := range config.Nodes[1:] {
			if n.Role != v1alpha4.WorkerRole || n.Labels[StorageLabel] != "true" || n.Image != NodeImage {
				t.Errorf("%s worker %d: %+v", c.Name, i, n)
			}
			mounts := map[string]v1alpha4.Mount{}
			for _, m := range n.ExtraMounts {
				mounts[m.ContainerPath] = m
			}
			if mounts["/dev"].HostPath != "/dev" || !mounts["/run/udev"].Readonly || mounts[hostDir].HostPath != paths.SiteState(c.Name) {
				t.Errorf("%s worker %d mounts %+v", c.Name, i, n.ExtraMounts)
			}
			pods := workerPodCIDR(c, i)
			if other, ok := ranges[pods]; ok || !c.PodSubnet.Contains(pods.Addr()) {
				t.Errorf("%s worker %d: pod range %s (shared with %q, or outside %s)", c.Name, i, pods, other, c.PodSubnet)
			}
			ranges[pods] = string(n.Role)
			conf, err := os.ReadFile(mounts["/etc/cni/net.d/10-baton-realbed.conflist"].HostPath)
			if err != nil || !strings.Contains(string(conf), `"subnet": "`+pods.String()+`"`) {
				t.Errorf("%s worker %d: its CNI config %v: %s", c.Name, i, err, conf)
			}
		}
		if config.Nodes[0].Labels[StorageLabel] != "" {
			t.Errorf("%s: the control plane is labelled a storage node", c.Name)
		}
	}
}

// TestPodRoutesReachEveryOtherNode: each node routes each other node's pod
// range via that node, and never its own.
func TestPodRoutesReachEveryOtherNode(t *testing.T) {
	nodes := []routedNode{
		{name: "cp", address: "10.250.0.2", pods: prefix("10.241.0.0/24")},
		{name: "w1", address: "10.250.0.3", pods: prefix("10.241.1.0/24")},
		{name: "w2", address: "10.250.0.4", pods: prefix("10.241.2.0/24")},
	}
	routes := podRoutes(nodes)
	want := map[string]string{
		"cp": "route replace 10.241.1.0/24 via 10.250.0.3|route replace 10.241.2.0/24 via 10.250.0.4",
		"w1": "route replace 10.241.0.0/24 via 10.250.0.2|route replace 10.241.2.0/24 via 10.250.0.4",
		"w2": "route replace 10.241.0.0/24 via 10.250.0.2|route replace 10.241.1.0/24 via 10.250.0.3",
	}
	for name, w := range want {
		var got []string
		for _, r := range routes[name] {
			got = append(got, strings.Join(r, " "))
		}
		if strings.Join(got, "|") != w {
			t.Errorf("%s: %v, want %s", name, got, w)
		}
	}
	if len(podRoutes(nodes[:1])["cp"]) != 0 {
		t.Error("a one-node cluster gets routes")
	}
}

// zpoolName is zpool's rule for a pool's name (zfs_namecheck's pool_namecheck):
// a letter first, then letters, digits, "_", "-", ".", ":"; not a vdev
// type's name, nor c<digit> (a Solaris disk's).
var zpoolName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.:-]*$`)

// TestZFSDRBDSiteValuesRenderThroughTheChart: the values the bed gives a
// zfs-drbd site, rendered by the chart's Go API, run the zfs backend and
// DRBD on exactly the two storage workers, each on a pool of its own, with
// the site's own DRBD minors; and btrfs mode's values are what the bed gave
// before (one node at the node's address, placeCount 1).
func TestZFSDRBDSiteValuesRenderThroughTheChart(t *testing.T) {
	addresses := map[string]string{
		"baton-site-a-worker": "10.250.0.5", "baton-site-a-worker2": "10.250.0.6",
		"baton-site-b-worker": "10.250.0.7", "baton-site-b-worker2": "10.250.0.8",
	}
	addressOf := func(node string) (string, error) {
		if a, ok := addresses[node]; ok {
			return a, nil
		}
		return "", errors.New("no node " + node)
	}
	minors := map[string]v1alpha1.MinorRange{}
	type nodeMinors struct {
		node        string
		first, last int64 // on the host's kernel
	}
	var kernelMinors []nodeMinors
	for _, c := range Sites() {
		values := siteValues(t, c)
		ips, err := StorageZFSDRBD.siteStorage(c, &values, "10.250.0.2", addressOf)
		if err != nil {
			t.Fatal(err)
		}
		workers := StorageZFSDRBD.StorageNodes(c)
		if len(ips) != 2 || ips[0].String() != addresses[workers[0]] || ips[1].String() != addresses[workers[1]] {
			t.Errorf("%s: the stream certificate would name %v, not the storage workers", c.Name, ips)
		}
		r, err := chart.Render(context.Background(), values, chart.Release{})
		if err != nil {
			t.Fatal(err)
		}
		var cluster v1alpha1.StorageCluster
		var nodes []string
		var ds appsv1.DaemonSet
		for _, o := range r.Objects {
			switch o.GetKind() {
			case "StorageCluster":
				fromUnstructured(t, o.Object, &cluster)
			case "StorageNode":
				var n v1alpha1.StorageNode
				fromUnstructured(t, o.Object, &n)
				nodes = append(nodes, n.Spec.NodeName+"@"+n.Spec.Address)
			case "DaemonSet":
				fromUnstructured(t, o.Object, &ds)
			}
		}
		if cluster.Spec.Pool.Backend != v1alpha1.BackendZFSDRBD || cluster.Spec.PlaceCount != 2 {
			t.Errorf("%s: StorageCluster %+v", c.Name, cluster.Spec)
		}
		if p := cluster.Spec.DRBDPorts; p.Min != 7000 || p.Max != 7999 {
			t.Errorf("%s: DRBD ports %+v", c.Name, p)
		}
		minors[c.Name] = cluster.Spec.DRBDMinors
		// The kernel's minors of each node: the site's range shifted by the
		// node's offset (node/drbd.SharedKernel).
		for _, n := range values.Storage.Nodes {
			m := cluster.Spec.DRBDMinors
			off := int64(n.DRBDMinorOffset)
			kernelMinors = append(kernelMinors, nodeMinors{n.Name, int64(m.Min) + off, int64(m.Max) + off})
		}
		if want := []string{workers[0] + "@" + addresses[workers[0]], workers[1] + "@" + addresses[workers[1]]}; !slices.Equal(nodes, want) {
			t.Errorf("%s: StorageNodes %v, want %v", c.Name, nodes, want)
		}
		// The DaemonSet runs where the kind config's labels say: on both
		// workers, not on the control plane.
		for i, n := range kindConfig(c, Paths{Cache: "/cache"}, StorageZFSDRBD).Nodes {
			selected := true
			for k, v := range ds.Spec.Template.Spec.NodeSelector {
				selected = selected && n.Labels[k] == v
			}
			if selected != (i > 0) {
				t.Errorf("%s: node %d (%s) selected %v by %v", c.Name, i, n.Role, selected, ds.Spec.Template.Spec.NodeSelector)
			}
		}
		spec := ds.Spec.Template.Spec
		if !spec.HostNetwork {
			t.Errorf("%s: the node pods are not on the host's network (DRBD's ports)", c.Name)
		}
		agent := spec.Containers[0]
		for _, want := range []string{"--backend=zfs", "--zfs-dataset=$(NODE_NAME)/volumes", "--zfs-pool-file=" + hostDir + "/$(NODE_NAME).zfs.img",
			"--pool-size-bytes=4294967296", "--drbd-config-dir=" + hostDir + "/" + c.Name + "/drbd/$(NODE_NAME)",
			"--drbd-resource-suffix=$(NODE_NAME)", "--drbd-minor-offset=" + workers[0] + "=0," + workers[1] + "=50000"} {
			if !slices.Contains(agent.Args, want) {
				t.Errorf("%s: baton-node lacks %s: %v", c.Name, want, agent.Args)
			}
		}
		for _, w := range workers {
			if !zpoolName.MatchString(w) || strings.HasPrefix(w, "mirror") || strings.HasPrefix(w, "raidz") || strings.HasPrefix(w, "spare") || strings.HasPrefix(w, "log") {
				t.Errorf("%s: %s is no zpool name", c.Name, w)
			}
		}
		var hooked []string
		for _, h := range r.Hooks {
			var pod corev1.Pod
			fromUnstructured(t, h.Object, &pod)
			hooked = append(hooked, pod.Spec.NodeName)
		}
		if !slices.Equal(hooked, workers) {
			t.Errorf("%s: the module checks run on %v, not the storage workers %v", c.Name, hooked, workers)
		}
	}
	a, b := minors[SiteA.Name], minors[SiteB.Name]
	if a.Min > a.Max || b.Min > b.Max || !(a.Max < b.Min || b.Max < a.Min) {
		t.Errorf("the sites' DRBD minors overlap on the shared kernel: %+v and %+v", a, b)
	}
	if len(kernelMinors) != 4 {
		t.Fatalf("kernel minors %v, want four nodes'", kernelMinors)
	}
	for i, x := range kernelMinors {
		if x.last > 1<<20-1 {
			t.Errorf("%s's minors end at %d, past the kernel's last", x.node, x.last)
		}
		for _, y := range kernelMinors[i+1:] {
			if !(x.last < y.first || y.last < x.first) {
				t.Errorf("on the host's kernel %s's minors %d-%d overlap %s's %d-%d", x.node, x.first, x.last, y.node, y.first, y.last)
			}
		}
	}

	values := siteValues(t, SiteA)
	ips, err := StorageBtrfs.siteStorage(SiteA, &values, "10.250.0.2", addressOf)
	if err != nil || len(ips) != 1 || ips[0].String() != "10.250.0.2" {
		t.Fatalf("btrfs: %v, %v", ips, err)
	}
	if values.Storage.Mode != chart.ModeBtrfs || !slices.Equal(values.Storage.Nodes, []chart.StorageNode{{Name: SiteA.Node(), Address: "10.250.0.2"}}) ||
		values.StorageCluster.PlaceCount != 1 || len(values.Node.NodeSelector) != 0 {
		t.Errorf("btrfs values %+v", values)
	}
}

// siteValues are the chart's defaults with what every site's release names.
func siteValues(t *testing.T, c Cluster) chart.Values {
	t.Helper()
	values, err := chart.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	values.Image.Tag = "0123456789ab"
	values.Site = chart.Site{Name: c.Name, ClusterID: string(c.ChartID)}
	values.Storage.HostDir = hostDir
	values.StorageCluster.Create = true
	return values
}

func fromUnstructured(t *testing.T, object map[string]any, out any) {
	t.Helper()
	if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(object, out); err != nil {
		t.Fatal(err)
	}
}

// TestOneModuleMissingWithoutModuleSupport: a kernel without module
// support that has one of the two built in is told which one it lacks.
func TestOneModuleMissingWithoutModuleSupport(t *testing.T) {
	k := fakeKernel(t, map[string]string{"proc/sys/kernel/osrelease": release, "sys/module/zfs/": ""})
	_, err := StorageZFSDRBD.Preflight(k)
	if !errors.Is(err, ErrKernelLacksModules) || !strings.Contains(err.Error(), "lacks the drbd module: drbd is not built in and the kernel loads no modules") {
		t.Errorf("zfs built in, no drbd: %v", err)
	}
}

// TestTheImagesCarryTheModesTools: rootfs.sh's package lists (its
// --packages, which builds nothing): btrfs mode's are the ones its trees
// were built from before the modes existed (so nothing rebuilds), zfs-drbd
// adds ZFS's, DRBD's and udev's tools to both trees, from main and contrib
// (zfsutils-linux's component), and an unknown mode is refused by name.
func TestTheImagesCarryTheModesTools(t *testing.T) {
	packages := func(mode string) (map[string][]string, error) {
		cmd := exec.Command("bash", filepath.Join("..", "..", "..", "ci", "realbed", "rootfs.sh"), "--packages")
		cmd.Env = append(os.Environ(), StorageEnv+"="+mode, "BATON_CACHE="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%w: %s", err, out)
		}
		lists := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, list, _ := strings.Cut(line, " ")
			lists[name] = strings.Split(list, ",")
		}
		return lists, nil
	}
	btrfs, err := packages("btrfs")
	if err != nil {
		t.Fatal(err)
	}
	const tools = "iptables,conntrack,nftables,ebtables,ipset,kmod,iproute2,util-linux,mount,btrfs-progs,e2fsprogs,xfsprogs,ca-certificates"
	if strings.Join(btrfs["tools"], ",") != tools || !slices.Equal(btrfs["components"], []string{"main"}) {
		t.Errorf("btrfs mode's tools tree %v from %v, want %s from main", btrfs["tools"], btrfs["components"], tools)
	}
	zfs, err := packages("zfs-drbd")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(zfs["components"], []string{"main", "contrib"}) {
		t.Errorf("zfs-drbd components %v", zfs["components"])
	}
	for _, tree := range []string{"node", "tools"} {
		for _, p := range append(btrfs[tree], "zfsutils-linux", "drbd-utils", "udev") {
			if !slices.Contains(zfs[tree], p) {
				t.Errorf("zfs-drbd's %s tree lacks %s: %v", tree, p, zfs[tree])
			}
		}
		for _, p := range btrfs[tree] {
			if p == "zfsutils-linux" || p == "drbd-utils" {
				t.Errorf("btrfs mode's %s tree carries %s", tree, p)
			}
		}
	}
	if _, err := packages("lvm"); err == nil || !strings.Contains(err.Error(), "BATON_REALBED_STORAGE=lvm: want btrfs or zfs-drbd") {
		t.Errorf("an unknown mode: %v", err)
	}
}
