package sim

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/sim/drbd"
	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// Site is one site of the bed: its control plane and its storage nodes.
type Site struct {
	Name    string
	Cluster chain.ClusterID
	Control *core.Site
	// API is the operator's storage API (what its HTTPS server serves).
	API   *storageapi.Local
	Store core.Store
	// store is the store-fault class's state (fault_store.go).
	store *storeFault
	// peers is filled once every site exists.
	peers map[chain.ClusterID]storageapi.Cluster
	// api is the simulated API server of a site keeping CRD records, objects
	// the site operator's client of it; nil for memory records.
	api     *apiServer
	objects client.Client
	// flow is the operator's deployment flow on api.
	flow *siteFlow
	// drills is the operator's TestFailover controller on api; nil
	// without claims (drill.go).
	drills *controller
	Nodes  []*Node
	// ControllerUp is false while the site's operator is crashed.
	ControllerUp bool
	// adoption is what the operator's adoption did last (adopt.go).
	adoption core.AdoptionReport
	// outOfService are the nodes Kubernetes has tainted out-of-service.
	outOfService map[string]bool
	// DRBD is the site's replication fabric; nil when volumes have one replica.
	DRBD Fabric
	// The CSI driver's controller-side services, in the csi-controller pod.
	CSIController  *csi.Controller
	CSIReplication *csi.Replication
	world          *World
}

// Fabric is the site's simulated DRBD (sim/drbd.Cluster).
type Fabric interface {
	Node(name string) backend.Replicator
	Observe()
	Crash(node string)
	Restart(node string)
	// Stats counts what the fabric moved, and its resyncs.
	Stats() drbd.Stats
}

// Node is one storage node.
type Node struct {
	Name     string // "node-1"
	Endpoint string // "site-a/node-1"
	Pool     *simzfs.Pool
	Agent    *agent.Agent
	// CSI is the node's CSI node service.
	CSI  *csi.Node
	Up   bool
	site *Site
}

// Operator is the site operator's network endpoint.
func (s *Site) Operator() string { return s.Name + "/controller" }

func newSite(w *World, name string, cluster chain.ClusterID) (*Site, error) {
	var nodeNames []string
	for i := 1; i <= w.options.NodesPerSite; i++ {
		nodeNames = append(nodeNames, fmt.Sprintf("node-%d", i))
	}
	store, objects, err := newStore(w, name, cluster, nodeNames)
	if err != nil {
		return nil, err
	}
	s := &Site{Name: name, Cluster: cluster, Store: store, store: &storeFault{w: w, site: name}, api: objects, ControllerUp: true, world: w, outOfService: map[string]bool{},
		peers: map[chain.ClusterID]storageapi.Cluster{}}
	if objects != nil {
		s.objects = objects.client(operatorManager)
	}
	ids, tokenKey := w.Sim.Rand("ids/"+name), w.Sim.Rand("tokens/"+name).Uint64()
	layout := v1.StorageLayout{ReplicationInterval: metav1.Duration{Duration: w.options.ReplicationInterval}}
	control, err := sitecontroller.NewCore(cluster, layout, sitecontroller.CoreParts{Store: s.Store,
		Peers: storageapi.Peers{Clusters: s.peers}, Clock: w.Sim,
		NewVolumeID: func() chain.VolumeID {
			return chain.VolumeID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", ids.Uint32(), ids.Uint32()&0xffff,
				ids.Uint32()&0xfff, ids.Uint32()&0xfff, ids.Uint64()&0xffffffffffff))
		},
		ReplicaToken: func(source chain.Ref) string { return fmt.Sprintf("%016x-%s", tokenKey, source) },
	})
	if err != nil {
		return nil, err
	}
	s.Control, s.API = control, newLocal(w, s, control)
	var fabric []drbd.NodeOptions
	for _, nodeName := range nodeNames {
		n := &Node{Name: nodeName, Up: true, site: s}
		n.Endpoint = name + "/" + n.Name
		n.Pool = simzfs.New(simzfs.Options{Name: "tank", SizeBytes: w.options.PoolBytes, BlockSizeBytes: 4096,
			Seed: w.Sim.Rand("guids/" + n.Endpoint).Uint64()})
		fabric = append(fabric, drbd.NodeOptions{Name: n.Name, Open: n.Pool.Open})
		s.Nodes = append(s.Nodes, n)
	}
	if !w.options.WithoutDRBD {
		if s.DRBD, err = drbd.New(drbd.Options{Site: name, Nodes: fabric, Scheduler: w.Sim, Links: links{site: s}}); err != nil {
			return nil, err
		}
	}
	for _, n := range s.Nodes {
		n.Agent, err = agent.New(n.agentOptions())
		if err != nil {
			return nil, err
		}
		if w.options.Undeployed {
			continue // the node joins once the deployment flow created its StorageNode
		}
		usage, _ := n.Pool.Usage()
		if err := s.API.Report(context.Background(), core.NodeStatus{Node: n.Name, Address: n.Endpoint, Usage: usage}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (n *Node) agentOptions() agent.Options {
	options := agent.Options{Node: n.Name, Address: n.Endpoint, Cluster: n.site.Cluster,
		Pool: n.Pool, Transport: transport{from: n}, Clock: n.site.world.Sim}
	if n.site.DRBD != nil {
		options.Replicator = n.site.DRBD.Node(n.Name)
	}
	return options
}

// start schedules the site's loops: the controller's tick and every node
// agent's reconcile.
func (s *Site) start() {
	w := s.world
	w.everyPass(w.options.ControllerPeriod, s.Name+" controller tick", func() {
		if !s.ControllerUp {
			return
		}
		s.adoptUndecided()
		s.syncFences()
		if err := s.API.Tick(); err != nil {
			w.Sim.Logf("error", "%s tick: %v", s.Name, err)
		}
	})
	for _, n := range s.Nodes {
		w.everyPass(w.options.AgentPeriod, n.Endpoint+" reconcile", n.reconcile)
	}
	if s.objects != nil {
		w.every(10*time.Second, s.Name+" status reconcilers", s.reconcileStatus)
		s.flow = newSiteFlow(s)
		if w.options.Claims {
			s.newDrills()
		}
	}
}

// reconcile is one pass of a node agent: fetch the spec, converge, report --
// both calls through the site's storage API across the network.
func (n *Node) reconcile() {
	if !n.Up {
		return
	}
	w, operator := n.site.world, storageapi.API{Cluster: api{from: n.Endpoint, target: n.site}}
	spec, err := operator.Spec(context.Background(), n.Name)
	if err != nil {
		return // cut off from its operator: the node keeps what it has
	}
	status := n.Agent.Reconcile(spec)
	for _, problem := range status.Errors {
		w.Sim.Logf("agent", "%s: %s", n.Endpoint, problem)
	}
	if err := operator.Report(context.Background(), status); err != nil {
		w.Sim.Logf("agent", "%s report: %v", n.Endpoint, err)
	}
}

// Node returns a node of the site by name.
func (s *Site) Node(name string) *Node {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n
		}
	}
	panic(fmt.Sprintf("bed/sim: no node %q on %s", name, s.Name))
}

// Device opens a member's device on the node that holds its primary role.
func (s *Site) Device(ref chain.Ref) (backend.Device, error) {
	defer s.world.unfaulted()()
	v, err := s.Control.Volume(ref)
	if err != nil {
		return nil, err
	}
	if v.Primary == "" {
		return nil, fmt.Errorf("%s has no primary (it is %s)", ref, v.State)
	}
	if s.DRBD != nil {
		return s.DRBD.Node(v.Primary).Open(v.Dataset())
	}
	return s.Node(v.Primary).Pool.Open(v.Dataset())
}

// links tells DRBD which of a site's nodes reach each other.
type links struct{ site *Site }

func (l links) Reachable(from, to string) bool {
	a, b := l.site.Node(from), l.site.Node(to)
	return a.Up && b.Up && l.site.world.Net.Reachable(a.Endpoint, b.Endpoint)
}
