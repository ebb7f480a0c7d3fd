package core

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
	"github.com/baton-dr/baton/storage/replication"
)

// NodeSpec is what the control plane wants of one storage node. The node agent
// converges on it and reports back; applying it twice changes nothing.
type NodeSpec struct {
	Node     string
	Volumes  []VolumeSpec  // sorted by dataset
	Replicas []ReplicaSpec // sorted by dataset
	Sends    []SendSpec    // sorted by dataset
	// Destroy lists datasets of deleted volumes to destroy.
	Destroy []string
}

// VolumeSpec is one member's replica on the node.
type VolumeSpec struct {
	Dataset      string
	SizeBytes    uint64
	Provisioning backend.Provisioning
	// Origin, when set, is where a missing dataset comes from: a clone of a
	// received snapshot, never an empty volume.
	Origin Origin
	// Initialized: the volume holds data. Until then the replicas of a new
	// volume are identical (all zeros) and DRBD starts them without an initial
	// sync; afterwards missing metadata on a node means a new replica that
	// syncs from its peers.
	Initialized bool
	// MustExist: this node held the dataset before. Not finding it is an
	// error to report, never a reason to create an empty one.
	MustExist bool
	Resource  backend.ResourceConfig
	// Up is false for a tombstone: its device goes, its data and snapshots stay.
	Up       bool
	Role     backend.Role
	ReadOnly bool
	// FencedPeers are the other nodes of the resource known to be down. A
	// Primary whose only missing peers are fenced is promoted without them.
	FencedPeers []string
	// Snapshots lists those the node must take (on the home node only).
	Snapshots []string
	// Prune lists snapshots to destroy.
	Prune []string
}

// ReplicaSpec is a dataset the node receives another site's streams into.
type ReplicaSpec struct {
	Dataset string
	Source  chain.Ref
	// Open is false once the replica was failed over: a superseded source's
	// streams are refused, its tail never enters this site.
	Open bool
	// Token is what the source's streams must present.
	Token string
}

// SendSpec is a stream the node must ship to another site.
type SendSpec struct {
	Dataset  string
	Snapshot string
	GUID     string
	// Base is empty for a full stream, a snapshot name of Dataset, or
	// "dataset@snapshot" for a clone stream from the origin.
	Base string
	// BaseGUID identifies the base on the receivers, which match it by GUID.
	BaseGUID      string
	Target        chain.ClusterID
	Receivers     []Receiver
	TargetDataset string
}

// Spec computes what node must hold. It only reads the records, so it
// borrows them from a store that lends (Lender); what it returns shares
// nothing with them (strings aside), since the node agent owns its spec.
func (s *Site) Spec(node string) (NodeSpec, error) {
	volumes, err := lendOrList(s.store, Lender.LendVolumes, s.store.Volumes)
	if err != nil {
		return NodeSpec{}, err
	}
	replicas, err := lendOrList(s.store, Lender.LendReplicas, s.store.Replicas)
	if err != nil {
		return NodeSpec{}, err
	}
	pairings, err := lendOrList(s.store, Lender.LendPairings, s.store.Pairings)
	if err != nil {
		return NodeSpec{}, err
	}
	nodes, err := lendOrList(s.store, Lender.LendNodes, s.store.Nodes)
	if err != nil {
		return NodeSpec{}, err
	}
	spec := NodeSpec{Node: node}
	now := s.now()
	for _, v := range volumes {
		if !slices.ContainsFunc(v.Allocation.Replicas, func(r placement.Replica) bool { return r.Node == node }) {
			continue
		}
		if v.Deleting {
			spec.Destroy = append(spec.Destroy, v.Dataset())
			continue
		}
		vs := VolumeSpec{Dataset: v.Dataset(), SizeBytes: v.SizeBytes, Provisioning: v.Provisioning,
			Origin: v.Origin, Initialized: v.Initialized, MustExist: slices.Contains(v.Present, node),
			Resource: resource(v, nodes),
			Up:       v.State != chain.Tombstone, Role: backend.Secondary, ReadOnly: v.State != chain.Active}
		if v.Primary == node {
			vs.Role = backend.Primary
			vs.FencedPeers = fencedPeers(v, node, nodes)
		}
		if v.Home == node {
			if i := slices.IndexFunc(pairings, func(p Pairing) bool { return p.Source == v.Ref }); i >= 0 {
				work := pairings[i].Want(now)
				if work.Snapshot != "" {
					vs.Snapshots = append(vs.Snapshots, work.Snapshot)
				}
				vs.Prune = work.Prune
				if work.Ship != nil && len(pairings[i].Receivers) > 0 {
					spec.Sends = append(spec.Sends, sendSpec(v, pairings[i], *work.Ship))
				}
			}
			if v.Tail != "" {
				vs.Snapshots = append(vs.Snapshots, v.Tail)
			}
			take, prune := userSnapshotWork(v, volumes)
			vs.Snapshots, vs.Prune = append(vs.Snapshots, take...), append(vs.Prune, prune...)
		}
		spec.Volumes = append(spec.Volumes, vs)
	}
	for _, r := range replicas {
		if slices.Contains(r.Nodes, node) {
			spec.Replicas = append(spec.Replicas, ReplicaSpec{Dataset: r.Dataset(), Source: r.Source,
				Open: closedInto(r, volumes).IsZero(), Token: s.token(r.Source)})
		}
	}
	return spec, nil
}

func sendSpec(v Volume, p Pairing, ship replication.Shipment) SendSpec {
	base := ship.Base.Snapshot
	if ship.Base.Volume != "" {
		base = ship.Base.Volume + "@" + ship.Base.Snapshot
	}
	return SendSpec{Dataset: v.Dataset(), Snapshot: ship.Snapshot, GUID: ship.GUID, Base: base, BaseGUID: ship.Base.GUID,
		Target: ship.Target, Receivers: slices.Clone(p.Receivers), TargetDataset: Replica{Source: v.Ref}.Dataset()}
}

// resource renders a volume's DRBD allocation for the nodes.
// Every node's spec renders every volume it holds, at every pass of its
// agent: the dataset name is made once, the node list in one allocation
// (nil for none, as before), and each address without fmt.
func resource(v Volume, nodes []Node) backend.ResourceConfig {
	dataset := v.Dataset()
	config := backend.ResourceConfig{Name: dataset, Minor: v.Allocation.Minor, Port: v.Allocation.Port}
	if n := len(v.Allocation.Replicas); n > 0 {
		config.Nodes = make([]backend.ResourceNode, 0, n)
	}
	port := strconv.FormatUint(uint64(v.Allocation.Port), 10)
	for _, r := range v.Allocation.Replicas {
		address := r.Node
		if i := slices.IndexFunc(nodes, func(n Node) bool { return n.Name == r.Node }); i >= 0 && nodes[i].Address != "" {
			address = nodes[i].Address
		}
		config.Nodes = append(config.Nodes, backend.ResourceNode{Node: r.Node, NodeID: r.NodeID,
			Address: address + ":" + port, Volume: dataset})
	}
	if len(config.Nodes) != len(v.Allocation.Replicas) {
		panic(fmt.Sprintf("core: resource %s renders %d nodes of %d", dataset, len(config.Nodes), len(v.Allocation.Replicas)))
	}
	slices.SortFunc(config.Nodes, func(a, b backend.ResourceNode) int { return int(a.NodeID) - int(b.NodeID) })
	return config
}

// fencedPeers are the nodes other than node holding a replica of v that are
// fenced, sorted.
func fencedPeers(v Volume, node string, nodes []Node) []string {
	var out []string
	for _, r := range v.Allocation.Replicas {
		if r.Node == node {
			continue
		}
		if i := slices.IndexFunc(nodes, func(n Node) bool { return n.Name == r.Node }); i >= 0 && nodes[i].Fenced {
			out = append(out, r.Node)
		}
	}
	slices.Sort(out)
	return out
}
