package sim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Records says where a site keeps its records.
type Records uint8

const (
	// MemoryRecords: core.MemoryStore, the fastest (sweeps).
	MemoryRecords Records = iota
	// CRDRecords: the operator's CRD-backed store over a per-site fake API
	// server (controller-runtime's fake client with the CRDs' status
	// subresources), as the site operator keeps them: every record crosses
	// the CRD types and their conversions.
	CRDRecords
)

// siteNamespace is where each site's operator keeps its objects.
const siteNamespace = "baton-system"

// newStore makes a site's record store, and for CRD records the site's
// simulated API server (the site operator's reconcilers and OCM's agents run
// against it). Its StorageNodes exist from the start, as the site's data path
// needs them, unless the site is undeployed: then the deployment flow creates
// them, and the nodes' reports are refused until it has.
func newStore(w *World, name string, cluster chain.ClusterID, nodes []string) (core.Store, *apiServer, error) {
	if w.options.Records == MemoryRecords {
		return core.NewMemoryStore(), nil, nil
	}
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil { // the claims and their PVs
		return nil, nil, err
	}
	api := newAPIServer(name, w.Sim, scheme, &v1.Volume{}, &v1.Replication{}, &v1.Replica{}, &v1.StorageNode{},
		&v1.StorageCluster{}, &v1.OperatorOps{}, &v1.ClusterDeploymentConfig{}, &v1.TestFailover{})
	c := api.client(operatorManager)
	for _, node := range nodes {
		if w.options.Undeployed {
			break
		}
		// The deployment flow creates a site's StorageNodes; the store only
		// updates them.
		object := &v1.StorageNode{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: v1.StorageNodeName(name, node)},
			Spec: v1.StorageNodeSpec{Cluster: name, NodeName: node, Address: "10.0.0.1"}}
		if err := c.Create(context.Background(), object); err != nil {
			return nil, nil, fmt.Errorf("site %s: %w", name, err)
		}
	}
	store, err := sitecontroller.NewStore(sitecontroller.StoreConfig{Client: c, Namespace: siteNamespace, Cluster: cluster,
		ClusterName: name, Context: context.Background()})
	return store, api, err
}

// reconcileStatus runs the site operator's status reconcilers over every
// record object, as its manager would after their changes: conditions,
// phases and printer columns, scheduled by the simulation. A reconciler's
// error is a violation -- the operator would retry it for ever -- unless it
// is the API server's transient answer, which the next pass retries.
func (s *Site) reconcileStatus() {
	if s.objects == nil || !s.ControllerUp {
		return
	}
	ctx := context.Background()
	clock := s.world.Sim
	kinds := []struct {
		list       client.ObjectList
		reconciler reconcile.Reconciler
	}{
		{&v1.VolumeList{}, &sitecontroller.VolumeStatusReconciler{Client: s.objects, Clock: clock}},
		{&v1.ReplicationList{}, &sitecontroller.ReplicationStatusReconciler{Client: s.objects, Clock: clock}},
		{&v1.ReplicaList{}, &sitecontroller.ReplicaStatusReconciler{Client: s.objects, Clock: clock}},
		{&v1.StorageNodeList{}, &sitecontroller.StorageNodeStatusReconciler{Client: s.objects, Clock: clock}},
	}
	for _, k := range kinds {
		if err := s.objects.List(ctx, k.list, client.InNamespace(siteNamespace)); err != nil {
			if !transientAPIError(err) {
				s.world.violate("operator: a status reconciler cannot list", err.Error())
			}
			return
		}
		items, err := meta.ExtractList(k.list)
		if err != nil {
			panic(fmt.Sprintf("bed/sim: %T is not a list: %v", k.list, err))
		}
		for _, item := range items {
			o := item.(client.Object)
			request := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}
			if _, err := k.reconciler.Reconcile(ctx, request); err != nil && !transientAPIError(err) {
				s.world.violate("operator: a status reconciler failed", fmt.Sprintf("%s %s: %v", s.Name, o.GetName(), err))
			}
		}
	}
}
