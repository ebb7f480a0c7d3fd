package site

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// deployPlan is what an approved draft expands into.
type deployPlan struct {
	cluster string
	layout  v1.StorageLayout
	nodes   []v1.StorageNodeSpec
}

// plan reads the draft and the run that wrote it. A draft that cannot be
// expanded -- a node the run did not find, one without an address or without
// a device the set names -- returns the reason, for people.
func (r *DraftReconciler) plan(ctx context.Context, draft *v1.ClusterDeploymentConfig) (deployPlan, string, error) {
	runName := draft.Labels[RunLabel]
	if runName == "" {
		return deployPlan{}, "the draft names no discovery run (label " + RunLabel + "): node addresses are unknown", nil
	}
	var run v1.OperatorOps
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: draft.Namespace, Name: runName}, &run)
	if apierrors.IsNotFound(err) {
		return deployPlan{}, "discovery run " + runName + " is gone: node addresses are unknown", nil
	}
	if err != nil {
		return deployPlan{}, "", fmt.Errorf("failed to read discovery run %s: %w", runName, err)
	}
	sizing := draft.Spec.Sizing
	plan := deployPlan{cluster: sizing.ClusterName, layout: sizing.StorageLayout}
	seen := map[string]string{}
	for _, set := range draft.Spec.NodeSets {
		for _, name := range set.Nodes {
			if other, ok := seen[name]; ok {
				return deployPlan{}, fmt.Sprintf("node %s is in sets %s and %s", name, other, set.Name), nil
			}
			seen[name] = set.Name
			node, reason := planNode(run, set, name, sizing)
			if reason != "" {
				return deployPlan{}, reason, nil
			}
			plan.nodes = append(plan.nodes, node)
		}
	}
	return plan, "", nil
}

func planNode(run v1.OperatorOps, set v1.NodeSet, name string, sizing *v1.Sizing) (v1.StorageNodeSpec, string) {
	var found *v1.DiscoveredNode
	for i := range run.Status.Nodes {
		if run.Status.Nodes[i].Name == name {
			found = &run.Status.Nodes[i]
		}
	}
	switch {
	case found == nil:
		return v1.StorageNodeSpec{}, fmt.Sprintf("node %s of set %s was not found by discovery run %s", name, set.Name, run.Name)
	case found.Address == "":
		return v1.StorageNodeSpec{}, fmt.Sprintf("node %s of set %s has no address for DRBD", name, set.Name)
	}
	spec := v1.StorageNodeSpec{Cluster: sizing.ClusterName, NodeName: name, Address: found.Address,
		Provisioning: sizing.Pool.Provisioning}
	for _, path := range set.Devices {
		var device *v1.CandidateDevice
		for i := range found.Devices {
			if found.Devices[i].Path == path {
				device = &found.Devices[i]
			}
		}
		if device == nil {
			return v1.StorageNodeSpec{}, fmt.Sprintf("node %s of set %s has no device %s", name, set.Name, path)
		}
		pool := v1.PoolDevice{Path: path, Type: v1.DeviceTypeDisk}
		if device.Type == v1.DeviceTypeLoopFile {
			pool.Type, pool.SizeBytes = v1.DeviceTypeLoopFile, device.SizeBytes
		}
		spec.Devices = append(spec.Devices, pool)
	}
	return spec, ""
}

// expand creates the cluster and its nodes. The cluster's UUID is drawn once
// and recorded in the draft's status before anything is created, so a crash
// in between never mints a second identity for the same draft.
func (r *DraftReconciler) expand(ctx context.Context, draft *v1.ClusterDeploymentConfig, plan deployPlan) (string, error) {
	if draft.Status.Cluster == nil || draft.Status.Cluster.ClusterID == "" {
		draft.Status.Cluster = &v1.DeployedCluster{Name: plan.cluster, ClusterID: v1.UUID(NewUUID(r.Random)),
			Pool: plan.layout.Pool.Name}
		for _, n := range plan.nodes {
			draft.Status.Cluster.Nodes = append(draft.Status.Cluster.Nodes, n.NodeName)
		}
		if err := r.report(ctx, draft, v1.ClusterDeploymentConfigApproved); err != nil {
			return "", err
		}
	}
	id := draft.Status.Cluster.ClusterID
	if reason, err := r.ensureCluster(ctx, draft, plan, id); reason != "" || err != nil {
		return reason, err
	}
	for _, node := range plan.nodes {
		if reason, err := r.ensureNode(ctx, draft, node); reason != "" || err != nil {
			return reason, err
		}
	}
	return "", nil
}

func (r *DraftReconciler) ensureCluster(ctx context.Context, draft *v1.ClusterDeploymentConfig, plan deployPlan, id v1.UUID) (string, error) {
	var cluster v1.StorageCluster
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: draft.Namespace, Name: plan.cluster}, &cluster)
	switch {
	case apierrors.IsNotFound(err):
		cluster = v1.StorageCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: draft.Namespace, Name: plan.cluster, Labels: map[string]string{DraftLabel: draft.Name}},
			Spec:       v1.StorageClusterSpec{ClusterID: id, StorageLayout: plan.layout}}
		return "", r.Client.Create(ctx, &cluster)
	case err != nil:
		return "", fmt.Errorf("failed to read storage cluster %s: %w", plan.cluster, err)
	case cluster.Labels[DraftLabel] != draft.Name || cluster.Spec.ClusterID != id:
		return fmt.Sprintf("StorageCluster %s exists already (cluster %s, draft %q): it was not expanded from this draft",
			plan.cluster, cluster.Spec.ClusterID, cluster.Labels[DraftLabel]), nil
	}
	return "", nil
}

func (r *DraftReconciler) ensureNode(ctx context.Context, draft *v1.ClusterDeploymentConfig, spec v1.StorageNodeSpec) (string, error) {
	var node v1.StorageNode
	name := v1.StorageNodeName(spec.Cluster, spec.NodeName) // what the hub's views read back
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: draft.Namespace, Name: name}, &node)
	switch {
	case apierrors.IsNotFound(err):
		node = v1.StorageNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: draft.Namespace, Name: name, Labels: map[string]string{DraftLabel: draft.Name}},
			Spec:       spec}
		return "", r.Client.Create(ctx, &node)
	case err != nil:
		return "", fmt.Errorf("failed to read storage node %s: %w", spec.NodeName, err)
	case node.Spec.Cluster != spec.Cluster:
		return fmt.Sprintf("StorageNode %s belongs to cluster %s already", spec.NodeName, node.Spec.Cluster), nil
	}
	return "", nil
}

// enqueueByLabel wakes the object of this kind named by a label's value.
func enqueueByLabel(label string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()[label]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	})
}

// enqueueClusterOfNode wakes the StorageCluster a StorageNode belongs to.
func enqueueClusterOfNode() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		node, ok := o.(*v1.StorageNode)
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: node.Namespace, Name: node.Spec.Cluster}}}
	})
}
