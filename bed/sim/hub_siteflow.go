package sim

import (
	"time"

	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
)

// siteFlow is the site operator's deployment flow as the simulation runs it
// on the site's API server: the OperatorOps reconciler (its discoverer asks
// the site's simulated nodes), the draft reconciler (an approved draft
// expands into the StorageCluster and its StorageNodes) and the
// StorageCluster status reconciler, each a controller woken by its watches
// and its requeues while the site's operator runs.
type siteFlow struct {
	site                  *Site
	runs, drafts, cluster *controller
}

// PoolDevice is the device each simulated node offers a discovery: the disk
// its pool sits on.
const PoolDevice = "/dev/vdb"

func newSiteFlow(s *Site) *siteFlow {
	w := s.world
	up := func() bool { return s.ControllerUp }
	c := s.objects
	f := &siteFlow{site: s}
	f.runs = newController(w, s.Name+" operatorops", &sitecontroller.OperatorOpsReconciler{Client: c, Clock: w.Sim,
		Discoverer: nodeDiscoverer{site: s}}, up)
	f.drafts = newController(w, s.Name+" clusterdeploymentconfig", &sitecontroller.DraftReconciler{Client: c, Clock: w.Sim,
		Random: newIdentityReader(s)}, up)
	f.cluster = newController(w, s.Name+" storagecluster-status", &sitecontroller.StorageClusterStatusReconciler{Client: c, Clock: w.Sim}, up)
	s.api.watch(f.onWrite)
	return f
}

// onWrite is the flow's watches, as the reconcilers' SetupWithManager
// declare them.
func (f *siteFlow) onWrite(e watchEvent) {
	switch e.Kind {
	case "OperatorOps":
		f.runs.enqueue(e.Key, watchDelay)
	case "ClusterDeploymentConfig":
		f.drafts.enqueue(e.Key, watchDelay)
	case "StorageCluster":
		f.cluster.enqueue(e.Key, watchDelay)
		if draft := e.Object.GetLabels()[sitecontroller.DraftLabel]; draft != "" {
			f.drafts.enqueue(types.NamespacedName{Namespace: e.Key.Namespace, Name: draft}, watchDelay)
		}
	case "StorageNode":
		if node, ok := e.Object.(*v1.StorageNode); ok && node.Spec.Cluster != "" {
			f.cluster.enqueue(types.NamespacedName{Namespace: e.Key.Namespace, Name: node.Spec.Cluster}, watchDelay)
		}
	}
}

// restart is the operator's manager coming back: its informers list every
// object, and each controller sees them all.
func (f *siteFlow) restart() {
	ctx := context.Background()
	for _, kind := range []struct {
		list client.ObjectList
		c    *controller
	}{{&v1.OperatorOpsList{}, f.runs}, {&v1.ClusterDeploymentConfigList{}, f.drafts}, {&v1.StorageClusterList{}, f.cluster}} {
		if err := f.site.objects.List(ctx, kind.list, client.InNamespace(siteNamespace)); err != nil {
			if !transientAPIError(err) {
				f.site.world.violate("operator: a controller cannot list", err.Error())
				return
			}
			// The informers list again, as a manager's do until they sync.
			f.site.world.Sim.After(time.Second, f.site.Name+" operator lists again", f.restart)
			return
		}
		items, err := meta.ExtractList(kind.list)
		if err != nil {
			panic(fmt.Sprintf("bed/sim: %T is not a list: %v", kind.list, err))
		}
		var keys []types.NamespacedName
		for _, item := range items {
			keys = append(keys, client.ObjectKeyFromObject(item.(client.Object)))
		}
		kind.c.resync(keys)
	}
}

// nodeDiscoverer is the discovery as the operator's node agents would answer
// it: every node that runs and that the operator reaches reports its name,
// labels, address and the disk its pool sits on. A node that is down or cut
// off does not answer, and the run goes without it.
type nodeDiscoverer struct{ site *Site }

func (d nodeDiscoverer) Candidates(context.Context) ([]sitecontroller.NodeCandidates, error) {
	s := d.site
	net := s.world.Net
	var out []sitecontroller.NodeCandidates
	for i, n := range s.Nodes {
		if !n.Up || !net.Reachable(s.Operator(), n.Endpoint) || !net.Reachable(n.Endpoint, s.Operator()) {
			continue
		}
		usage, _ := n.Pool.Usage()
		out = append(out, sitecontroller.NodeCandidates{
			Name:    n.Name,
			Labels:  map[string]string{"kubernetes.io/hostname": n.Name, "topology.kubernetes.io/zone": s.Name},
			Address: nodeAddress(s, i),
			Devices: []v1.CandidateDevice{{Path: PoolDevice, Type: v1.DeviceTypeDisk, SizeBytes: int64(usage.SizeBytes),
				Model: "simzfs " + strings.TrimPrefix(n.Endpoint, s.Name+"/")}},
		})
	}
	return out, nil
}

// nodeAddress is a node's DRBD address: 10.<site>.0.<node>.
func nodeAddress(s *Site, i int) string {
	site := 0
	for j, other := range s.world.sites {
		if other == s {
			site = j
		}
	}
	return fmt.Sprintf("10.%d.0.%d", site+1, 11+i)
}

// newIdentityReader is the draft reconciler's randomness on a site. The
// world builds each site's data path ahead of time under a fixed cluster
// UUID; the deployment flow mints one when it expands a draft. Its first 16
// bytes are that UUID's (a version-4 UUID: NewUUID keeps its bytes as they
// are), so the StorageCluster it expands carries the identity the site's
// volumes and replicas are recorded under; a second cluster of the site
// draws from the site's own seeded stream.
func newIdentityReader(s *Site) io.Reader {
	id, err := hex.DecodeString(strings.ReplaceAll(string(s.Cluster), "-", ""))
	if err != nil || len(id) != 16 {
		panic(fmt.Sprintf("bed/sim: cluster %s is not a UUID: %v", s.Cluster, err))
	}
	return io.MultiReader(bytes.NewReader(id), seededReader{s.world.Sim.Rand("uuids/" + s.Name)})
}

// seededReader reads a seeded stream.
type seededReader struct{ r *rand.Rand }

func (s seededReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(s.r.Uint32())
	}
	return len(p), nil
}
