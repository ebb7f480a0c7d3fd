package site

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// OutOfServiceTaint is the taint of Kubernetes' non-graceful node shutdown:
// an administrator or a fencing operator puts it on a node known to be shut
// down, and Kubernetes then force-deletes the node's pods and detaches their
// volumes so the pods start elsewhere.
const OutOfServiceTaint = "node.kubernetes.io/out-of-service"

// NodeFencingReconciler carries the out-of-service taint of a Kubernetes Node
// to the site's storage node of the same name: while it is fenced, the
// replica on the node a moved pod lands on may be promoted without it (DRBD
// runs without a fence-peer handler, see core.Site.FenceNode). A Node that is
// not a storage node of this site is ignored; a deleted Node changes nothing,
// since its deletion says nothing about whether it still writes.
type NodeFencingReconciler struct {
	Client client.Client
	// Local is the site's control plane (Operator.Local).
	Local *storageapi.Local
}

func (r *NodeFencingReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var node corev1.Node
	if err := r.Client.Get(ctx, request.NamespacedName, &node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	fenced := outOfService(&node)
	err := r.Local.FenceNode(ctx, node.Name, fenced) // storage nodes are named as their Kubernetes nodes
	if errors.Is(err, core.ErrNotFound) {
		err = nil
	}
	return ctrl.Result{}, err
}

func outOfService(node *corev1.Node) bool {
	for _, taint := range node.Spec.Taints {
		if taint.Key == OutOfServiceTaint && (taint.Effect == corev1.TaintEffectNoExecute || taint.Effect == corev1.TaintEffectNoSchedule) {
			return true
		}
	}
	return false
}

func (r *NodeFencingReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("node-fencing").For(&corev1.Node{}).Complete(r)
}
