package site_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// drillRig is site A as the DR site of B's volumes: its cluster, two nodes
// that reported, and replicas of B's members holding two snapshots.
type drillRig struct {
	*operatorRig
	drills *sitecontroller.TestFailoverReconciler
	target string
}

func newDrillRig(t *testing.T) *drillRig {
	c := apiServer(t)
	rig := &drillRig{operatorRig: newOperatorRig(t, c, newNamespace(t, c))}
	rig.drills = &sitecontroller.TestFailoverReconciler{Client: c, Clock: rig.clock, Local: rig.op.Local()}
	rig.target = newNamespace(t, c)
	rig.do(func(s *core.Site) error {
		for _, node := range []string{"a1", "a2"} {
			if err := s.Report(core.NodeStatus{Node: node, Address: node + ":7900",
				Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}}); err != nil {
				return err
			}
		}
		return nil
	})
	return rig
}

// protect makes A keep a replica of B's member n, of the given shape.
func (rig *drillRig) protect(n int, shape core.Shape) chain.Ref {
	rig.t.Helper()
	source := ref(clusterB, n)
	store, err := sitecontroller.NewStore(sitecontroller.StoreConfig{Client: rig.c, Namespace: rig.ns, Cluster: clusterA,
		ClusterName: clusterName, Context: testContext(rig.t)})
	if err != nil {
		rig.t.Fatal(err)
	}
	snaps := []core.SnapshotInfo{{Name: "baton-000001", GUID: "g1"}, {Name: "baton-000002", GUID: "g2"}}
	err = store.PutReplica(core.Replica{Source: source, Root: source, Shape: shape, Nodes: []string{"a1", "a2"},
		Received: map[string][]core.SnapshotInfo{"a1": snaps, "a2": snaps}, CreatedAt: rig.clock.Now()})
	if err != nil {
		rig.t.Fatal(err)
	}
	return source
}

func (rig *drillRig) drill(name, source string) *v1.TestFailover {
	rig.t.Helper()
	d := &v1.TestFailover{ObjectMeta: metav1.ObjectMeta{Namespace: rig.ns, Name: name},
		Spec: v1.TestFailoverSpec{Source: source, TargetNamespace: rig.target, PVCName: name + "-bubble"}}
	if err := rig.c.Create(testContext(rig.t), d); err != nil {
		rig.t.Fatal(err)
	}
	rig.reconcileDrill(name)
	return rig.getDrill(name)
}

func (rig *drillRig) reconcileDrill(name string) ctrl.Result {
	rig.t.Helper()
	result, err := rig.drills.Reconcile(testContext(rig.t), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: rig.ns, Name: name}})
	if err != nil {
		rig.t.Fatalf("reconcile drill %s: %v", name, err)
	}
	return result
}

func (rig *drillRig) getDrill(name string) *v1.TestFailover {
	rig.t.Helper()
	d := &v1.TestFailover{}
	if err := rig.c.Get(testContext(rig.t), client.ObjectKey{Namespace: rig.ns, Name: name}, d); err != nil {
		rig.t.Fatal(err)
	}
	return d
}

// TestABlockSourceYieldsABlockBubble is seed 000's bug as a test: a VM's disk
// is a Block PV; the drill's PV and PVC must be Block too, or the kubelet
// mounts a raw guest disk. The drill leaves replication alone, and deleting
// it removes the PVC, the PV and the bubble.
func TestABlockSourceYieldsABlockBubble(t *testing.T) {
	rig := newDrillRig(t)
	source := rig.protect(1, core.Shape{SizeBytes: 10 << 30, PlaceCount: 2, VolumeMode: core.Block})
	block := corev1.PersistentVolumeBlock
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-vm-disk"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: &block,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: sitecontroller.DefaultCSIDriverName, VolumeHandle: source.String()}}}}
	if err := rig.c.Create(testContext(t), pv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rig.c.Delete(testContext(t), pv) })

	d := rig.drill("vm-disk", "pvc-vm-disk")
	if d.Status.Phase != v1.TestFailoverReady || d.Status.SourceVolumeMode != block || d.Status.Snapshot.Name != "baton-000002" {
		t.Fatalf("drill status %+v", d.Status)
	}
	var bubblePV corev1.PersistentVolume
	if err := rig.c.Get(testContext(t), client.ObjectKey{Name: d.Status.PVName}, &bubblePV); err != nil {
		t.Fatal(err)
	}
	var bubblePVC corev1.PersistentVolumeClaim
	if err := rig.c.Get(testContext(t), client.ObjectKey{Namespace: rig.target, Name: "vm-disk-bubble"}, &bubblePVC); err != nil {
		t.Fatal(err)
	}
	switch {
	case bubblePV.Spec.VolumeMode == nil || *bubblePV.Spec.VolumeMode != block:
		t.Fatalf("bubble PV volumeMode %v, want Block", bubblePV.Spec.VolumeMode)
	case bubblePVC.Spec.VolumeMode == nil || *bubblePVC.Spec.VolumeMode != block:
		t.Fatalf("bubble PVC volumeMode %v, want Block", bubblePVC.Spec.VolumeMode)
	case bubblePV.Spec.CSI.VolumeHandle != string(d.Status.BubbleVolume) || bubblePVC.Spec.VolumeName != bubblePV.Name:
		t.Fatalf("PV handle %s, PVC volumeName %s; bubble %s", bubblePV.Spec.CSI.VolumeHandle, bubblePVC.Spec.VolumeName, d.Status.BubbleVolume)
	case bubblePV.Spec.ClaimRef == nil || bubblePV.Spec.ClaimRef.Namespace != rig.target || bubblePV.Spec.ClaimRef.Name != "vm-disk-bubble":
		t.Fatalf("PV claimRef %+v", bubblePV.Spec.ClaimRef)
	}

	// Replication is undisturbed: the replica stays open, the bubble is no hop.
	var replica v1.Replica
	if err := rig.c.Get(testContext(t), client.ObjectKey{Namespace: rig.ns, Name: string(source.Cluster) + "." + string(source.Volume)}, &replica); err != nil {
		t.Fatal(err)
	}
	if replica.Status.ClonedInto != "" {
		t.Fatalf("the drill closed the replica: clonedInto %s", replica.Status.ClonedInto)
	}
	bubble, err := chain.ParseRef(string(d.Status.BubbleVolume))
	if err != nil {
		t.Fatal(err)
	}
	var volume v1.Volume
	if err := rig.c.Get(testContext(t), client.ObjectKey{Namespace: rig.ns, Name: string(bubble.Volume)}, &volume); err != nil {
		t.Fatal(err)
	}
	if volume.Spec.RootHandle != d.Status.BubbleVolume || volume.Spec.Generation != 0 || volume.Spec.VolumeMode != block {
		t.Fatalf("bubble volume %+v", volume.Spec)
	}
	rig.reconcileDrill("vm-disk") // a second pass changes nothing
	if again := rig.getDrill("vm-disk"); again.Status.BubbleVolume != d.Status.BubbleVolume || again.ResourceVersion != d.ResourceVersion {
		t.Fatalf("a second reconcile moved the drill: %s -> %s", d.ResourceVersion, again.ResourceVersion)
	}

	rig.deleteDrill("vm-disk", bubble)
	if err := rig.c.Get(testContext(t), client.ObjectKey{Name: bubblePV.Name}, &corev1.PersistentVolume{}); !apierrors.IsNotFound(err) {
		t.Fatalf("bubble PV after cleanup: %v", err)
	}
	if err := rig.c.Get(testContext(t), client.ObjectKey{Namespace: rig.target, Name: "vm-disk-bubble"}, &corev1.PersistentVolumeClaim{}); !apierrors.IsNotFound(err) {
		t.Fatalf("bubble PVC after cleanup: %v", err)
	}
}

// deleteDrill deletes a drill and plays the parts of the others: the
// protection controller releases the PV and PVC, the nodes destroy the data.
func (rig *drillRig) deleteDrill(name string, bubble chain.Ref) {
	rig.t.Helper()
	if err := rig.c.Delete(testContext(rig.t), rig.getDrill(name)); err != nil {
		rig.t.Fatal(err)
	}
	if result := rig.reconcileDrill(name); result.RequeueAfter == 0 {
		rig.t.Fatal("the drill let go before its bubble was gone")
	}
	if d := rig.getDrill(name); d.Status.Phase != v1.TestFailoverCleaningUp {
		rig.t.Fatalf("deleted drill is %s", d.Status.Phase)
	}
	d := rig.getDrill(name)
	for _, o := range []client.Object{
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: rig.target, Name: d.Spec.PVCName}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: d.Status.PVName}},
	} {
		if err := rig.c.Get(testContext(rig.t), client.ObjectKeyFromObject(o), o); err == nil {
			o.SetFinalizers(nil)
			if err := rig.c.Update(testContext(rig.t), o); err != nil && !apierrors.IsNotFound(err) {
				rig.t.Fatal(err)
			}
		}
	}
	rig.do(func(s *core.Site) error {
		for _, node := range []string{"a1", "a2"} {
			if err := s.Report(core.NodeStatus{Node: node}); err != nil {
				return err
			}
		}
		_, err := s.Volume(bubble)
		if err == nil {
			rig.t.Error("the bubble's record outlived its data")
		}
		return nil
	})
	rig.clock.Advance(time.Minute)
	rig.reconcileDrill(name)
	err := rig.c.Get(testContext(rig.t), client.ObjectKey{Namespace: rig.ns, Name: name}, &v1.TestFailover{})
	if !apierrors.IsNotFound(err) {
		rig.t.Fatalf("drill after cleanup: %v", err)
	}
}

// TestAFilesystemBubbleByHandle: a drill named by the volume handle alone
// takes the shape from the replica: Filesystem with its xfs.
func TestAFilesystemBubbleByHandle(t *testing.T) {
	rig := newDrillRig(t)
	source := rig.protect(5, core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Filesystem, FsType: "xfs"})
	d := rig.drill("db", source.String())
	var pv corev1.PersistentVolume
	if err := rig.c.Get(testContext(t), client.ObjectKey{Name: d.Status.PVName}, &pv); err != nil {
		t.Fatalf("drill %+v: %v", d.Status, err)
	}
	if *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pv.Spec.CSI.FSType != "xfs" || d.Status.SourceFSType != "xfs" {
		t.Fatalf("PV mode %s fsType %q, drill fsType %q", *pv.Spec.VolumeMode, pv.Spec.CSI.FSType, d.Status.SourceFSType)
	}
	if *pv.Spec.Capacity.Storage() != resource.MustParse("1Gi") {
		t.Fatalf("PV capacity %s", pv.Spec.Capacity.Storage())
	}

	// A source this site keeps no replica of waits, and says so.
	unknown := rig.drill("elsewhere", ref(clusterB, 9).String())
	if unknown.Status.Phase != v1.TestFailoverPending || reasonsOf(unknown.Status.Conditions) != "Ready=False/SourceNotFound" {
		t.Fatalf("drill of an unknown source: %s %s", unknown.Status.Phase, reasonsOf(unknown.Status.Conditions))
	}
	named := &v1.TestFailover{ObjectMeta: metav1.ObjectMeta{Namespace: rig.ns, Name: "old"},
		Spec: v1.TestFailoverSpec{Source: source.String(), Snapshot: "baton-000009", TargetNamespace: rig.target, PVCName: "old"}}
	if err := rig.c.Create(testContext(t), named); err != nil {
		t.Fatal(err)
	}
	rig.reconcileDrill("old")
	if got := rig.getDrill("old"); reasonsOf(got.Status.Conditions) != "Ready=False/SnapshotNotFound" {
		t.Fatalf("drill of a missing snapshot: %s", reasonsOf(got.Status.Conditions))
	}
}
