package site_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
)

func disk(path string, gib int64) v1.CandidateDevice {
	return v1.CandidateDevice{Path: path, Type: v1.DeviceTypeDisk, SizeBytes: gib << 30, Model: "QEMU HARDDISK"}
}

// siteNodes is what the node agents of one site report to discovery.
var siteNodes = sitecontroller.StaticDiscoverer{
	{Name: "node-1", Labels: map[string]string{"storage": "yes"}, Address: "10.0.0.11",
		Devices: []v1.CandidateDevice{disk("/dev/sdb", 100), disk("/dev/sdc", 1)}},
	{Name: "node-2", Labels: map[string]string{"storage": "yes"}, Address: "10.0.0.12",
		Devices: []v1.CandidateDevice{disk("/dev/sdb", 100)}},
	{Name: "node-3", Labels: map[string]string{"storage": "yes"}, Address: "10.0.0.13"},
	{Name: "node-4", Address: "10.0.0.14", Devices: []v1.CandidateDevice{disk("/dev/sdb", 100)}},
	{Name: "node-5", Labels: map[string]string{"storage": "no-address"}, Devices: []v1.CandidateDevice{disk("/dev/sdb", 100)}},
}

type deployRig struct {
	t      *testing.T
	c      client.Client
	ns     string
	clock  *coretest.Clock
	ops    *sitecontroller.OperatorOpsReconciler
	drafts *sitecontroller.DraftReconciler
}

func newDeployRig(t *testing.T) *deployRig {
	c := apiServer(t)
	clock := coretest.NewClock(time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC))
	return &deployRig{t: t, c: c, ns: newNamespace(t, c), clock: clock,
		ops:    &sitecontroller.OperatorOpsReconciler{Client: c, Clock: clock, Discoverer: siteNodes},
		drafts: &sitecontroller.DraftReconciler{Client: c, Clock: clock, Random: rand.NewChaCha8([32]byte{1})}}
}

func (rig *deployRig) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: rig.ns, Name: name}
}

func (rig *deployRig) reconcile(r reconciler, name string) {
	rig.t.Helper()
	if _, err := r.Reconcile(testContext(rig.t), ctrl.Request{NamespacedName: rig.key(name)}); err != nil {
		rig.t.Fatalf("reconcile %s: %v", name, err)
	}
}

func (rig *deployRig) get(name string, o client.Object) {
	rig.t.Helper()
	if err := rig.c.Get(testContext(rig.t), rig.key(name), o); err != nil {
		rig.t.Fatalf("get %T %s: %v", o, name, err)
	}
}

func (rig *deployRig) run(name string, spec v1.OperatorOpsSpec) v1.OperatorOps {
	rig.t.Helper()
	run := &v1.OperatorOps{ObjectMeta: metav1.ObjectMeta{Namespace: rig.ns, Name: name}, Spec: spec}
	if err := rig.c.Create(testContext(rig.t), run); err != nil {
		rig.t.Fatal(err)
	}
	rig.reconcile(rig.ops, name)
	rig.get(name, run)
	return *run
}

// size applies the reviewer's sizing to a draft, and optionally approves it.
func (rig *deployRig) size(draft, cluster string, approve bool) error {
	var d v1.ClusterDeploymentConfig
	rig.get(draft, &d)
	d.Spec.Sizing = &v1.Sizing{ClusterName: cluster, StorageLayout: storageCluster("").Spec.StorageLayout}
	d.Spec.Approved = approve
	return rig.c.Update(testContext(rig.t), &d)
}

func (rig *deployRig) draft(name string) v1.ClusterDeploymentConfig {
	rig.t.Helper()
	rig.reconcile(rig.drafts, name)
	var d v1.ClusterDeploymentConfig
	rig.get(name, &d)
	return d
}

// TestTheDeploymentFlow runs discovery, sizing, approval and expansion on a
// real API server, then the nodes' first reports make the cluster Ready.
func TestTheDeploymentFlow(t *testing.T) {
	rig := newDeployRig(t)
	run := rig.run("discovery-1", v1.OperatorOpsSpec{NodeSelector: map[string]string{"storage": "yes"},
		Devices: v1.DeviceFilter{Paths: []string{"/dev/sd*"}, MinSizeBytes: 10 << 30, AllowLoopFiles: true}})
	if run.Status.Phase != v1.OperatorOpsCompleted || run.Status.Draft != "discovery-1" || len(run.Status.Nodes) != 3 {
		t.Fatalf("run status %+v", run.Status)
	}
	if got := reasonsOf(run.Status.Conditions); got != "Discovered=True/Discovered DraftWritten=True/DraftWritten" {
		t.Fatalf("run conditions %s", got)
	}

	d := rig.draft("discovery-1")
	if got := fmt.Sprint(d.Spec.NodeSets); got != "[{set-1 [node-1 node-2] [/dev/sdb]} {set-2 [node-3] [/var/lib/baton/pool0.img]}]" {
		t.Fatalf("node sets %s", got)
	}
	if d.Status.Phase != v1.ClusterDeploymentConfigDrafted || reasonsOf(d.Status.Conditions) != "Approved=False/AwaitingApproval" {
		t.Fatalf("draft before sizing: %s %s", d.Status.Phase, reasonsOf(d.Status.Conditions))
	}

	// Sizing, then the one-way approval.
	if err := rig.size("discovery-1", "site-a", false); err != nil {
		t.Fatal(err)
	}
	if d = rig.draft("discovery-1"); d.Status.Phase != v1.ClusterDeploymentConfigDrafted {
		t.Fatalf("sized draft is %s", d.Status.Phase)
	}
	if err := rig.size("discovery-1", "site-a", true); err != nil {
		t.Fatal(err)
	}
	d = rig.draft("discovery-1")
	if d.Status.Phase != v1.ClusterDeploymentConfigDeploying || d.Status.Cluster == nil || !chain.IsUUID(string(d.Status.Cluster.ClusterID)) {
		t.Fatalf("approved draft: %s %+v", d.Status.Phase, d.Status.Cluster)
	}
	d.Spec.Approved = false
	if err := rig.c.Update(testContext(t), &d); !apierrors.IsInvalid(err) {
		t.Fatalf("withdrawing the approval: %v, want Invalid", err)
	}

	var cluster v1.StorageCluster
	rig.get("site-a", &cluster)
	if cluster.Spec.ClusterID != d.Status.Cluster.ClusterID || cluster.Labels[sitecontroller.DraftLabel] != "discovery-1" {
		t.Fatalf("cluster %+v, labels %v", cluster.Spec, cluster.Labels)
	}
	var node3 v1.StorageNode
	rig.get("node-3", &node3)
	if node3.Spec.Address != "10.0.0.13" || fmt.Sprint(node3.Spec.Devices) != "[{/var/lib/baton/pool0.img LoopFile 21474836480}]" {
		t.Fatalf("node-3 %+v", node3.Spec)
	}

	// The nodes report; their statuses and the cluster's follow; the draft is Deployed.
	store, err := sitecontroller.NewStore(sitecontroller.StoreConfig{Client: rig.c, Namespace: rig.ns,
		Cluster: chain.ClusterID(cluster.Spec.ClusterID), ClusterName: "site-a", Context: testContext(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range d.Status.Cluster.Nodes {
		err := store.PutNode(core.Node{Name: name, Address: name + ":7900", Schedulable: true, ReportedAt: rig.clock.Now(),
			Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}})
		if err != nil {
			t.Fatal(err)
		}
		rig.reconcile(&sitecontroller.StorageNodeStatusReconciler{Client: rig.c, Clock: rig.clock}, name)
	}
	rig.reconcile(&sitecontroller.StorageClusterStatusReconciler{Client: rig.c, Clock: rig.clock}, "site-a")
	rig.get("site-a", &cluster)
	if cluster.Status.Phase != v1.StorageClusterReady || cluster.Status.ReadyNodeCount != 3 || cluster.Status.Capacity.SizeBytes != 300<<30 {
		t.Fatalf("cluster status %+v", cluster.Status)
	}
	if d = rig.draft("discovery-1"); d.Status.Phase != v1.ClusterDeploymentConfigDeployed ||
		reasonsOf(d.Status.Conditions) != "Approved=True/Approved Deployed=True/Deployed" {
		t.Fatalf("draft after the nodes reported: %s %s", d.Status.Phase, reasonsOf(d.Status.Conditions))
	}

	// A changed discovery is a new run with its own draft; the first stays.
	second := rig.run("discovery-2", v1.OperatorOpsSpec{NodeNames: []string{"node-4"}})
	if second.Status.Draft != "discovery-2" {
		t.Fatalf("second run wrote %q", second.Status.Draft)
	}
	var first v1.ClusterDeploymentConfig
	rig.get("discovery-1", &first)
	if !first.Spec.Approved || len(first.Spec.NodeSets) != 2 {
		t.Fatalf("the first draft changed: %+v", first.Spec)
	}
	rig.reconcile(rig.ops, "discovery-1") // a completed run is not run again
	var again v1.OperatorOps
	rig.get("discovery-1", &again)
	if again.ResourceVersion != run.ResourceVersion {
		t.Fatal("reconciling a completed run wrote to it")
	}
}

// TestAFailedDraftCarriesItsReason: a draft that cannot be expanded fails with
// a reason people can act on, and creates nothing.
func TestAFailedDraftCarriesItsReason(t *testing.T) {
	rig := newDeployRig(t)
	// A node without an address cannot carry DRBD.
	rig.run("no-address", v1.OperatorOpsSpec{NodeSelector: map[string]string{"storage": "no-address"}})
	if err := rig.size("no-address", "site-x", true); err != nil {
		t.Fatal(err)
	}
	d := rig.draft("no-address")
	if d.Status.Phase != v1.ClusterDeploymentConfigFailed || !strings.Contains(d.Status.Reason, "node-5 of set set-1 has no address") {
		t.Fatalf("draft %s: %q", d.Status.Phase, d.Status.Reason)
	}
	if got := reasonsOf(d.Status.Conditions); got != "Approved=True/Approved Deployed=False/DeployFailed" {
		t.Fatalf("conditions %s", got)
	}
	if err := rig.c.Get(testContext(t), rig.key("site-x"), &v1.StorageCluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a failed draft created its cluster: %v", err)
	}

	// A cluster name another draft deployed is not taken over.
	rig.run("first", v1.OperatorOpsSpec{NodeNames: []string{"node-1"}})
	if err := rig.size("first", "site-a", true); err != nil {
		t.Fatal(err)
	}
	rig.draft("first")
	rig.run("second", v1.OperatorOpsSpec{NodeNames: []string{"node-2"}})
	if err := rig.size("second", "site-a", true); err != nil {
		t.Fatal(err)
	}
	d = rig.draft("second")
	if d.Status.Phase != v1.ClusterDeploymentConfigFailed || !strings.Contains(d.Status.Reason, "was not expanded from this draft") {
		t.Fatalf("second draft %s: %q", d.Status.Phase, d.Status.Reason)
	}
	if err := rig.c.Get(testContext(t), rig.key("node-2"), &v1.StorageNode{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the failed draft created its node: %v", err)
	}

	// A run that finds nothing fails and writes no draft.
	empty := rig.run("nothing", v1.OperatorOpsSpec{NodeSelector: map[string]string{"storage": "gpu"}})
	if empty.Status.Phase != v1.OperatorOpsFailed || reasonsOf(empty.Status.Conditions) != "Discovered=False/NoNodes" {
		t.Fatalf("empty run %s %s", empty.Status.Phase, reasonsOf(empty.Status.Conditions))
	}
	var drafts v1.ClusterDeploymentConfigList
	if err := rig.c.List(testContext(t), &drafts, client.InNamespace(rig.ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range drafts.Items {
		names = append(names, d.Name)
	}
	if slices.Contains(names, "nothing") {
		t.Fatalf("an empty run wrote a draft: %v", names)
	}
}
