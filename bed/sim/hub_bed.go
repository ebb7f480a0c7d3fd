package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
)

// withdrawLimit bounds how long WithdrawStorage waits for the hub to release
// a request.
const withdrawLimit = 10 * time.Minute

// ErrNoHub: the world has no hub (its sites keep their records in memory).
var ErrNoHub = errors.New("bed/sim: no hub: the sites keep their records in memory (Records: CRDRecords has one)")

// requestKey is the bed's request for a site's storage on the hub.
func requestKey(site string) types.NamespacedName {
	return types.NamespacedName{Namespace: hubNamespace, Name: "storage-" + site}
}

// sizing is how the bed sizes a site's cluster: named after the site (its
// store keeps the records of that StorageCluster's nodes), on the nodes'
// simulated pools, replicating as the world does.
func (w *World) sizing(site string) *v1.Sizing {
	backend, placeCount := v1.BackendZFSDRBD, int32(min(2, w.options.NodesPerSite))
	if w.options.WithoutDRBD {
		backend, placeCount = v1.BackendBtrfs, 1
	}
	return &v1.Sizing{ClusterName: site, StorageLayout: v1.StorageLayout{
		Pool:       v1.PoolLayout{Name: "tank", Provisioning: v1.ProvisioningThin, Backend: backend},
		PlaceCount: placeCount, DRBDPorts: v1.PortRange{Min: 7000, Max: 7999}, DRBDMinors: v1.MinorRange{Min: 1000, Max: 49999},
		ReplicationInterval: metav1.Duration{Duration: w.options.ReplicationInterval}, SnapshotRetention: 3,
	}}
}

// RequestStorage creates or changes the hub's StorageSiteDeployment for a
// site, as a person with kubectl on the hub would.
func (w *World) RequestStorage(r bed.StorageRequest) error {
	if w.hub == nil {
		return ErrNoHub
	}
	w.Site(r.Site) // panics on a site the world does not have
	ctx, c := context.Background(), w.hub.api.client(bedManager)
	key := requestKey(r.Site)
	spec := v1.StorageSiteDeploymentSpec{Site: r.Site, SiteNamespace: siteNamespace,
		Discovery: v1.OperatorOpsSpec{NodeNames: slices.Clone(r.Nodes), Devices: v1.DeviceFilter{Paths: []string{PoolDevice}}},
		Sizing:    w.sizing(r.Site), Approved: r.Approved}
	request := &v1.StorageSiteDeployment{}
	err := c.Get(ctx, key, request)
	switch {
	case apierrors.IsNotFound(err):
		request = &v1.StorageSiteDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Spec: spec}
		err = c.Create(ctx, request)
	case err == nil:
		request.Spec = spec
		err = c.Update(ctx, request)
	}
	if err != nil {
		return fmt.Errorf("request %s's storage: %w", r.Site, err)
	}
	w.event(r.Site, reports.EventAction, "hub: request %s's storage (nodes %v, approved %v)", r.Site, r.Nodes, r.Approved)
	return nil
}

// RequestedStorage reads the request's status on the hub.
func (w *World) RequestedStorage(site string) (bed.Storage, error) {
	if w.hub == nil {
		return bed.Storage{}, ErrNoHub
	}
	request := &v1.StorageSiteDeployment{}
	if err := w.hub.api.store.Get(context.Background(), requestKey(site), request); err != nil {
		if apierrors.IsNotFound(err) {
			return bed.Storage{}, bed.ErrNoRequest
		}
		return bed.Storage{}, err
	}
	status := request.Status
	out := bed.Storage{Phase: string(status.Phase), Reason: status.Reason, Run: status.Run, ReadyNodes: int(status.ReadyNodeCount)}
	if d := status.Draft; d != nil {
		for _, set := range d.NodeSets {
			out.Drafted = append(out.Drafted, set.Nodes...)
		}
		slices.Sort(out.Drafted)
		out.Approved = d.Approved
	}
	if c := status.Cluster; c != nil {
		out.Cluster, out.ClusterID, out.Pool, out.Nodes = c.Name, string(c.ClusterID), c.Pool, slices.Clone(c.Nodes)
	}
	return out, nil
}

// WithdrawStorage deletes the request and lets time pass until the hub
// released it (its finalizer gone, so the request is).
func (w *World) WithdrawStorage(site string) error {
	if w.hub == nil {
		return ErrNoHub
	}
	key := requestKey(site)
	request := &v1.StorageSiteDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := w.hub.api.client(bedManager).Delete(context.Background(), request); err != nil {
		if apierrors.IsNotFound(err) {
			return bed.ErrNoRequest
		}
		return err
	}
	w.event(site, reports.EventAction, "hub: withdraw the request for %s's storage", site)
	gone := func() bool {
		return apierrors.IsNotFound(w.hub.api.store.Get(context.Background(), key, &v1.StorageSiteDeployment{}))
	}
	if !w.RunUntil(gone, withdrawLimit) {
		return fmt.Errorf("the hub did not release the request for %s's storage within %s", site, withdrawLimit)
	}
	return nil
}

// SiteStorage reads the site's storage cluster, its nodes and its runs on
// the site's API server, as kubectl on the site would.
func (w *World) SiteStorage(name string) (bed.Storage, error) {
	s := w.Site(name)
	if s.api == nil {
		return bed.Storage{}, ErrNoHub
	}
	ctx, c := context.Background(), s.api.store
	var out bed.Storage
	var runs v1.OperatorOpsList
	if err := c.List(ctx, &runs, client.InNamespace(siteNamespace)); err != nil {
		return out, err
	}
	for _, run := range runs.Items {
		out.Runs = append(out.Runs, run.Name)
	}
	var clusters v1.StorageClusterList
	if err := c.List(ctx, &clusters, client.InNamespace(siteNamespace)); err != nil {
		return out, err
	}
	switch len(clusters.Items) {
	case 0:
		return out, nil
	case 1:
	default:
		return out, fmt.Errorf("%s holds %d storage clusters", name, len(clusters.Items))
	}
	cluster := clusters.Items[0]
	out.Cluster, out.ClusterID, out.Pool = cluster.Name, string(cluster.Spec.ClusterID), cluster.Spec.Pool.Name
	var nodes v1.StorageNodeList
	if err := c.List(ctx, &nodes, client.InNamespace(siteNamespace)); err != nil {
		return out, err
	}
	for _, n := range nodes.Items {
		if n.Spec.Cluster != cluster.Name {
			continue
		}
		out.Nodes = append(out.Nodes, n.Spec.NodeName)
		if meta.IsStatusConditionTrue(n.Status.Conditions, v1.StorageNodeReadyCondition) {
			out.ReadyNodes++
		}
	}
	slices.Sort(out.Nodes)
	return out, nil
}
