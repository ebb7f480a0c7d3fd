package site

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// The status reconcilers read a record object, compute its conditions at the
// clock's now (conditions.go) and write them; they write nothing else, so the
// store and they never fight over a field. A conflict with the store's write
// is returned and the request retried. Conditions that age (a node's reports,
// a pairing's last shipment) requeue after statusRequeue.
const statusRequeue = 15 * time.Second

// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=volumes;replications;replicas,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=storagenodes;storageclusters,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=volumes/status;replications/status;replicas/status;storagenodes/status;storageclusters/status,verbs=get;update

// VolumeStatusReconciler writes a Volume's Ready, Replicating and Degraded.
type VolumeStatusReconciler struct {
	Client client.Client
	Clock  backend.Clock
}

func (r *VolumeStatusReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var o v1.Volume
	if err := r.Client.Get(ctx, request.NamespacedName, &o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster := o.Labels[ClusterLabel]
	if !chain.IsUUID(cluster) {
		return ctrl.Result{}, nil // no record of a storage cluster: not ours to describe
	}
	v, err := volumeRecord(chain.ClusterID(cluster), &o)
	if err != nil {
		return ctrl.Result{}, err
	}
	var p *core.Pairing
	var replication v1.Replication
	switch err := r.Client.Get(ctx, request.NamespacedName, &replication); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("failed to read the pairing of %s: %w", v.Ref, err)
	case replication.Labels[ClusterLabel] == cluster:
		record, err := pairingRecord(&replication)
		if err != nil {
			return ctrl.Result{}, err
		}
		p = &record
	}
	changed := mergeConditions(&o.Status.Conditions, volumeConditions(v, p), o.Generation, r.Clock.Now())
	return ctrl.Result{RequeueAfter: statusRequeue}, r.write(ctx, &o, changed)
}

func (r *VolumeStatusReconciler) write(ctx context.Context, o *v1.Volume, changed bool) error {
	if o.Status.ObservedGeneration != o.Generation {
		o.Status.ObservedGeneration, changed = o.Generation, true
	}
	if !changed {
		return nil
	}
	return r.Client.Status().Update(ctx, o)
}

// SetupWithManager registers the reconciler; a Replication wakes the Volume
// of the same name (the pairing is the member's).
func (r *VolumeStatusReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("volume-status").For(&v1.Volume{}).
		Watches(&v1.Replication{}, handler.EnqueueRequestsFromMapFunc(sameName)).Complete(r)
}

func sameName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// ReplicationStatusReconciler writes a Replication's phase, Ready, InSync and
// Degraded.
type ReplicationStatusReconciler struct {
	Client client.Client
	Clock  backend.Clock
}

func (r *ReplicationStatusReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var o v1.Replication
	if err := r.Client.Get(ctx, request.NamespacedName, &o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !chain.IsUUID(o.Labels[ClusterLabel]) || o.Status.Cycle == nil {
		return ctrl.Result{}, nil
	}
	p, err := pairingRecord(&o)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	changed := mergeConditions(&o.Status.Conditions, replicationConditions(p, now), o.Generation, now)
	if phase := replicationPhase(p, now); o.Status.Phase != phase {
		o.Status.Phase, changed = phase, true
	}
	if o.Status.ObservedGeneration != o.Generation {
		o.Status.ObservedGeneration, changed = o.Generation, true
	}
	if changed {
		if err := r.Client.Status().Update(ctx, &o); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: statusRequeue}, nil
}

func (r *ReplicationStatusReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("replication-status").For(&v1.Replication{}).Complete(r)
}

// StorageNodeStatusReconciler writes a StorageNode's Reachable and Ready.
type StorageNodeStatusReconciler struct {
	Client client.Client
	Clock  backend.Clock
}

func (r *StorageNodeStatusReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var o v1.StorageNode
	if err := r.Client.Get(ctx, request.NamespacedName, &o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	n, err := nodeRecord(&o)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	conditions := nodeConditions(n, now)
	changed := mergeConditions(&o.Status.Conditions, conditions, o.Generation, now)
	if reachable := conditions[0].Status == "True"; o.Status.Reachable != reachable {
		o.Status.Reachable, changed = reachable, true
	}
	if o.Status.ObservedGeneration != o.Generation {
		o.Status.ObservedGeneration, changed = o.Generation, true
	}
	if changed {
		if err := r.Client.Status().Update(ctx, &o); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: statusRequeue}, nil
}

func (r *StorageNodeStatusReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("storagenode-status").For(&v1.StorageNode{}).Complete(r)
}

// ReplicaStatusReconciler writes a Replica's Received.
type ReplicaStatusReconciler struct {
	Client client.Client
	Clock  backend.Clock
}

func (r *ReplicaStatusReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var o v1.Replica
	if err := r.Client.Get(ctx, request.NamespacedName, &o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	rep, err := replicaRecord(&o)
	if err != nil {
		return ctrl.Result{}, err
	}
	if mergeConditions(&o.Status.Conditions, replicaConditions(rep), o.Generation, r.Clock.Now()) {
		if err := r.Client.Status().Update(ctx, &o); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

func (r *ReplicaStatusReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("replica-status").For(&v1.Replica{}).Complete(r)
}
