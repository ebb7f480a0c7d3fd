package core

import (
	"slices"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
	"github.com/baton-dr/baton/storage/replication"
)

// NodeStatus is what a node agent reports of its node.
type NodeStatus struct {
	Node     string
	Address  string
	Usage    backend.Usage
	Datasets []DatasetStatus // every dataset of the pool, sorted by name
	Sent     []SendResult    // streams finished since the last report
	// Resources are the DRBD resources of the node; nil where there is no
	// DRBD (one replica per volume).
	Resources []backend.ResourceStatus
	// Errors lists what the agent could not do, in its own words.
	Errors []string
}

// DatasetStatus is one dataset of the node's pool.
type DatasetStatus struct {
	Name      string
	Snapshots []SnapshotInfo // oldest first
}

// SendResult is the outcome of one SendSpec.
type SendResult struct {
	Dataset  string
	Snapshot string
	Target   chain.ClusterID
	Bytes    uint64
	Started  time.Time
	Finished time.Time
	// Error is empty on success. NoBase reports that a receiver lacks the
	// stream's base: the pairing falls back to a full stream.
	Error  string
	NoBase bool
}

// Report takes in what a node reports.
func (s *Site) Report(status NodeStatus) error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.Report(status) })
	return err
}

// Report decides Site.Report: the node's record and every chain placed on it.
func (d Decisions) Report(status NodeStatus) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.report(status, everyChain, true) })
}

// ReportNode decides the part of a report that is the node's own record (its
// usage and address: the allocation's).
func (d Decisions) ReportNode(status NodeStatus) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.reportNode(status) })
}

// ReportChains decides the parts of a report about chains: all of it but the
// node's own record.
func (d Decisions) ReportChains(status NodeStatus) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.report(status, everyChain, false) })
}

// ReportChain decides the part of a report about root's chain: a shell takes
// a report in chain by chain, each under its own lock.
func (d Decisions) ReportChain(status NodeStatus, root chain.Ref) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.report(status, onlyChain(root), false) })
}

func (s *Site) report(status NodeStatus, in scope, node bool) error {
	if node {
		if err := s.reportNode(status); err != nil {
			return err
		}
	}
	datasets := map[string]DatasetStatus{}
	for _, d := range status.Datasets {
		datasets[d.Name] = d
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return err
	}
	pairings, err := s.pairingsBySource()
	if err != nil {
		return err
	}
	if err := s.reportVolumes(in, status.Node, datasets, status.Resources, volumes, pairings); err != nil {
		return err
	}
	if err := s.reportReplicas(in, status.Node, datasets); err != nil {
		return err
	}
	return s.reportSends(in, status, volumes, pairings)
}

// pairingsBySource reads the pairings once for an operation that updates
// many: each update is made to the map's pairing, so a later one sees it.
func (s *Site) pairingsBySource() (map[chain.Ref]*Pairing, error) {
	list, err := s.store.Pairings()
	if err != nil {
		return nil, err
	}
	out := make(map[chain.Ref]*Pairing, len(list))
	for i := range list {
		out[list[i].Source] = &list[i]
	}
	return out, nil
}

// changePairing applies change to member's pairing in pairings, if it has
// one, and writes it.
func (s *Site) changePairing(pairings map[chain.Ref]*Pairing, member chain.Ref, change func(*Pairing)) error {
	p, found := pairings[member]
	if !found {
		return nil
	}
	change(p)
	return s.store.PutPairing(*p)
}

func (s *Site) reportNode(status NodeStatus) error {
	nodes, err := s.store.Nodes()
	if err != nil {
		return err
	}
	n := Node{Name: status.Node, Schedulable: true}
	if i := slices.IndexFunc(nodes, func(n Node) bool { return n.Name == status.Node }); i >= 0 {
		n = nodes[i]
	}
	n.Usage, n.ReportedAt = status.Usage, s.now()
	if status.Address != "" {
		n.Address = status.Address
	}
	return s.store.PutNode(n)
}

// reportVolumes records the snapshots of the members homed on the node, feeds
// them to their pairings, and finishes deletions.
func (s *Site) reportVolumes(in scope, node string, datasets map[string]DatasetStatus, resources []backend.ResourceStatus,
	volumes []Volume, pairings map[chain.Ref]*Pairing) error {
	for _, v := range volumes {
		if !in(v.Root) {
			continue
		}
		d, present := datasets[v.Dataset()]
		onNode := slices.ContainsFunc(v.Allocation.Replicas, func(r placement.Replica) bool { return r.Node == node })
		switch {
		case v.Deleting && onNode && !present:
			if err := s.destroyed(v, node); err != nil {
				return err
			}
		case onNode && present && !slices.Contains(v.Present, node):
			v.Present = append(v.Present, node)
			slices.Sort(v.Present)
			if err := s.store.PutVolume(v); err != nil {
				return err
			}
		}
		if onNode && standAloneChanged(&v, node, resources) {
			if err := s.store.PutVolume(v); err != nil {
				return err
			}
		}
		if !v.Initialized && onNode && present && holdsData(v, resources) {
			v.Initialized = true
			if err := s.store.PutVolume(v); err != nil {
				return err
			}
		}
		if v.Home == node && present && !v.Deleting {
			v.Snapshots = slices.Clone(d.Snapshots)
			if err := s.store.PutVolume(v); err != nil {
				return err
			}
			if err := s.changePairing(pairings, v.Ref, func(p *Pairing) { taken(p, d.Snapshots, s.now()) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdsData reports whether a node's report shows the volume's data in place:
// its DRBD replica UpToDate, or, without DRBD, the dataset itself.
func holdsData(v Volume, resources []backend.ResourceStatus) bool {
	if resources == nil {
		return true
	}
	for _, r := range resources {
		if r.Name == v.Dataset() && r.Disk == backend.UpToDate {
			return true
		}
	}
	return false
}

// taken tells a pairing that its ordered snapshot exists.
func taken(p *Pairing, snapshots []SnapshotInfo, now time.Time) {
	if len(p.Snapshots) == 0 {
		return
	}
	want := p.Snapshots[len(p.Snapshots)-1]
	for _, snap := range snapshots {
		if snap.Name == want.Name {
			p.Taken(snap.Name, snap.GUID, now)
		}
	}
	for _, old := range p.Want(now).Prune {
		if !slices.ContainsFunc(snapshots, func(s SnapshotInfo) bool { return s.Name == old }) {
			p.Pruned(old)
		}
	}
}

func (s *Site) destroyed(v Volume, node string) error {
	if !slices.Contains(v.Destroyed, node) {
		v.Destroyed = append(v.Destroyed, node)
	}
	if len(v.Destroyed) < len(v.Allocation.Replicas) {
		return s.store.PutVolume(v)
	}
	return s.store.RemoveVolume(v.Ref)
}

// reportReplicas records what the node received into each replica.
func (s *Site) reportReplicas(in scope, node string, datasets map[string]DatasetStatus) error {
	replicas, err := s.store.Replicas()
	if err != nil {
		return err
	}
	for _, r := range replicas {
		if !in(r.Root) || !slices.Contains(r.Nodes, node) {
			continue
		}
		got := datasets[r.Dataset()].Snapshots
		if slices.Equal(got, r.Received[node]) {
			continue
		}
		r.Received[node] = slices.Clone(got)
		if err := s.store.PutReplica(r); err != nil {
			return err
		}
	}
	return nil
}

// reportSends feeds finished streams to their pairings.
func (s *Site) reportSends(in scope, status NodeStatus, volumes []Volume, pairings map[chain.Ref]*Pairing) error {
	for _, sent := range status.Sent {
		i := slices.IndexFunc(volumes, func(v Volume) bool { return v.Dataset() == sent.Dataset })
		if i < 0 || !in(volumes[i].Root) {
			continue
		}
		v := volumes[i]
		err := s.changePairing(pairings, v.Ref, func(p *Pairing) {
			if p.Target != sent.Target {
				return // a stream to a target the pairing no longer aims at
			}
			switch {
			case sent.Error == "":
				p.Shipped(sent.Snapshot, sent.Bytes, sent.Started, sent.Finished)
			case sent.NoBase && p.Failed(sent.Snapshot, sent.Error, sent.Finished):
				p.Reaim(p.Target, replication.Base{}, s.now())
			default:
				p.Failed(sent.Snapshot, sent.Error, sent.Finished)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// standAloneChanged records whether the node's replica of v has a peer it
// no longer tries to connect to, and reports whether that changed. A node
// without DRBD (resources nil) or not reporting the resource changes nothing.
func standAloneChanged(v *Volume, node string, resources []backend.ResourceStatus) bool {
	i := slices.IndexFunc(resources, func(r backend.ResourceStatus) bool { return r.Name == v.Dataset() })
	if i < 0 {
		return false
	}
	standAlone := slices.ContainsFunc(resources[i].Peers, func(p backend.PeerStatus) bool {
		return p.Connection == backend.StandAlone
	})
	if standAlone == slices.Contains(v.StandAlone, node) {
		return false
	}
	if standAlone {
		v.StandAlone = append(v.StandAlone, node)
		slices.Sort(v.StandAlone)
	} else {
		v.StandAlone = slices.DeleteFunc(v.StandAlone, func(n string) bool { return n == node })
	}
	return true
}
