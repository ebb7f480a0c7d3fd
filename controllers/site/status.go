package site

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/conditions"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// The status reconcilers read a record object, compute its conditions at the
// clock's now (conditions.go) and write them; they write nothing else, so the
// store and they never fight over a field. A conflict with the store's write
// is returned and the request retried. Conditions that age (a node's reports,
// a pairing's last shipment) requeue after statusRequeue.
//
// One reconciler does it for every kind of record (statusReconciler); what
// differs per kind -- how its record is read, which other status fields it
// has -- is its statusKind.
const statusRequeue = 15 * time.Second

// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=volumes;replications;replicas,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=storagenodes;storageclusters,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=volumes/status;replications/status;replicas/status;storagenodes/status;storageclusters/status,verbs=get;update

// VolumeStatusReconciler writes a Volume's Ready, Replicating and Degraded.
type VolumeStatusReconciler = statusReconciler[*v1.Volume, volumeStatus]

// ReplicationStatusReconciler writes a Replication's phase, Ready, InSync and
// Degraded.
type ReplicationStatusReconciler = statusReconciler[*v1.Replication, replicationStatus]

// StorageNodeStatusReconciler writes a StorageNode's Reachable and Ready.
type StorageNodeStatusReconciler = statusReconciler[*v1.StorageNode, storageNodeStatus]

// ReplicaStatusReconciler writes a Replica's Received.
type ReplicaStatusReconciler = statusReconciler[*v1.Replica, replicaStatus]

// statusReconciler writes the status of one kind of record object.
type statusReconciler[O client.Object, K statusKind[O]] struct {
	Client client.Client
	Clock  backend.Clock
}

// statusKind is what the status reconciler of one kind knows of it.
type statusKind[O client.Object] interface {
	// name names the controller.
	name() string
	object() O
	// describe computes the object's conditions at now and sets its other
	// status fields, reporting whether those changed; describe false: the
	// object is no record of a storage cluster, not ours to describe.
	describe(ctx context.Context, c client.Client, o O, now time.Time) (want []metav1.Condition, changed, describe bool, err error)
	// status is where the object keeps its conditions and the generation
	// its status observed (nil: it keeps none).
	status(o O) (conditions *[]metav1.Condition, observed *int64)
	// requeue is when to look again: conditions that age need another look.
	requeue() time.Duration
	// watches adds what else wakes the object.
	watches(b *builder.Builder) *builder.Builder
}

func (r *statusReconciler[O, K]) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var kind K
	o := kind.object()
	if err := r.Client.Get(ctx, request.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.Clock.Now()
	want, changed, describe, err := kind.describe(ctx, r.Client, o, now)
	if err != nil || !describe {
		return ctrl.Result{}, err
	}
	stored, observed := kind.status(o)
	if conditions.Set(stored, want, o.GetGeneration(), now) {
		changed = true
	}
	if observed != nil && *observed != o.GetGeneration() {
		*observed, changed = o.GetGeneration(), true
	}
	if changed {
		if err := r.Client.Status().Update(ctx, o); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: kind.requeue()}, nil
}

// SetupWithManager registers the reconciler.
func (r *statusReconciler[O, K]) SetupWithManager(m ctrl.Manager) error {
	var kind K
	return kind.watches(ctrl.NewControllerManagedBy(m).Named(kind.name()).For(kind.object())).Complete(r)
}

// volumeStatus: a Volume's conditions come from its record and its pairing
// (the Replication of the same name), which wakes it.
type volumeStatus struct{}

func (volumeStatus) name() string           { return "volume-status" }
func (volumeStatus) object() *v1.Volume     { return &v1.Volume{} }
func (volumeStatus) requeue() time.Duration { return statusRequeue }

func (volumeStatus) status(o *v1.Volume) (*[]metav1.Condition, *int64) {
	return &o.Status.Conditions, &o.Status.ObservedGeneration
}

func (volumeStatus) describe(ctx context.Context, c client.Client, o *v1.Volume, _ time.Time) ([]metav1.Condition, bool, bool, error) {
	cluster := o.Labels[ClusterLabel]
	if !chain.IsUUID(cluster) {
		return nil, false, false, nil
	}
	v, err := volumeRecord(chain.ClusterID(cluster), o)
	if err != nil {
		return nil, false, false, err
	}
	var p *core.Pairing
	var replication v1.Replication
	switch err := c.Get(ctx, client.ObjectKeyFromObject(o), &replication); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, false, false, fmt.Errorf("failed to read the pairing of %s: %w", v.Ref, err)
	case replication.Labels[ClusterLabel] == cluster:
		record, err := pairingRecord(&replication)
		if err != nil {
			return nil, false, false, err
		}
		p = &record
	}
	return volumeConditions(v, p), false, true, nil
}

func (volumeStatus) watches(b *builder.Builder) *builder.Builder {
	return b.Watches(&v1.Replication{}, handler.EnqueueRequestsFromMapFunc(sameName))
}

func sameName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// replicationStatus: a Replication's conditions and phase come from its
// pairing's record once it has a cycle.
type replicationStatus struct{}

func (replicationStatus) name() string                                { return "replication-status" }
func (replicationStatus) object() *v1.Replication                     { return &v1.Replication{} }
func (replicationStatus) requeue() time.Duration                      { return statusRequeue }
func (replicationStatus) watches(b *builder.Builder) *builder.Builder { return b }

func (replicationStatus) status(o *v1.Replication) (*[]metav1.Condition, *int64) {
	return &o.Status.Conditions, &o.Status.ObservedGeneration
}

func (replicationStatus) describe(_ context.Context, _ client.Client, o *v1.Replication, now time.Time) ([]metav1.Condition, bool, bool, error) {
	if !chain.IsUUID(o.Labels[ClusterLabel]) || o.Status.Cycle == nil {
		return nil, false, false, nil
	}
	p, err := pairingRecord(o)
	if err != nil {
		return nil, false, false, err
	}
	phase := replicationPhase(p, now)
	changed := o.Status.Phase != phase
	o.Status.Phase = phase
	return replicationConditions(p, now), changed, true, nil
}

// storageNodeStatus: a StorageNode's conditions and Reachable come from its
// node's reports.
type storageNodeStatus struct{}

func (storageNodeStatus) name() string                                { return "storagenode-status" }
func (storageNodeStatus) object() *v1.StorageNode                     { return &v1.StorageNode{} }
func (storageNodeStatus) requeue() time.Duration                      { return statusRequeue }
func (storageNodeStatus) watches(b *builder.Builder) *builder.Builder { return b }

func (storageNodeStatus) status(o *v1.StorageNode) (*[]metav1.Condition, *int64) {
	return &o.Status.Conditions, &o.Status.ObservedGeneration
}

func (storageNodeStatus) describe(_ context.Context, _ client.Client, o *v1.StorageNode, now time.Time) ([]metav1.Condition, bool, bool, error) {
	n, err := nodeRecord(o)
	if err != nil {
		return nil, false, false, err
	}
	want := nodeConditions(n, now)
	reachable := want[0].Status == metav1.ConditionTrue
	changed := o.Status.Reachable != reachable
	o.Status.Reachable = reachable
	return want, changed, true, nil
}

// replicaStatus: a Replica's Received comes from its record alone; nothing
// about it ages, and it records no observed generation.
type replicaStatus struct{}

func (replicaStatus) name() string                                { return "replica-status" }
func (replicaStatus) object() *v1.Replica                         { return &v1.Replica{} }
func (replicaStatus) requeue() time.Duration                      { return 0 }
func (replicaStatus) watches(b *builder.Builder) *builder.Builder { return b }

func (replicaStatus) status(o *v1.Replica) (*[]metav1.Condition, *int64) {
	return &o.Status.Conditions, nil
}

func (replicaStatus) describe(_ context.Context, _ client.Client, o *v1.Replica, _ time.Time) ([]metav1.Condition, bool, bool, error) {
	rep, err := replicaRecord(o)
	if err != nil {
		return nil, false, false, err
	}
	return replicaConditions(rep), false, true, nil
}

// StorageClusterStatusReconciler counts a cluster's nodes and capacity and
// says whether it serves volumes.
type StorageClusterStatusReconciler = statusReconciler[*v1.StorageCluster, storageClusterStatus]

// storageClusterStatus: a StorageCluster's counts, capacity, phase and
// conditions come from its StorageNodes' statuses, which wake it.
type storageClusterStatus struct{}

func (storageClusterStatus) name() string               { return "storagecluster-status" }
func (storageClusterStatus) object() *v1.StorageCluster { return &v1.StorageCluster{} }
func (storageClusterStatus) requeue() time.Duration     { return 0 }

func (storageClusterStatus) watches(b *builder.Builder) *builder.Builder {
	return b.Watches(&v1.StorageNode{}, enqueueClusterOfNode())
}

func (storageClusterStatus) status(o *v1.StorageCluster) (*[]metav1.Condition, *int64) {
	return &o.Status.Conditions, &o.Status.ObservedGeneration
}

func (storageClusterStatus) describe(ctx context.Context, c client.Client, o *v1.StorageCluster, _ time.Time) ([]metav1.Condition, bool, bool, error) {
	var nodes v1.StorageNodeList
	if err := c.List(ctx, &nodes, client.InNamespace(o.Namespace)); err != nil {
		return nil, false, false, err
	}
	before := o.Status.DeepCopy()
	want := clusterStatus(&o.Status, o.Spec.PlaceCount, o.Name, nodes.Items)
	return want, !equality.Semantic.DeepEqual(before, &o.Status), true, nil
}
