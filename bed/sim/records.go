package sim

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/site"
)

// Records says where a site keeps its records.
type Records uint8

const (
	// MemoryRecords: site.MemoryStore, the fastest (sweeps).
	MemoryRecords Records = iota
	// CRDRecords: the operator's CRD-backed store over a per-site fake API
	// server (controller-runtime's fake client with the CRDs' status
	// subresources), as the site operator keeps them: every record crosses
	// the CRD types and their conversions.
	CRDRecords
)

// siteNamespace is where each site's operator keeps its objects.
const siteNamespace = "baton-system"

// newStore makes a site's record store.
func newStore(records Records, name string, cluster chain.ClusterID, nodes []string) (site.Store, error) {
	if records == MemoryRecords {
		return site.NewMemoryStore(), nil
	}
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1.Volume{}, &v1.Replication{},
		&v1.Replica{}, &v1.StorageNode{}, &v1.StorageCluster{}).Build()
	for _, node := range nodes {
		// The deployment flow creates a site's StorageNodes; the store only
		// updates them.
		object := &v1.StorageNode{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: v1.StorageNodeName(name, node)},
			Spec: v1.StorageNodeSpec{Cluster: name, NodeName: node, Address: "10.0.0.1"}}
		if err := c.Create(context.Background(), object); err != nil {
			return nil, fmt.Errorf("site %s: %w", name, err)
		}
	}
	return sitecontroller.NewStore(sitecontroller.StoreConfig{Client: c, Namespace: siteNamespace, Cluster: cluster,
		ClusterName: name, Context: context.Background()})
}
