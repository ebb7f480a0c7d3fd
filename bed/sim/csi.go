package sim

import (
	"context"
	"fmt"
	"path"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// The CSI driver runs in the simulation as it is: its services are called
// directly (no gRPC), they reach the sites' storage APIs through the simulated
// network (dialer), and the node service stages onto a simulated mount table
// (mounter) over the simulated DRBD devices (devices).

// csiController is a site's CSI controller pod: the Controller and the
// csi-addons Replication services, at the endpoint "<site>/csi-controller".
func (s *Site) csiController() string { return s.Name + "/csi-controller" }

// newCSI builds the site's driver services, assembled as baton-csi
// assembles them (csi.Assemble).
func (s *Site) newCSI() {
	services := csi.Assemble(csi.Assembly{Clusters: s.clusters(s.csiController()), Controller: true})
	s.CSIController, s.CSIReplication = services.Controller, services.Replication
	for _, n := range s.Nodes {
		s.newNodeCSI(n, newMounter(n))
	}
}

// clusters opens the driver's requests from endpoint from: every request
// names the site's clusters secret, as the operator writes it.
func (s *Site) clusters(from string) *csi.Clusters {
	return &csi.Clusters{Dialer: dialer{world: s.world, from: from}, Default: s.clustersSecret()}
}

// newNodeCSI starts a node's CSI node service over its mount table.
func (s *Site) newNodeCSI(n *Node, mounts *mounter) {
	n.CSI = csi.Assemble(csi.Assembly{Clusters: s.clusters(n.Endpoint),
		Node: &csi.NodeAssembly{ID: n.Name, Site: s.Name, Devices: devices{node: n}, Mounter: mounts}}).Node
}

// rebootCSI restarts a node's CSI node service after the node rebooted: no
// mount survived, the files (and the filesystems on the devices) did.
func (s *Site) rebootCSI(n *Node) {
	old := n.CSI.Mounter.(*mounter)
	s.newNodeCSI(n, &mounter{node: n, mounts: map[string]string{}, paths: old.paths})
}

// clustersSecret is the secret the site's operator writes for its driver:
// every site, its own marked local.
func (s *Site) clustersSecret() *storageapi.Clusters {
	var config storageapi.Clusters
	for _, other := range s.world.sites {
		config.Entries = append(config.Entries, storageapi.ClusterEntry{ID: other.Cluster,
			Endpoint: "https://" + other.Name + ".sim:8443", Secret: "sim-" + other.Name, Local: other == s})
	}
	return &config
}

// dialer gives the driver each cluster's storage API across the network.
type dialer struct {
	world *World
	from  string
}

func (d dialer) Dial(entry storageapi.ClusterEntry) (storageapi.Cluster, error) {
	for _, s := range d.world.sites {
		if s.Cluster == entry.ID {
			return api{from: d.from, target: s}, nil
		}
	}
	return nil, fmt.Errorf("no simulated site serves %s", entry.ID)
}

// devices finds a member's DRBD device on a node: ready once the node's agent
// made the node primary after Attach.
type devices struct{ node *Node }

func (d devices) Device(_ context.Context, v core.Volume) (string, error) {
	n := d.node
	if !n.Up {
		return "", fmt.Errorf("%w: %s is down", csi.ErrDeviceNotReady, n.Endpoint)
	}
	if fabric := n.site.DRBD; fabric != nil {
		st, err := fabric.Node(n.Name).Status(v.Dataset())
		if err != nil || st.Role != backend.Primary {
			return "", fmt.Errorf("%w: %s is not primary on %s yet", csi.ErrDeviceNotReady, v.Dataset(), n.Endpoint)
		}
	} else if _, err := n.Pool.Volume(v.Dataset()); err != nil {
		return "", fmt.Errorf("%w: %s has no %s yet", csi.ErrDeviceNotReady, n.Endpoint, v.Dataset())
	}
	return devicePath(v.Dataset()), nil
}

// open opens the device a staged member's pod writes to.
func (n *Node) open(dataset string) (backend.Device, error) {
	if fabric := n.site.DRBD; fabric != nil {
		return fabric.Node(n.Name).Open(dataset)
	}
	return n.Pool.Open(dataset)
}

// mounter is a node's mount table, in memory, over the filesystems on its
// devices (filesystem.go): enough of an operating system for the node
// service's logic (rule 7 included) to run unchanged. It is a simulation
// double; the real one is csi.OSMounter.
type mounter struct {
	node   *Node
	mounts map[string]string // target -> source
	paths  map[string]bool
}

func newMounter(n *Node) *mounter {
	return &mounter{node: n, mounts: map[string]string{}, paths: map[string]bool{}}
}

func (m *mounter) Filesystem(_ context.Context, device string) (string, error) {
	return m.node.filesystemOn(device)
}

func (m *mounter) Format(_ context.Context, device, fsType string) error {
	return m.node.format(device, fsType)
}

func (m *mounter) Mount(_ context.Context, device, target, fsType string, _ []string, _ bool) error {
	if err := m.node.checkMounted(device, fsType); err != nil {
		return err
	}
	m.mounts[target] = device
	return nil
}

func (m *mounter) BindMount(_ context.Context, source, target string, _ bool) error {
	m.mounts[target] = source
	return nil
}

func (m *mounter) Unmount(_ context.Context, target string) error {
	delete(m.mounts, target)
	return nil
}

func (m *mounter) Mounted(_ context.Context, p string) (bool, error) {
	_, ok := m.mounts[p]
	return ok, nil
}

func (m *mounter) Resize(context.Context, string, string, string) error { return nil }

func (m *mounter) Stats(context.Context, string) (csi.VolumeStats, error) {
	return csi.VolumeStats{Block: true}, nil
}

func (m *mounter) MakeDir(p string) error  { m.paths[path.Clean(p)] = true; return nil }
func (m *mounter) MakeFile(p string) error { m.paths[path.Clean(p)] = true; return nil }
func (m *mounter) Remove(p string) error   { delete(m.paths, path.Clean(p)); return nil }
