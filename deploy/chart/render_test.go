package chart_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/deploy/chart"
)

const (
	siteA    = "0000000a-0000-4000-8000-00000000000a"
	siteB    = "0000000b-0000-4000-8000-00000000000b"
	tokenB   = "peer-token-of-site-b"
	imageTag = "0123456789ab"
)

// btrfsValues are the real bed's site-a: one storage node, the StorageCluster
// made directly, cross-site reach on NodePorts, site-b as a peer.
func btrfsValues(t *testing.T) chart.Values {
	t.Helper()
	v, err := chart.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	v.Image.Tag = imageTag
	v.Site = chart.Site{Name: "baton-site-a", ClusterID: siteA}
	v.Storage.HostDir = "/var/lib/baton-realbed"
	v.Storage.Nodes = []chart.StorageNode{{Name: "baton-site-a-control-plane", Address: "172.18.0.3"}}
	v.StorageCluster.Create = true
	v.CrossSite.Enabled, v.CrossSite.Host = true, "172.18.0.3"
	v.Peers = []chart.Peer{{ClusterID: siteB, Endpoint: "https://172.18.0.4:30443", Secret: tokenB}}
	return v
}

// zfsValues are a zfs-drbd site: two storage nodes, DRBD inside the site.
func zfsValues(t *testing.T) chart.Values {
	v := btrfsValues(t)
	v.Storage.Mode = chart.ModeZFSDRBD
	v.Storage.Nodes = append(v.Storage.Nodes, chart.StorageNode{Name: "baton-site-a-worker", Address: "172.18.0.5"})
	v.Storage.ZFS.PoolFile, v.Storage.ZFS.PoolSizeBytes = "/var/lib/baton-realbed/baton-site-a/zfs.img", 4<<30
	return v
}

func render(t *testing.T, v chart.Values) chart.Rendered {
	t.Helper()
	r, err := chart.Render(context.Background(), v, chart.Release{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// find returns the one object of kind and name, converted into out.
func find(t *testing.T, objects []*unstructured.Unstructured, kind, name string, out any) {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() == kind && o.GetName() == name {
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
}

func kinds(objects []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objects {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	return named(t, "container", spec.Containers, func(c corev1.Container) string { return c.Name }, name)
}

// named is the item of items that nameOf calls name; the test fails when
// there is none.
func named[T any](t *testing.T, what string, items []T, nameOf func(T) string, name string) T {
	t.Helper()
	for _, item := range items {
		if nameOf(item) == name {
			return item
		}
	}
	t.Fatalf("no %s %s", what, name)
	var zero T
	return zero
}

func hasArg(c corev1.Container, arg string) bool { return slices.Contains(c.Args, arg) }

func TestTheChartRendersEveryPartOfASite(t *testing.T) {
	r := render(t, btrfsValues(t))
	want := []string{
		"CSIDriver/csi.baton-dr.io", "ClusterRole/baton-controller", "ClusterRole/baton-csi-addons-manager", "ClusterRole/baton-csi-provisioner",
		"ClusterRoleBinding/baton-controller", "ClusterRoleBinding/baton-csi-addons-manager", "ClusterRoleBinding/baton-csi-provisioner",
		"DaemonSet/baton-node",
		"Deployment/baton-controller", "Deployment/baton-csi-addons-manager", "Deployment/baton-csi-controller",
		"Role/baton-controller", "Role/baton-csi-addons-manager", "Role/baton-csi-controller",
		"RoleBinding/baton-controller", "RoleBinding/baton-csi-addons-manager", "RoleBinding/baton-csi-controller",
		"Secret/baton-peers", "Service/baton-controller", "Service/baton-node-stream",
		"ServiceAccount/baton-controller", "ServiceAccount/baton-csi-addons-manager", "ServiceAccount/baton-csi-controller", "ServiceAccount/baton-node",
		"StorageClass/baton", "StorageCluster/baton-site-a", "StorageNode/baton-site-a-control-plane",
		"VolumeReplicationClass/baton",
	}
	if got := kinds(r.Objects); !slices.Equal(got, want) {
		t.Fatalf("objects\n got %v\nwant %v", got, want)
	}
	if len(r.Hooks) != 0 {
		t.Fatalf("btrfs mode renders hooks: %v", kinds(r.Hooks))
	}
	var crdNames []string
	for _, c := range r.CRDs {
		crdNames = append(crdNames, c.GetName())
	}
	for _, name := range []string{"storageclusters.storage.baton.dev", "volumes.storage.baton.dev",
		"volumereplications.replication.storage.openshift.io", "volumereplicationclasses.replication.storage.openshift.io",
		"csiaddonsnodes.csiaddons.openshift.io"} {
		if !slices.Contains(crdNames, name) {
			t.Errorf("the chart carries no CRD %s (it has %v)", name, crdNames)
		}
	}
	for _, o := range r.Objects {
		if ns := o.GetNamespace(); ns != "" && ns != chart.DefaultNamespace {
			t.Errorf("%s/%s is in namespace %s", o.GetKind(), o.GetName(), ns)
		}
	}
}

// TestEveryContainerRunsBatonsImage: one image, the binary named by command;
// an override runs its own image with its own entrypoint.
func TestEveryContainerRunsBatonsImage(t *testing.T) {
	v := btrfsValues(t)
	image := v.Image.Ref()
	binaries := map[string]string{"baton-controller": "baton-controller", "baton-csi": "baton-csi", "csi-provisioner": "csi-provisioner",
		"csi-addons": "csi-addons-sidecar", "manager": "csi-addons-manager", "baton-node": "baton-node", "registrar": "registrar"}
	for _, spec := range podSpecs(t, render(t, v).Objects) {
		for _, c := range spec.Containers {
			if c.Image != image || len(c.Command) != 1 || c.Command[0] != binaries[c.Name] {
				t.Errorf("container %s runs %s %v, want %s [%s]", c.Name, c.Image, c.Command, image, binaries[c.Name])
			}
		}
	}
	v.Images.CSIAddonsSidecar = "quay.io/csiaddons/k8s-sidecar:v0.12.0"
	var d appsv1.Deployment
	find(t, render(t, v).Objects, "Deployment", "baton-csi-controller", &d)
	if c := container(t, d.Spec.Template.Spec, "csi-addons"); c.Image != v.Images.CSIAddonsSidecar || c.Command != nil {
		t.Errorf("the overridden sidecar runs %s %v", c.Image, c.Command)
	}
}

func podSpecs(t *testing.T, objects []*unstructured.Unstructured) map[string]corev1.PodSpec {
	t.Helper()
	out := map[string]corev1.PodSpec{}
	for _, o := range objects {
		switch o.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			find(t, objects, "Deployment", o.GetName(), &d)
			out[o.GetName()] = d.Spec.Template.Spec
		case "DaemonSet":
			var d appsv1.DaemonSet
			find(t, objects, "DaemonSet", o.GetName(), &d)
			out[o.GetName()] = d.Spec.Template.Spec
		}
	}
	if len(out) != 4 {
		t.Fatalf("%d workloads, want 4", len(out))
	}
	return out
}

// TestTheSidecarsShareTheDriversSockets: external-provisioner and the
// csi-addons sidecar dial the sockets baton-csi serves, on one volume; the
// registrar hands kubelet the node socket's host path.
func TestTheSidecarsShareTheDriversSockets(t *testing.T) {
	r := render(t, btrfsValues(t))
	var controller appsv1.Deployment
	find(t, r.Objects, "Deployment", "baton-csi-controller", &controller)
	spec := controller.Spec.Template.Spec
	driver, provisioner, addons := container(t, spec, "baton-csi"), container(t, spec, "csi-provisioner"), container(t, spec, "csi-addons")
	if !hasArg(driver, "--mode=controller") || !hasArg(driver, "--endpoint=unix:///csi/csi.sock") ||
		!hasArg(driver, "--csi-addons-address=unix:///csi/addons.sock") {
		t.Errorf("baton-csi controller args %v", driver.Args)
	}
	if !hasArg(provisioner, "--csi-address=/csi/csi.sock") {
		t.Errorf("csi-provisioner args %v", provisioner.Args)
	}
	for _, arg := range []string{"--csi-addons-address=unix:///csi/addons.sock", "--controller-port=9070", "--node-id=$(NODE_NAME)",
		"--pod=$(POD_NAME)", "--namespace=$(POD_NAMESPACE)", "--pod-uid=$(POD_UID)"} {
		if !hasArg(addons, arg) {
			t.Errorf("csi-addons sidecar lacks %s: %v", arg, addons.Args)
		}
	}
	if len(addons.Ports) != 1 || addons.Ports[0].ContainerPort != 9070 {
		t.Errorf("csi-addons sidecar ports %v: the controller manager dials pod://<pod>:9070", addons.Ports)
	}
	for _, c := range []corev1.Container{driver, provisioner, addons} {
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "socket" && m.MountPath == "/csi" }) {
			t.Errorf("%s does not mount the socket volume at /csi", c.Name)
		}
	}

	var node appsv1.DaemonSet
	find(t, r.Objects, "DaemonSet", "baton-node", &node)
	nodeSpec := node.Spec.Template.Spec
	registrar := container(t, nodeSpec, "registrar")
	if !hasArg(registrar, "--kubelet-csi-address=/var/lib/kubelet/plugins/csi.baton-dr.io/csi.sock") || !hasArg(registrar, "--csi-address=/csi/csi.sock") {
		t.Errorf("registrar args %v", registrar.Args)
	}
	socket := volume(t, nodeSpec, "socket")
	if socket.HostPath == nil || socket.HostPath.Path != "/var/lib/kubelet/plugins/csi.baton-dr.io" {
		t.Errorf("the node socket volume is %+v", socket.VolumeSource)
	}
	csiNode := container(t, nodeSpec, "baton-csi")
	kubelet := slices.IndexFunc(csiNode.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "kubelet" })
	if kubelet < 0 || csiNode.VolumeMounts[kubelet].MountPropagation == nil || *csiNode.VolumeMounts[kubelet].MountPropagation != corev1.MountPropagationBidirectional {
		t.Errorf("baton-csi's node service does not mount the kubelet directory bidirectionally: %v", csiNode.VolumeMounts)
	}
	if !hasArg(csiNode, "--devices=links") || !hasArg(csiNode, "--device-dir=/var/lib/baton-realbed/baton-site-a/devices") {
		t.Errorf("btrfs node args %v", csiNode.Args)
	}
	agent := container(t, nodeSpec, "baton-node")
	for _, arg := range []string{"--backend=btrfs", "--pool-dir=/var/lib/baton-realbed/baton-site-a/pool", "--pool-size-bytes=2147483648",
		"--device-dir=/var/lib/baton-realbed/baton-site-a/devices", "--node=$(NODE_NAME)", "--cluster-id=" + siteA} {
		if !hasArg(agent, arg) {
			t.Errorf("baton-node lacks %s: %v", arg, agent.Args)
		}
	}
	if dev := volume(t, nodeSpec, "dev"); dev.HostPath == nil || dev.HostPath.Path != "/dev" {
		t.Errorf("the node pods do not mount the host's /dev: %+v", dev.VolumeSource)
	}
}

func volume(t *testing.T, spec corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	return named(t, "volume", spec.Volumes, func(v corev1.Volume) string { return v.Name }, name)
}

// TestTheControllerSocketsCanLiveOnTheHost: for a tool on the node that
// dials the driver (the real bed), a host directory and one pod at a time;
// by default the pod's own directory. Every pod carries its app label.
func TestTheControllerSocketsCanLiveOnTheHost(t *testing.T) {
	v := btrfsValues(t)
	r := render(t, v)
	var d appsv1.Deployment
	find(t, r.Objects, "Deployment", "baton-csi-controller", &d)
	if socket := volume(t, d.Spec.Template.Spec, "socket"); socket.EmptyDir == nil || d.Spec.Strategy.Type != "" {
		t.Errorf("default socket volume %+v, strategy %q", socket.VolumeSource, d.Spec.Strategy.Type)
	}
	v.CSI.ControllerSocketDir = "/var/lib/baton-realbed/baton-site-a/csi-controller"
	find(t, render(t, v).Objects, "Deployment", "baton-csi-controller", &d)
	socket := volume(t, d.Spec.Template.Spec, "socket")
	if socket.HostPath == nil || socket.HostPath.Path != v.CSI.ControllerSocketDir || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("socket volume %+v, strategy %q", socket.VolumeSource, d.Spec.Strategy.Type)
	}
	for _, o := range r.Objects {
		if o.GetKind() != "Deployment" && o.GetKind() != "DaemonSet" {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		if labels["app"] != o.GetName() {
			t.Errorf("%s %s's pods are labelled app=%q", o.GetKind(), o.GetName(), labels["app"])
		}
	}
}

// TestRBACIsLeastPrivilege: the operator has exactly the roles controller-gen
// generated; the node pods hold no role and mount no token; no rule grants a
// wildcard; secrets are readable only inside the namespace, and the CSI
// controller's account reads only the CSI secret.
func TestRBACIsLeastPrivilege(t *testing.T) {
	r := render(t, btrfsValues(t))
	generated := generatedRoles(t)
	for _, kind := range []string{"ClusterRole", "Role"} {
		var rendered rbacv1.ClusterRole
		find(t, r.Objects, kind, "baton-controller", &rendered)
		if !equalJSON(t, rendered.Rules, generated[kind]) {
			t.Errorf("the operator's %s differs from deploy/rbac/role.yaml's\n got %v\nwant %v", kind, rendered.Rules, generated[kind])
		}
	}
	var account corev1.ServiceAccount
	find(t, r.Objects, "ServiceAccount", "baton-node", &account)
	var node appsv1.DaemonSet
	find(t, r.Objects, "DaemonSet", "baton-node", &node)
	if account.AutomountServiceAccountToken == nil || *account.AutomountServiceAccountToken ||
		node.Spec.Template.Spec.AutomountServiceAccountToken == nil || *node.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Error("the node pods mount a token")
	}
	for _, o := range r.Objects {
		if !strings.HasSuffix(o.GetKind(), "Binding") {
			continue
		}
		var b rbacv1.RoleBinding
		find(t, r.Objects, o.GetKind(), o.GetName(), &b)
		for _, s := range b.Subjects {
			if s.Name == "baton-node" {
				t.Errorf("%s %s binds the node account", o.GetKind(), o.GetName())
			}
		}
	}
	for _, o := range r.Objects {
		if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole
		find(t, r.Objects, o.GetKind(), o.GetName(), &role)
		for _, rule := range role.Rules {
			if slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Resources, "*") || slices.Contains(rule.APIGroups, "*") {
				t.Errorf("%s %s grants a wildcard: %+v", o.GetKind(), o.GetName(), rule)
			}
			if slices.Contains(rule.Resources, "secrets") && o.GetKind() == "ClusterRole" {
				t.Errorf("ClusterRole %s reads secrets cluster-wide: %+v", o.GetName(), rule)
			}
		}
	}
	var csiRole rbacv1.Role
	find(t, r.Objects, "Role", "baton-csi-controller", &csiRole)
	for _, rule := range csiRole.Rules {
		if slices.Contains(rule.Resources, "secrets") && (!slices.Equal(rule.ResourceNames, []string{"baton-csi"}) || !slices.Equal(rule.Verbs, []string{"get"})) {
			t.Errorf("the CSI controller's secrets rule is %+v, want get on baton-csi only", rule)
		}
	}
}

// generatedRoles reads deploy/rbac/role.yaml, what controller-gen wrote.
func generatedRoles(t *testing.T) map[string][]rbacv1.PolicyRule {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]rbacv1.PolicyRule{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		if role.Kind != "" {
			out[role.Kind] = role.Rules
		}
	}
	if len(out) != 2 {
		t.Fatalf("deploy/rbac/role.yaml holds %d kinds of role, want ClusterRole and Role", len(out))
	}
	return out
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// TestTheStorageClassAndTheReplicationClassSpeakTheDriversParameters: every
// parameter is one baton-csi reads, or csi-addons' own schedulingInterval
// (which Enable ignores), and the VolumeReplicationClass hands the driver
// the CSI secret.
func TestTheStorageClassAndTheReplicationClassSpeakTheDriversParameters(t *testing.T) {
	v := btrfsValues(t)
	v.VolumeReplicationClass.TargetClusterID = siteB
	v.VolumeReplicationClass.SchedulingInterval = "1m"
	r := render(t, v)
	var class storagev1.StorageClass
	find(t, r.Objects, "StorageClass", "baton", &class)
	want := map[string]string{csi.ParameterPlaceCount: "1", csi.ParameterProvisioning: "thin", csi.ParameterCluster: siteA}
	if class.Provisioner != csi.DriverName || !equalJSON(t, class.Parameters, want) {
		t.Errorf("StorageClass %s %v, want %s %v", class.Provisioner, class.Parameters, csi.DriverName, want)
	}
	var vrc struct {
		Spec struct {
			Provisioner string            `json:"provisioner"`
			Parameters  map[string]string `json:"parameters"`
		} `json:"spec"`
	}
	find(t, r.Objects, "VolumeReplicationClass", "baton", &vrc)
	wantParameters := map[string]string{
		"replication.storage.openshift.io/replication-secret-name":      "baton-csi",
		"replication.storage.openshift.io/replication-secret-namespace": chart.DefaultNamespace,
		csi.TargetClusterParameter:                                      siteB,
		"schedulingInterval":                                            "1m",
	}
	if vrc.Spec.Provisioner != csi.DriverName || !equalJSON(t, vrc.Spec.Parameters, wantParameters) {
		t.Errorf("VolumeReplicationClass %s %v, want %s %v", vrc.Spec.Provisioner, vrc.Spec.Parameters, csi.DriverName, wantParameters)
	}
}

// TestCrossSiteReachIsOnNodePorts: the storage API on a NodePort, the
// endpoint the operator advertises naming it; the stream servers on a
// NodePort that keeps to the node; the peer registered through the peers
// secret (local false), its token in no container's arguments.
func TestCrossSiteReachIsOnNodePorts(t *testing.T) {
	r := render(t, btrfsValues(t))
	var api, stream corev1.Service
	find(t, r.Objects, "Service", "baton-controller", &api)
	find(t, r.Objects, "Service", "baton-node-stream", &stream)
	if api.Spec.Type != corev1.ServiceTypeNodePort || len(api.Spec.Ports) != 1 || api.Spec.Ports[0].NodePort != 30443 || api.Spec.Ports[0].Port != 8443 {
		t.Errorf("storage API service %s %+v", api.Spec.Type, api.Spec.Ports)
	}
	if stream.Spec.Type != corev1.ServiceTypeNodePort || stream.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
		len(stream.Spec.Ports) != 1 || stream.Spec.Ports[0].NodePort != 30500 {
		t.Errorf("stream service %s %s %+v", stream.Spec.Type, stream.Spec.ExternalTrafficPolicy, stream.Spec.Ports)
	}
	specs := podSpecs(t, r.Objects)
	if c := container(t, specs["baton-controller"], "baton-controller"); !hasArg(c, "--storage-api-endpoint=https://172.18.0.3:30443") ||
		!hasArg(c, "--peers-secret=baton-peers") || !hasArg(c, "--csi-secret=baton-csi") {
		t.Errorf("operator args %v", c.Args)
	}
	if c := container(t, specs["baton-node"], "baton-node"); !hasArg(c, "--stream-address=:9500") || !hasArg(c, "--advertise-address=$(NODE_IP):30500") {
		t.Errorf("node agent args %v", c.Args)
	}
	var peers corev1.Secret
	find(t, r.Objects, "Secret", "baton-peers", &peers)
	var doc struct {
		Clusters []map[string]any `json:"clusters"`
	}
	if err := json.Unmarshal(peers.Data["clusters"], &doc); err != nil {
		t.Fatal(err)
	}
	wantPeer := map[string]any{"cluster_id": siteB, "cluster_endpoint": "https://172.18.0.4:30443", "cluster_secret": tokenB, "local": false}
	if len(doc.Clusters) != 1 || !equalJSON(t, doc.Clusters[0], wantPeer) {
		t.Errorf("peers secret %s", peers.Data["clusters"])
	}
	for name, spec := range specs {
		for _, c := range spec.Containers {
			if strings.Contains(strings.Join(c.Args, " "), tokenB) {
				t.Errorf("%s/%s carries the peer's token in its arguments", name, c.Name)
			}
		}
	}

	// Without cross-site reach: a ClusterIP, the Service's name as endpoint,
	// no stream server.
	v := btrfsValues(t)
	v.CrossSite.Enabled = false
	r = render(t, v)
	find(t, r.Objects, "Service", "baton-controller", &api)
	if api.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("storage API service %s without crossSite", api.Spec.Type)
	}
	specs = podSpecs(t, r.Objects)
	if c := container(t, specs["baton-controller"], "baton-controller"); !hasArg(c, "--storage-api-endpoint=https://baton-controller.baton-system.svc:8443") {
		t.Errorf("operator args %v", c.Args)
	}
	if c := container(t, specs["baton-node"], "baton-node"); slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--stream") }) {
		t.Errorf("node agent serves streams without crossSite: %v", c.Args)
	}
	if slices.Contains(kinds(r.Objects), "Service/baton-node-stream") {
		t.Error("a stream service without crossSite")
	}
}

// TestZFSDRBDSharedKernelNamesEachNodesDRBDApart: with storage.zfs.sharedKernel
// each node agent suffixes its DRBD resources with its node's name and takes
// its own minor offset from the list of every storage node's; without it the
// agents get neither flag.
func TestZFSDRBDSharedKernelNamesEachNodesDRBDApart(t *testing.T) {
	v := zfsValues(t)
	agent := container(t, podSpecs(t, render(t, v).Objects)["baton-node"], "baton-node")
	for _, arg := range agent.Args {
		if strings.HasPrefix(arg, "--drbd-resource-suffix") || strings.HasPrefix(arg, "--drbd-minor-offset") {
			t.Errorf("without sharedKernel the agent gets %s", arg)
		}
	}
	v.Storage.ZFS.SharedKernel = true
	v.Storage.Nodes[1].DRBDMinorOffset = 50000
	agent = container(t, podSpecs(t, render(t, v).Objects)["baton-node"], "baton-node")
	offsets := "--drbd-minor-offset=baton-site-a-control-plane=0,baton-site-a-worker=50000"
	if !hasArg(agent, "--drbd-resource-suffix=$(NODE_NAME)") || !hasArg(agent, offsets) {
		t.Errorf("baton-node args %v: want --drbd-resource-suffix=$(NODE_NAME) and %s", agent.Args, offsets)
	}
}

// TestZFSDRBDModeRunsTheZFSAndDRBDBackends: two storage nodes, host network
// (DRBD), the zfs backend and DRBD devices, placeCount 2, and a pre-install
// check on each storage node.
func TestZFSDRBDModeRunsTheZFSAndDRBDBackends(t *testing.T) {
	r := render(t, zfsValues(t))
	specs := podSpecs(t, r.Objects)
	node := specs["baton-node"]
	if !node.HostNetwork || node.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("zfs-drbd node pods: hostNetwork %v, dnsPolicy %s", node.HostNetwork, node.DNSPolicy)
	}
	agent := container(t, node, "baton-node")
	for _, arg := range []string{"--backend=zfs", "--zfs-dataset=baton/volumes", "--zfs-pool-file=/var/lib/baton-realbed/baton-site-a/zfs.img",
		"--pool-size-bytes=4294967296", "--drbd-config-dir=/var/lib/baton-realbed/baton-site-a/drbd/$(NODE_NAME)", "--advertise-address=$(NODE_IP):9500"} {
		if !hasArg(agent, arg) {
			t.Errorf("baton-node lacks %s: %v", arg, agent.Args)
		}
	}
	if c := container(t, node, "baton-csi"); !hasArg(c, "--devices=drbd") || !hasArg(c, "--device-dir=/dev") {
		t.Errorf("baton-csi node args %v", c.Args)
	}
	if slices.Contains(kinds(r.Objects), "Service/baton-node-stream") {
		t.Error("a stream NodePort although the agents use the node's network")
	}
	if agent.SecurityContext == nil || agent.SecurityContext.Privileged == nil || !*agent.SecurityContext.Privileged {
		t.Errorf("baton-node is not privileged: %+v", agent.SecurityContext)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range agent.VolumeMounts {
		mounts[m.MountPath] = m
	}
	if m, ok := mounts["/lib/modules"]; !ok || !m.ReadOnly || !mounts["/run/udev"].ReadOnly || mounts["/dev"].Name != "dev" {
		t.Errorf("baton-node mounts %v: want the host's /dev, and /lib/modules and /run/udev read-only", agent.VolumeMounts)
	}
	hostPaths := map[string]string{}
	for _, v := range node.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	if hostPaths["modules"] != "/lib/modules" || hostPaths["udev"] != "/run/udev" || hostPaths["dev"] != "/dev" {
		t.Errorf("node volumes from the host %v", hostPaths)
	}
	var cluster struct {
		Spec struct {
			Pool       map[string]string `json:"pool"`
			PlaceCount int               `json:"placeCount"`
			Peers      []map[string]any  `json:"peers"`
			DRBDPorts  map[string]int    `json:"drbdPorts"`
			DRBDMinors map[string]int    `json:"drbdMinors"`
		} `json:"spec"`
	}
	find(t, r.Objects, "StorageCluster", "baton-site-a", &cluster)
	if cluster.Spec.Pool["backend"] != "zfs-drbd" || cluster.Spec.PlaceCount != 2 || len(cluster.Spec.Peers) != 1 {
		t.Errorf("StorageCluster spec %+v", cluster.Spec)
	}
	if p, m := cluster.Spec.DRBDPorts, cluster.Spec.DRBDMinors; p["min"] != 7000 || p["max"] != 7999 || m["min"] != 1000 || m["max"] != 49999 {
		t.Errorf("StorageCluster DRBD ranges: ports %v, minors %v (want values.yaml's 7000-7999, 1000-49999)", p, m)
	}
	var nodes []string
	for _, o := range r.Objects {
		if o.GetKind() == "StorageNode" {
			nodes = append(nodes, o.GetName())
		}
	}
	if !slices.Equal(nodes, []string{"baton-site-a-control-plane", "baton-site-a-worker"}) {
		t.Errorf("StorageNodes %v", nodes)
	}
	var class storagev1.StorageClass
	find(t, r.Objects, "StorageClass", "baton", &class)
	if class.Parameters[csi.ParameterPlaceCount] != "2" {
		t.Errorf("StorageClass placeCount %s in zfs-drbd mode", class.Parameters[csi.ParameterPlaceCount])
	}
	if got := kinds(r.Hooks); !slices.Equal(got, []string{"Pod/baton-preflight-0", "Pod/baton-preflight-1"}) {
		t.Fatalf("hooks %v", got)
	}
	for i, h := range r.Hooks {
		var pod corev1.Pod
		find(t, r.Hooks, "Pod", h.GetName(), &pod)
		script := strings.Join(pod.Spec.Containers[0].Args, " ")
		if pod.Spec.NodeName != zfsValues(t).Storage.Nodes[i].Name || pod.Annotations["helm.sh/hook"] != "pre-install,pre-upgrade" ||
			!strings.Contains(script, "/sys/module/$module") || !strings.Contains(script, "zfs drbd") {
			t.Errorf("preflight pod %s on %s, annotations %v, script %q", pod.Name, pod.Spec.NodeName, pod.Annotations, script)
		}
	}
}

// TestBadValuesAreRefusedClearly: Validate names every problem at once, and
// never the token; the chart itself refuses what helm users could give it.
func TestBadValuesAreRefusedClearly(t *testing.T) {
	v := zfsValues(t)
	v.Storage.Nodes = v.Storage.Nodes[:1]
	v.Site.Name = "Site_A"
	v.Peers[0].Endpoint = "http://plain"
	v.CrossSite.Host = ""
	v.StorageCluster.DRBDPorts.Min = 8000
	v.StorageCluster.DRBDMinors.Max = 1 << 21
	v.StorageCluster.ThinOvercommitPercent = 50
	_, err := chart.Render(context.Background(), v, chart.Release{})
	if !errors.Is(err, chart.ErrInvalidValues) {
		t.Fatalf("bad values: %v", err)
	}
	for _, want := range []string{"at least 2 storage.nodes", "site.name", "peers[0]", "crossSite.host",
		"storageCluster.drbdPorts 8000-7999", "storageCluster.drbdMinors 1000-2097152", "storageCluster.thinOvercommitPercent 50"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), tokenB) {
		t.Errorf("the refusal quotes the token: %v", err)
	}
	v = btrfsValues(t)
	v.Image.Tag = ""
	if _, err := chart.Render(context.Background(), v, chart.Release{}); err == nil || !strings.Contains(err.Error(), "image.tag") {
		t.Errorf("no image tag: %v", err)
	}
}

// TestTheChartRefusesWithoutTheGoSide: the templates' own checks, for people
// running helm: zfs-drbd with one node, a missing site name.
func TestTheChartRefusesWithoutTheGoSide(t *testing.T) {
	oneNode := zfsValues(t)
	oneNode.Storage.Nodes = oneNode.Storage.Nodes[:1]
	noName := btrfsValues(t)
	noName.Site.Name = ""
	for want, v := range map[string]chart.Values{"at least 2 storage nodes": oneNode, "site.name is required": noName} {
		if _, err := chart.RenderUnchecked(context.Background(), v, chart.Release{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want a refusal saying %q, got %v", want, err)
		}
	}
}

// TestValuesMirrorValuesYAML: the Go type and values.yaml name the same keys
// and Defaults reads the same values (the CLI and the Go side install alike).
func TestValuesMirrorValuesYAML(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "baton", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML map[string]any
	if err := yaml.Unmarshal(data, &fromYAML); err != nil {
		t.Fatal(err)
	}
	defaults, err := chart.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	fromGo, err := defaults.Map()
	if err != nil {
		t.Fatal(err)
	}
	if !equalJSON(t, dropEmpty(fromYAML), fromGo) {
		a, _ := json.Marshal(dropEmpty(fromYAML))
		b, _ := json.Marshal(fromGo)
		t.Errorf("values.yaml and Values differ\nyaml %s\n  go %s", a, b)
	}
}

// dropEmpty removes empty lists and maps, which Values.Map leaves out.
func dropEmpty(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			if len(x) > 0 {
				out[k] = dropEmpty(x)
			}
		case []any:
			if len(x) > 0 {
				out[k] = x
			}
		default:
			out[k] = v
		}
	}
	return out
}

// TestTheNotesNameTheEndpoint is what a person sees after helm install.
func TestTheNotesNameTheEndpoint(t *testing.T) {
	notes := render(t, btrfsValues(t)).Notes
	if !strings.Contains(notes, "https://172.18.0.3:30443") || !strings.Contains(notes, "baton-site-a (btrfs)") {
		t.Errorf("notes %q", notes)
	}
}

// TestTheOvercommitRatioReachesTheStorageCluster: a chart value the
// operator reads from the StorageCluster's pool; unset, the CRD's default.
func TestTheOvercommitRatioReachesTheStorageCluster(t *testing.T) {
	for _, percent := range []int{0, 800} {
		v := btrfsValues(t)
		v.StorageCluster.ThinOvercommitPercent = percent
		var cluster struct {
			Spec struct {
				Pool map[string]any `json:"pool"`
			} `json:"spec"`
		}
		find(t, render(t, v).Objects, "StorageCluster", "baton-site-a", &cluster)
		got, set := cluster.Spec.Pool["thinOvercommitPercent"]
		if percent == 0 && set || percent != 0 && got != float64(percent) {
			t.Errorf("thinOvercommitPercent %d renders pool %v", percent, cluster.Spec.Pool)
		}
	}
}

// TestTheNodeAgentSeesTheNodesMounts: the node pods share the node's process
// namespace, so that the agent's fence reads the mounts kubelet made, in
// /proc/1's mount namespace, and shuts down the file systems on a fenced
// volume (node/fence). Without it the agent's /proc/1 is its own container.
func TestTheNodeAgentSeesTheNodesMounts(t *testing.T) {
	for mode, values := range map[string]chart.Values{"btrfs": btrfsValues(t), "zfs-drbd": zfsValues(t)} {
		if node := podSpecs(t, render(t, values).Objects)["baton-node"]; !node.HostPID {
			t.Errorf("%s node pods: hostPID %v, want the node's processes", mode, node.HostPID)
		}
	}
}
