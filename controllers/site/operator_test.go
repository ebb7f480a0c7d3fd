package site_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/internal/metrictest"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
)

func storageCluster(namespace string) *v1.StorageCluster {
	return &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: clusterName},
		Spec: v1.StorageClusterSpec{ClusterID: v1.UUID(clusterA), StorageLayout: v1.StorageLayout{
			Pool: v1.PoolLayout{Name: "baton", Provisioning: v1.ProvisioningThin, Backend: v1.BackendZFSDRBD}, PlaceCount: 2,
			DRBDPorts: v1.PortRange{Min: 7000, Max: 7999}, DRBDMinors: v1.MinorRange{Min: 1000, Max: 49999},
			ReplicationInterval: metav1.Duration{Duration: 5 * time.Second}, SnapshotRetention: 2}}}
}

// acceptingPeers is a site B that always answers: it names one receiver and
// holds nothing yet.
type acceptingPeers struct{}

func (acceptingPeers) Handover(source chain.Ref) (core.Handover, error) {
	return core.Handover{}, fmt.Errorf("%w", chain.ErrUnreachable)
}
func (acceptingPeers) LearnSuccessor(_, _ chain.Ref) error { return nil }
func (acceptingPeers) PrepareReceive(chain.ClusterID, core.ReceiveRequest) ([]core.Receiver, error) {
	return []core.Receiver{{Node: "b1", Address: "10.0.1.1:7900"}}, nil
}
func (acceptingPeers) Holdings(chain.ClusterID, chain.Ref) ([]string, error) { return nil, nil }

// operatorRig is an operator over a client with its reconcilers, a clock and
// paper nodes, all driven by explicit calls.
type operatorRig struct {
	t        *testing.T
	c        client.Client
	ns       string
	clock    *coretest.Clock
	op       *sitecontroller.Operator
	registry *prometheus.Registry
	datasets map[string]map[string][]core.SnapshotInfo // node -> dataset -> snapshots
	guids    int
}

func newOperatorRig(t *testing.T, c client.Client, ns string) *operatorRig {
	t.Helper()
	rig := &operatorRig{t: t, c: c, ns: ns, clock: coretest.NewClock(time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC)),
		registry: prometheus.NewRegistry(), datasets: map[string]map[string][]core.SnapshotInfo{}}
	for _, o := range []client.Object{storageCluster(ns), storageNode(ns, "a1"), storageNode(ns, "a2")} {
		if err := c.Create(testContext(t), o); err != nil {
			t.Fatal(err)
		}
	}
	metrics, err := sitecontroller.NewMetrics(rig.registry)
	if err != nil {
		t.Fatal(err)
	}
	ids, prefix := 0, fnv.New32a()
	prefix.Write([]byte(ns))
	rigNumber := prefix.Sum32()
	rig.op, err = sitecontroller.NewOperator(sitecontroller.OperatorConfig{Client: c, Namespace: ns, Context: testContext(t),
		Clock: rig.clock, Peers: acceptingPeers{}, Metrics: metrics,
		NewVolumeID: func() chain.VolumeID {
			ids++
			// Distinct across namespaces: a bubble's PV is named after its
			// volume, and PVs are cluster-scoped on the shared API server.
			return chain.VolumeID(fmt.Sprintf("a0000000-0000-4000-8%03d-%012d", rigNumber%1000, ids))
		}})
	if err != nil {
		t.Fatal(err)
	}
	return rig
}

func (rig *operatorRig) do(f func(*core.Site) error) {
	rig.t.Helper()
	if err := rig.op.Do(testContext(rig.t), f); err != nil {
		rig.t.Fatal(err)
	}
}

// step advances the clock one second, ticks, lets each node apply its spec
// and report, then reconciles every object's status, in a fixed order.
func (rig *operatorRig) step() {
	rig.t.Helper()
	rig.clock.Advance(time.Second)
	if err := rig.op.Tick(testContext(rig.t)); err != nil {
		rig.t.Fatal(err)
	}
	for _, node := range []string{"a1", "a2"} {
		rig.do(func(s *core.Site) error { return rig.apply(s, node) })
	}
	rig.reconcileAll()
}

// apply is a paper node agent: it creates datasets, takes and prunes
// snapshots, and reports every send as shipped a second ago.
func (rig *operatorRig) apply(s *core.Site, node string) error {
	spec, err := s.Spec(node)
	if err != nil {
		return err
	}
	held := rig.datasets[node]
	if held == nil {
		held = map[string][]core.SnapshotInfo{}
		rig.datasets[node] = held
	}
	status := core.NodeStatus{Node: node, Address: node + ":7900", Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}}
	for _, v := range spec.Volumes {
		snaps := held[v.Dataset]
		for _, name := range v.Snapshots {
			if !slices.ContainsFunc(snaps, func(s core.SnapshotInfo) bool { return s.Name == name }) {
				rig.guids++
				snaps = append(snaps, core.SnapshotInfo{Name: name, GUID: fmt.Sprint(rig.guids)})
			}
		}
		held[v.Dataset] = slices.DeleteFunc(snaps, func(s core.SnapshotInfo) bool { return slices.Contains(v.Prune, s.Name) })
	}
	for _, send := range spec.Sends {
		status.Sent = append(status.Sent, core.SendResult{Dataset: send.Dataset, Snapshot: send.Snapshot, Target: send.Target,
			Bytes: 1 << 20, Started: rig.clock.Now().Add(-time.Second), Finished: rig.clock.Now()})
	}
	for _, name := range slices.Sorted(maps.Keys(held)) {
		status.Datasets = append(status.Datasets, core.DatasetStatus{Name: name, Snapshots: slices.Clone(held[name])})
	}
	return s.Report(status)
}

// reconciler is any of the operator's reconcilers.
type reconciler interface {
	Reconcile(context.Context, ctrl.Request) (ctrl.Result, error)
}

// reconcileAll calls each status reconciler on every object of its kind, in
// name order.
func (rig *operatorRig) reconcileAll() {
	rig.t.Helper()
	ctx := testContext(rig.t)
	kinds := []struct {
		list       client.ObjectList
		reconciler reconciler
	}{
		{&v1.VolumeList{}, &sitecontroller.VolumeStatusReconciler{Client: rig.c, Clock: rig.clock}},
		{&v1.ReplicationList{}, &sitecontroller.ReplicationStatusReconciler{Client: rig.c, Clock: rig.clock}},
		{&v1.ReplicaList{}, &sitecontroller.ReplicaStatusReconciler{Client: rig.c, Clock: rig.clock}},
		{&v1.StorageNodeList{}, &sitecontroller.StorageNodeStatusReconciler{Client: rig.c, Clock: rig.clock}},
	}
	for _, k := range kinds {
		if err := rig.c.List(ctx, k.list, client.InNamespace(rig.ns)); err != nil {
			rig.t.Fatal(err)
		}
		items, err := meta.ExtractList(k.list)
		if err != nil {
			rig.t.Fatal(err)
		}
		var names []string
		for _, item := range items {
			names = append(names, item.(client.Object).GetName())
		}
		slices.Sort(names)
		for _, name := range names {
			request := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: rig.ns, Name: name}}
			if _, err := k.reconciler.Reconcile(ctx, request); err != nil {
				rig.t.Fatalf("reconcile %T %s: %v", k.list, name, err)
			}
		}
	}
}

// snapshotObjects renders every object of the site's kinds as JSON.
func (rig *operatorRig) snapshotObjects() string {
	rig.t.Helper()
	var out strings.Builder
	for _, list := range []client.ObjectList{&v1.StorageClusterList{}, &v1.StorageNodeList{}, &v1.VolumeList{},
		&v1.ReplicationList{}, &v1.ReplicaList{}} {
		if err := rig.c.List(testContext(rig.t), list, client.InNamespace(rig.ns)); err != nil {
			rig.t.Fatal(err)
		}
		data, err := json.MarshalIndent(list, "", " ")
		if err != nil {
			rig.t.Fatal(err)
		}
		out.Write(data)
	}
	return out.String()
}

// scriptedRun protects a volume and lets twenty seconds pass.
func scriptedRun(t *testing.T) (*operatorRig, chain.Ref) {
	rig := newOperatorRig(t, fakeClient(t), "baton")
	var ref chain.Ref
	rig.do(func(s *core.Site) error {
		for _, node := range []string{"a1", "a2"} {
			if err := rig.apply(s, node); err != nil {
				return err
			}
		}
		v, err := s.CreateVolume(core.CreateRequest{Name: "pvc-vm-disk", Shape: core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Block}})
		if err != nil {
			return err
		}
		ref = v.Ref
		_, err = s.Enable(v.Ref, clusterB)
		return err
	})
	for range 20 {
		rig.step()
	}
	return rig, ref
}

// TestReconcilesAreDeterministic: the same script of explicit calls (core
// operations, ticks, node reports and status reconciles in a fixed order) on
// two fake clients leaves byte-identical objects: no wall clock, no hidden
// goroutine, no map order reaches what the operator writes.
func TestReconcilesAreDeterministic(t *testing.T) {
	first, ref := scriptedRun(t)
	second, _ := scriptedRun(t)
	a, b := first.snapshotObjects(), second.snapshotObjects()
	if a != b {
		t.Fatalf("two identical runs differ:\n%s", firstDifference(a, b))
	}

	// And what they wrote is the story the script tells.
	var volume v1.Volume
	if err := first.c.Get(testContext(t), client.ObjectKey{Namespace: "baton", Name: string(ref.Volume)}, &volume); err != nil {
		t.Fatal(err)
	}
	if got := reasonsOf(volume.Status.Conditions); got != "Degraded=False/AsExpected Ready=True/Ready Replicating=True/Replicating" {
		t.Errorf("volume conditions: %s", got)
	}
	var replication v1.Replication
	if err := first.c.Get(testContext(t), client.ObjectKey{Namespace: "baton", Name: string(ref.Volume)}, &replication); err != nil {
		t.Fatal(err)
	}
	if replication.Status.Phase != v1.ReplicationInSync || replication.Status.LastSyncBytes != 1<<20 || replication.Status.LastSnapshot == nil {
		t.Errorf("replication status: phase %s, last sync %d bytes, last snapshot %v", replication.Status.Phase,
			replication.Status.LastSyncBytes, replication.Status.LastSnapshot)
	}
	if got := reasonsOf(replication.Status.Conditions); got != "Degraded=False/AsExpected InSync=True/InSync Ready=True/Ready" {
		t.Errorf("replication conditions: %s", got)
	}
}

func reasonsOf(conditions []metav1.Condition) string {
	var out []string
	for _, c := range conditions {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(la), len(lb))
}

// TestMetricsFollowTheRecords: after the scripted run the gauges count the
// volume and its pairing, the age of the last sync is the clock's, and the
// shipped bytes count each shipment once.
func TestMetricsFollowTheRecords(t *testing.T) {
	rig, ref := scriptedRun(t)
	var replication v1.Replication
	if err := rig.c.Get(testContext(t), client.ObjectKey{Namespace: "baton", Name: string(ref.Volume)}, &replication); err != nil {
		t.Fatal(err)
	}
	last, err := replication.Status.Cycle.LastSync.At.Time()
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"baton_site_volumes", map[string]string{"state": "Active"}, 1},
		{"baton_site_volumes", map[string]string{"state": "Tombstone"}, 0},
		{"baton_site_pairings", map[string]string{"phase": "Idle"}, 1},
		{"baton_site_replication_last_sync_age_seconds", map[string]string{"source": ref.String(), "target": string(clusterB)},
			rig.clock.Now().Sub(last).Seconds()},
	}
	for _, c := range checks {
		if got := metrictest.Value(t, rig.registry, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	shipments := metrictest.Value(t, rig.registry, "baton_site_replication_shipments_total", nil)
	bytes := metrictest.Value(t, rig.registry, "baton_site_replication_shipped_bytes_total", nil)
	if shipments < 3 || bytes != shipments*(1<<20) {
		t.Errorf("%v shipments of %v bytes, want at least 3 of 1 MiB each", shipments, bytes)
	}
}

// TestTheOperatorWaitsForItsCluster: without a StorageCluster a tick says so;
// once one exists the site runs; a changed layout rebuilds it; two clusters
// without --cluster-id are refused.
func TestTheOperatorWaitsForItsCluster(t *testing.T) {
	c := fakeClient(t)
	op, err := sitecontroller.NewOperator(sitecontroller.OperatorConfig{Client: c, Namespace: "baton",
		Context: testContext(t), Clock: coretest.NewClock(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Tick(testContext(t)); !errors.Is(err, sitecontroller.ErrNoCluster) {
		t.Fatalf("tick without a cluster: %v, want ErrNoCluster", err)
	}
	cluster := storageCluster("baton")
	if err := c.Create(testContext(t), cluster); err != nil {
		t.Fatal(err)
	}
	var id chain.ClusterID
	if err := op.Do(testContext(t), func(s *core.Site) error { id = s.Cluster(); return s.Tick() }); err != nil || id != clusterA {
		t.Fatalf("with a cluster: site %s, %v", id, err)
	}
	other := storageCluster("baton")
	other.Name, other.Spec.ClusterID = "site-z", "cccccccc-0000-4000-8000-00000000000c"
	if err := c.Create(testContext(t), other); err != nil {
		t.Fatal(err)
	}
	if err := op.Tick(testContext(t)); err == nil || !strings.Contains(err.Error(), "--cluster-id") {
		t.Fatalf("two clusters and no --cluster-id: %v", err)
	}
}

// TestAChangedLayoutRebuildsTheSite: a new replication interval on the
// StorageCluster reaches the next pairing the site makes.
func TestAChangedLayoutRebuildsTheSite(t *testing.T) {
	rig := newOperatorRig(t, fakeClient(t), "baton")
	intervalOfNewPairing := func(name string) time.Duration {
		var p core.Pairing
		rig.do(func(s *core.Site) error {
			for _, node := range []string{"a1", "a2"} {
				if err := rig.apply(s, node); err != nil {
					return err
				}
			}
			v, err := s.CreateVolume(core.CreateRequest{Name: name, Shape: core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Filesystem}})
			if err != nil {
				return err
			}
			p, err = s.Enable(v.Ref, clusterB)
			return err
		})
		return p.Interval
	}
	if got := intervalOfNewPairing("first"); got != 5*time.Second {
		t.Fatalf("first pairing every %s, want the cluster's 5s", got)
	}
	var cluster v1.StorageCluster
	if err := rig.c.Get(testContext(t), client.ObjectKey{Namespace: "baton", Name: clusterName}, &cluster); err != nil {
		t.Fatal(err)
	}
	cluster.Spec.ReplicationInterval.Duration = 7 * time.Second
	if err := rig.c.Update(testContext(t), &cluster); err != nil {
		t.Fatal(err)
	}
	if got := intervalOfNewPairing("second"); got != 7*time.Second {
		t.Fatalf("after the change a pairing every %s, want 7s", got)
	}
}

// TestTheStorageAPIClusterIsTheSite: the storage API's Cluster the operator
// hands out reaches the same core, through the same mutex.
func TestTheStorageAPIClusterIsTheSite(t *testing.T) {
	rig := newOperatorRig(t, fakeClient(t), "baton")
	cluster := rig.op.Local()
	ctx := testContext(t)
	for _, node := range []string{"a1", "a2"} {
		if err := cluster.Report(ctx, core.NodeStatus{Node: node, Usage: backend.Usage{SizeBytes: 1 << 40, FreeBytes: 1 << 40}}); err != nil {
			t.Fatal(err)
		}
	}
	v, err := cluster.CreateVolume(ctx, core.CreateRequest{Name: "pvc-1", Shape: core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Block}})
	if err != nil {
		t.Fatal(err)
	}
	if cluster.ID() != clusterA {
		t.Fatalf("ID %s, want %s", cluster.ID(), clusterA)
	}
	members, err := cluster.Members(ctx, v.Ref)
	if err != nil || len(members) != 1 || members[0].Ref != v.Ref {
		t.Fatalf("members %v, %v", members, err)
	}
	if _, err := cluster.Volume(ctx, ref(clusterA, 999)); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a missing volume: %v, want ErrNotFound", err)
	}
	spec, err := cluster.Spec(ctx, "a1")
	if err != nil || len(spec.Volumes) != 1 || spec.Volumes[0].Dataset != v.Dataset() {
		t.Fatalf("spec of a1: %+v, %v", spec, err)
	}
}
