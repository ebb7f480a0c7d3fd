package csi

import "time"

// Assembling the driver. Every process that runs it -- baton-csi in each of
// its modes, the simulation's csi-controller pods and nodes, the tests'
// drivers -- builds its services here, so that they are wired one way:
//
//   - the controller side (the csi-controller pod) serves CSI Identity and
//     Controller and the csi-addons Identity and Replication services, and
//     Controller and Replication share ONE lock set: a CreateSnapshot or a
//     DeleteVolume and a Promote or a Demote of the same volume are one
//     operation at a time, as ceph-csi's per-volume locks make them;
//   - the node side serves Node with a lock set of its own (it runs in the
//     node plugin's pod, another process in production).

// Assembly says what one process of the driver serves.
type Assembly struct {
	// Name is the driver's name (DriverName unless set); Version its version.
	Name, Version string
	// Clusters opens every request's clusters secret.
	Clusters *Clusters
	// Controller serves the controller side.
	Controller bool
	// Node, when set, serves the node side of this node.
	Node *NodeAssembly
	// SyncWait is how ResyncVolume and PromoteVolume wait for a sync in
	// flight (sync_wait.go); the zero value answers at once.
	SyncWait SyncWait
}

// NodeAssembly is what the node side needs of its node.
type NodeAssembly struct {
	// ID is the node's name, as the site's storage nodes are named; Site is
	// reported as topology.
	ID, Site string
	Devices  Devices
	Mounter  Mounter
	// DeviceWait bounds how long NodeStageVolume waits for a device the
	// node agent is making, and NodeExpandVolume for one it is growing;
	// zero answers at once.
	DeviceWait time.Duration
}

// Assemble builds the services a names; Identity is always served.
func Assemble(a Assembly) Services {
	s := Services{Identity: &Identity{Name: a.Name, Version: a.Version, Controller: a.Controller}}
	if a.Controller {
		locks := &Locks{}
		s.Controller = &Controller{Clusters: a.Clusters, Locks: locks}
		s.Replication = &Replication{Clusters: a.Clusters, Locks: locks, SyncWait: a.SyncWait}
		s.AddonsIdentity = &AddonsIdentity{Name: a.Name, Version: a.Version}
	}
	if n := a.Node; n != nil {
		s.Node = &Node{Clusters: a.Clusters, Locks: &Locks{}, NodeID: n.ID, Site: n.Site, Devices: n.Devices, Mounter: n.Mounter,
			DeviceWait: n.DeviceWait}
	}
	return s
}
