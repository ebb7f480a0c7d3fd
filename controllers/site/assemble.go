package site

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/placement"
)

// Assembling a site's control plane. Every runner builds it here from a
// StorageCluster's layout -- the operator from the object it reads
// (ensureSite), the simulation from the layout it is told -- so that the core
// runs with one set of defaults wherever it runs. Its storage API is a
// storageapi.Local over the core; the CSI driver's services are assembled by
// csi.Assemble.

// The StorageCluster's defaults, as its CRD declares them (the API server
// applies them to an object; a layout written in code gets them from
// Defaulted). TestTheLayoutDefaultsAreTheCRDs holds the two together.
const (
	DefaultReplicationInterval = 5 * time.Minute
	DefaultSnapshotRetention   = 3
	DefaultPlaceCount          = 2
	// DefaultThinOvercommitPercent lets a thin pool be provisioned four
	// times its size (docs/capacity.md).
	DefaultThinOvercommitPercent = 400
)

// DefaultDRBDPorts and DefaultDRBDMinors are LINSTOR's ranges, the CRD's
// defaults.
var (
	DefaultDRBDPorts  = v1.PortRange{Min: 7000, Max: 7999}
	DefaultDRBDMinors = v1.MinorRange{Min: 1000, Max: 49999}
)

// Defaulted is the layout with the CRD's defaults in its zero fields.
func Defaulted(l v1.StorageLayout) v1.StorageLayout {
	if l.ReplicationInterval.Duration == 0 {
		l.ReplicationInterval = metav1.Duration{Duration: DefaultReplicationInterval}
	}
	if l.SnapshotRetention == 0 {
		l.SnapshotRetention = DefaultSnapshotRetention
	}
	if l.PlaceCount == 0 {
		l.PlaceCount = DefaultPlaceCount
	}
	if l.DRBDPorts == (v1.PortRange{}) {
		l.DRBDPorts = DefaultDRBDPorts
	}
	if l.DRBDMinors == (v1.MinorRange{}) {
		l.DRBDMinors = DefaultDRBDMinors
	}
	if l.Pool.ThinOvercommitPercent == 0 {
		l.Pool.ThinOvercommitPercent = DefaultThinOvercommitPercent
	}
	return l
}

// CoreParts are what the runner supplies beyond the layout.
type CoreParts struct {
	Store core.Store
	Peers core.Peers
	Clock backend.Clock
	// NewVolumeID names new volumes: UUIDv4s in production, seeded in the
	// simulation. ReplicaToken authorises a replica's streams (core.Config).
	NewVolumeID  func() chain.VolumeID
	ReplicaToken func(source chain.Ref) string
}

// NewCore assembles the control plane of cluster from its layout.
func NewCore(cluster chain.ClusterID, layout v1.StorageLayout, parts CoreParts) (*core.Site, error) {
	return core.New(coreConfig(cluster, layout, parts), parts.Store, parts.Peers, parts.Clock)
}

// coreConfig is the core's configuration of a layout, defaulted.
func coreConfig(cluster chain.ClusterID, layout v1.StorageLayout, parts CoreParts) core.Config {
	l := Defaulted(layout)
	ranges := placement.Ranges{FirstPort: uint16(l.DRBDPorts.Min), LastPort: uint16(l.DRBDPorts.Max),
		FirstMinor: uint32(l.DRBDMinors.Min), LastMinor: uint32(l.DRBDMinors.Max)}
	return core.Config{Cluster: cluster, Interval: l.ReplicationInterval.Duration, Retention: int(l.SnapshotRetention),
		Placement: placement.Config{Default: ranges}, ThinOvercommitPercent: uint64(l.Pool.ThinOvercommitPercent), NewVolumeID: parts.NewVolumeID, ReplicaToken: parts.ReplicaToken}
}
