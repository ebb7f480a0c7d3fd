package site

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/conditions"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

const (
	// DrillFinalizer holds a TestFailover until its bubble is gone.
	DrillFinalizer = "storage.baton.dev/testfailover"
	// DrillLabel marks a bubble's PV and PVC with "<namespace>.<name>" of its
	// TestFailover: only objects so marked are ever deleted by a cleanup.
	DrillLabel = "storage.baton.dev/testfailover"
	// DefaultCSIDriverName is the CSI driver the bubble's PV names.
	DefaultCSIDriverName = "csi.baton.dev"
	// drillRetry is how soon a drill waiting for its source, its replica's
	// snapshot or its bubble's removal looks again.
	drillRetry = 10 * time.Second
)

// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=testfailovers,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=testfailovers/status,verbs=get;update
// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=testfailovers/finalizers,verbs=update
// PVs and the bubble PVCs are read uncached (the manager's client is built with
// them out of its cache): the drills touch a handful, and a cluster-wide watch
// of every claim would need far more than get, create and delete.
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;create;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;create;delete

// TestFailoverReconciler runs disaster-recovery drills on the DR site: it
// clones the newest (or the named) snapshot of the replica of a protected
// volume into a bubble volume, and exposes it as a static PV and PVC that
// carry the source's volumeMode and fsType (a VM's disk is Block: seed 000).
// The replica stays open and the chain records no hop, so replication goes
// on. Deleting the TestFailover removes the PVC, the PV and the bubble.
type TestFailoverReconciler struct {
	Client client.Client
	Clock  backend.Clock
	// Local is the site's control plane: the Operator's, or a simulated
	// site's (its drills run this reconciler).
	Local *storageapi.Local
	// DriverName is the CSI driver the PV names; empty is DefaultCSIDriverName.
	DriverName string
}

// drillSource is what a drill clones and the shape its bubble carries.
type drillSource struct {
	root   chain.Ref
	mode   corev1.PersistentVolumeMode
	fsType string
}

func (r *TestFailoverReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var drill v1.TestFailover
	if err := r.Client.Get(ctx, request.NamespacedName, &drill); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !drill.DeletionTimestamp.IsZero() {
		return r.cleanup(ctx, &drill)
	}
	if controllerutil.AddFinalizer(&drill, DrillFinalizer) {
		if err := r.Client.Update(ctx, &drill); err != nil {
			return ctrl.Result{}, err
		}
	}
	source, reason, err := r.source(ctx, &drill)
	if err != nil || reason != "" {
		return r.wait(ctx, &drill, v1.TestFailoverPending, v1.TestFailoverSourceNotFoundReason, reason, err)
	}
	drill.Status.SourceVolumeMode, drill.Status.SourceFSType = source.mode, source.fsType
	bubble, err := r.bubble(ctx, &drill, source)
	switch {
	case errors.Is(err, core.ErrNoReplica):
		return r.wait(ctx, &drill, v1.TestFailoverPending, v1.TestFailoverSourceNotFoundReason, err.Error(), nil)
	case errors.Is(err, core.ErrNoSnapshot):
		return r.wait(ctx, &drill, v1.TestFailoverPending, v1.TestFailoverSnapshotNotFoundReason, err.Error(), nil)
	case err != nil:
		return r.wait(ctx, &drill, v1.TestFailoverCloning, v1.TestFailoverCloningReason, "", err)
	}
	drill.Status.BubbleVolume = v1.VolumeHandle(bubble.Ref.String())
	drill.Status.Snapshot = &v1.SnapshotRef{Name: bubble.Origin.Snapshot, GUID: bubble.Origin.GUID}
	if reason, err := r.expose(ctx, &drill, bubble, source); err != nil || reason != "" {
		return r.wait(ctx, &drill, v1.TestFailoverFailed, v1.TestFailoverFailedReason, reason, err)
	}
	return ctrl.Result{}, r.report(ctx, &drill, v1.TestFailoverReady,
		condition(v1.TestFailoverReadyCondition, true, v1.TestFailoverReadyReason,
			fmt.Sprintf("PVC %s/%s is bound to PV %s, a %s clone of %s", drill.Spec.TargetNamespace, drill.Spec.PVCName,
				drill.Status.PVName, source.mode, drill.Status.Snapshot.Name)))
}

// wait reports a drill that cannot go on yet (or failed) and retries later; an
// error is returned as it is.
func (r *TestFailoverReconciler) wait(ctx context.Context, drill *v1.TestFailover, phase v1.TestFailoverPhase,
	reason, message string, err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	if report := r.report(ctx, drill, phase, condition(v1.TestFailoverReadyCondition, false, reason, message)); report != nil {
		return ctrl.Result{}, report
	}
	return ctrl.Result{RequeueAfter: drillRetry}, nil
}

func (r *TestFailoverReconciler) report(ctx context.Context, drill *v1.TestFailover, phase v1.TestFailoverPhase,
	want ...metav1.Condition) error {
	var stored v1.TestFailover
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(drill), &stored); err != nil {
		return err
	}
	before := stored.Status.DeepCopy()
	drill.Status.Phase, drill.Status.ObservedGeneration = phase, drill.Generation
	conditions.Set(&drill.Status.Conditions, want, drill.Generation, r.Clock.Now())
	if equality.Semantic.DeepEqual(before, &drill.Status) {
		return nil
	}
	return r.Client.Status().Update(ctx, drill)
}

// source resolves spec.source: a volume handle (the shape then comes from the
// replica), or the name of the protected volume's PersistentVolume on this
// site (its volumeMode and fsType are the ones the bubble must carry).
func (r *TestFailoverReconciler) source(ctx context.Context, drill *v1.TestFailover) (drillSource, string, error) {
	if root, err := chain.ParseRef(drill.Spec.Source); err == nil {
		return r.sourceFromReplica(ctx, drill.Namespace, root)
	}
	var pv corev1.PersistentVolume
	err := r.Client.Get(ctx, client.ObjectKey{Name: drill.Spec.Source}, &pv)
	if apierrors.IsNotFound(err) {
		return drillSource{}, fmt.Sprintf("no PersistentVolume %s and no such volume handle", drill.Spec.Source), nil
	}
	if err != nil {
		return drillSource{}, "", fmt.Errorf("failed to read PV %s: %w", drill.Spec.Source, err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != r.driverName() {
		return drillSource{}, fmt.Sprintf("PV %s is not a volume of %s", pv.Name, r.driverName()), nil
	}
	root, err := chain.ParseRef(pv.Spec.CSI.VolumeHandle)
	if err != nil {
		return drillSource{}, fmt.Sprintf("PV %s: %v", pv.Name, err), nil
	}
	mode := corev1.PersistentVolumeFilesystem
	if pv.Spec.VolumeMode != nil {
		mode = *pv.Spec.VolumeMode
	}
	return drillSource{root: root, mode: mode, fsType: pv.Spec.CSI.FSType}, "", nil
}

func (r *TestFailoverReconciler) sourceFromReplica(ctx context.Context, namespace string, root chain.Ref) (drillSource, string, error) {
	var replicas v1.ReplicaList
	if err := r.Client.List(ctx, &replicas, client.InNamespace(namespace)); err != nil {
		return drillSource{}, "", fmt.Errorf("failed to list replicas: %w", err)
	}
	best := -1
	for i, rep := range replicas.Items {
		if string(rep.Spec.RootHandle) == root.String() && rep.Status.ClonedInto == "" &&
			(best < 0 || rep.Spec.SourceGeneration > replicas.Items[best].Spec.SourceGeneration) {
			best = i
		}
	}
	if best < 0 {
		return drillSource{}, fmt.Sprintf("no open replica of %s on this site", root), nil
	}
	spec := replicas.Items[best].Spec
	return drillSource{root: root, mode: spec.VolumeMode, fsType: spec.FSType}, "", nil
}

// bubble makes (or finds) the drill's clone in the core. Its name is the
// TestFailover's UID: stable across reconciles, distinct across drills.
func (r *TestFailoverReconciler) bubble(ctx context.Context, drill *v1.TestFailover, source drillSource) (core.Volume, error) {
	if drill.Status.BubbleVolume == "" {
		err := r.report(ctx, drill, v1.TestFailoverCloning, condition(v1.TestFailoverReadyCondition, false,
			v1.TestFailoverCloningReason, "cloning the replica of "+source.root.String()))
		if err != nil {
			return core.Volume{}, err
		}
	}
	return r.Local.Drill(ctx, core.DrillRequest{Name: drillName(drill), Root: source.root, Snapshot: drill.Spec.Snapshot})
}

func drillName(drill *v1.TestFailover) string { return "testfailover-" + string(drill.UID) }

func drillMark(drill *v1.TestFailover) string { return drill.Namespace + "." + drill.Name }

func (r *TestFailoverReconciler) driverName() string {
	if r.DriverName == "" {
		return DefaultCSIDriverName
	}
	return r.DriverName
}

// expose creates the bubble's static PV and its PVC, bound to each other, both
// in the source's volumeMode. A PVC of that name that is not the drill's is a
// reason to fail, never something to take over.
func (r *TestFailoverReconciler) expose(ctx context.Context, drill *v1.TestFailover, bubble core.Volume, source drillSource) (string, error) {
	size, err := toInt64("sizeBytes", bubble.SizeBytes)
	if err != nil {
		return err.Error(), nil
	}
	capacity := *resource.NewQuantity(size, resource.BinarySI)
	mode := bubbleVolumeMode(source.mode)
	labels := map[string]string{DrillLabel: drillMark(drill)}
	pvName := "baton-drill-" + string(bubble.Ref.Volume)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName, Labels: labels},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: capacity},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, // the drill removes the bubble itself
			StorageClassName:              "",
			VolumeMode:                    mode,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: drill.Spec.TargetNamespace, Name: drill.Spec.PVCName},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: r.driverName(), VolumeHandle: bubble.Ref.String(), FSType: source.fsType}},
		}}
	if source.mode == corev1.PersistentVolumeBlock {
		pv.Spec.CSI.FSType = "" // a raw device has no filesystem to mount
	}
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: drill.Spec.TargetNamespace, Name: drill.Spec.PVCName, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: capacity}},
			StorageClassName: &empty,
			VolumeMode:       mode,
			VolumeName:       pvName,
		}}
	for _, o := range []client.Object{pv, pvc} {
		if reason, err := r.ensureOwned(ctx, drill, o); reason != "" || err != nil {
			return reason, err
		}
	}
	drill.Status.PVName, drill.Status.PVCName = pvName, drill.Spec.PVCName
	return "", nil
}

// ensureOwned creates o unless it exists; one that exists must carry the
// drill's mark.
func (r *TestFailoverReconciler) ensureOwned(ctx context.Context, drill *v1.TestFailover, o client.Object) (string, error) {
	existing := o.DeepCopyObject().(client.Object)
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(o), existing)
	switch {
	case apierrors.IsNotFound(err):
		return "", r.Client.Create(ctx, o)
	case err != nil:
		return "", err
	case existing.GetLabels()[DrillLabel] != drillMark(drill):
		return fmt.Sprintf("%T %s exists and is not this drill's", o, client.ObjectKeyFromObject(o)), nil
	}
	return "", nil
}

// cleanup removes the PVC, the PV and the bubble, then lets the TestFailover
// go. The core removes a volume once its nodes destroyed the data, so the
// finalizer stays until the bubble's record is gone.
func (r *TestFailoverReconciler) cleanup(ctx context.Context, drill *v1.TestFailover) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(drill, DrillFinalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.report(ctx, drill, v1.TestFailoverCleaningUp, condition(v1.TestFailoverCleanedUpCondition, false,
		v1.TestFailoverCleaningUpReason, "removing the bubble")); err != nil {
		return ctrl.Result{}, err
	}
	gone := true
	for _, o := range []client.Object{
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: drill.Spec.TargetNamespace, Name: drill.Spec.PVCName}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: drill.Status.PVName}},
	} {
		removed, err := r.deleteOwned(ctx, drill, o)
		if err != nil {
			return ctrl.Result{}, err
		}
		gone = gone && removed
	}
	bubbleGone, err := r.deleteBubble(ctx, drill)
	if err != nil || !gone || !bubbleGone {
		return ctrl.Result{RequeueAfter: drillRetry}, err
	}
	controllerutil.RemoveFinalizer(drill, DrillFinalizer)
	return ctrl.Result{}, r.Client.Update(ctx, drill)
}

// deleteOwned deletes o if it carries the drill's mark; it reports whether o
// is gone (or was never the drill's).
func (r *TestFailoverReconciler) deleteOwned(ctx context.Context, drill *v1.TestFailover, o client.Object) (bool, error) {
	if o.GetName() == "" {
		return true, nil
	}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil || o.GetLabels()[DrillLabel] != drillMark(drill) {
		return err == nil, err
	}
	if o.GetDeletionTimestamp().IsZero() {
		if err := r.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
	return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
}

// deleteBubble asks the core to delete the bubble; it reports whether the
// bubble's record is gone.
func (r *TestFailoverReconciler) deleteBubble(ctx context.Context, drill *v1.TestFailover) (bool, error) {
	if drill.Status.BubbleVolume == "" {
		return true, nil
	}
	ref, err := chain.ParseRef(string(drill.Status.BubbleVolume))
	if err != nil {
		return false, err
	}
	if _, err := r.Local.Volume(ctx, ref); errors.Is(err, core.ErrNotFound) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	return false, r.Local.DeleteVolume(ctx, ref)
}

// DrillProgress says where a drill stands: its phase, and the Ready
// condition's reason and message when it has one.
func DrillProgress(drill *v1.TestFailover) string {
	state := string(drill.Status.Phase)
	if c := meta.FindStatusCondition(drill.Status.Conditions, v1.TestFailoverReadyCondition); c != nil && c.Message != "" {
		state += " (" + c.Reason + ": " + c.Message + ")"
	}
	return state
}

// DrillLeftovers lists, one line each, what the named drills left on the
// site once their TestFailovers were deleted: a TestFailover still there
// (the finalizer holds it until its bubble is gone), a claim in target, a
// PV marked as any drill's bubble, a bubble volume the site still records.
// None once the cleanup is done. A read that fails is a line too: nothing
// is taken as gone unseen.
func DrillLeftovers(ctx context.Context, c client.Reader, drills []client.ObjectKey, target string,
	records interface{ Volumes() ([]core.Volume, error) }, bubbles []string) []string {
	var left []string
	for _, key := range drills {
		if err := c.Get(ctx, key, &v1.TestFailover{}); !apierrors.IsNotFound(err) {
			left = append(left, "TestFailover "+key.Name)
		}
	}
	var claims corev1.PersistentVolumeClaimList
	var volumes corev1.PersistentVolumeList
	if err := c.List(ctx, &claims, client.InNamespace(target)); err != nil {
		return append(left, err.Error())
	}
	if err := c.List(ctx, &volumes, client.HasLabels{DrillLabel}); err != nil {
		return append(left, err.Error())
	}
	for _, pvc := range claims.Items {
		left = append(left, "PVC "+target+"/"+pvc.Name)
	}
	for _, pv := range volumes.Items {
		left = append(left, "PV "+pv.Name)
	}
	recorded, err := records.Volumes()
	if err != nil {
		return append(left, err.Error())
	}
	for _, b := range bubbles {
		if slices.ContainsFunc(recorded, func(v core.Volume) bool { return v.Ref.String() == b }) {
			left = append(left, "bubble "+b)
		}
	}
	return left
}

func (r *TestFailoverReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("testfailover").For(&v1.TestFailover{}).Complete(r)
}
