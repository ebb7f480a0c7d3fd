package site

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/placement"
)

// renderVolume writes a member's record onto its Volume object: the spec, and
// the status fields the record owns. Conditions, observedGeneration and the
// replicas' disk states are someone else's and stay as they are.
func renderVolume(o *v1.Volume, v core.Volume) error {
	spec, err := volumeSpec(v)
	if err != nil {
		return err
	}
	o.Spec = spec
	return renderVolumeStatus(&o.Status, v)
}

func volumeSpec(v core.Volume) (v1.VolumeSpec, error) {
	size, err := toInt64("sizeBytes", v.SizeBytes)
	if err != nil {
		return v1.VolumeSpec{}, err
	}
	placeCount, err := toInt32("placeCount", int64(v.PlaceCount))
	if err != nil {
		return v1.VolumeSpec{}, err
	}
	generation, err := toInt32("generation", int64(v.Generation))
	if err != nil {
		return v1.VolumeSpec{}, err
	}
	provisioning, err := provisionings.name(v.Provisioning)
	if err != nil {
		return v1.VolumeSpec{}, err
	}
	mode, err := volumeModes.name(v.VolumeMode)
	if err != nil {
		return v1.VolumeSpec{}, err
	}
	return v1.VolumeSpec{
		VolumeID: v1.UUID(v.Ref.Volume), SizeBytes: size, PlaceCount: placeCount, Provisioning: provisioning,
		FSType: v.FsType, VolumeMode: mode, RootHandle: v1.VolumeHandle(v.Root.String()), Generation: generation,
		Predecessor: v1.VolumeHandle(v.Predecessor.String()), OriginSnapshot: originSnapshot(v), CSIName: v.Name,
	}, nil
}

// originSnapshot renders the clone's origin. The member whose snapshot it is
// is named when the dataset says so: a fail-over clone's predecessor's
// replica, or a local member; a drill's bubble names the dataset only.
func originSnapshot(v core.Volume) *v1.OriginSnapshot {
	if v.Origin == (core.Origin{}) {
		return nil
	}
	o := &v1.OriginSnapshot{Dataset: v.Origin.Dataset, SnapshotRef: v1.SnapshotRef{Name: v.Origin.Snapshot, GUID: v.Origin.GUID}}
	switch {
	case !v.Predecessor.IsZero() && v.Origin.Dataset == (core.Replica{Source: v.Predecessor}).Dataset():
		o.Volume = v1.VolumeHandle(v.Predecessor.String())
	case strings.HasPrefix(v.Origin.Dataset, "vol-") && chain.IsUUID(strings.TrimPrefix(v.Origin.Dataset, "vol-")):
		local := chain.Ref{Cluster: v.Ref.Cluster, Volume: chain.VolumeID(strings.TrimPrefix(v.Origin.Dataset, "vol-"))}
		o.Volume = v1.VolumeHandle(local.String())
	}
	return o
}

func renderVolumeStatus(s *v1.VolumeStatus, v core.Volume) error {
	state, err := memberStates.name(v.State)
	if err != nil {
		return err
	}
	s.State, s.Successor = state, v1.VolumeHandle(v.Successor.String())
	s.Replicas = volumeReplicas(s.Replicas, v.Allocation.Replicas)
	s.DRBDPort, s.DRBDMinor = nil, nil
	if v.Allocation.Port != 0 {
		port := int32(v.Allocation.Port)
		s.DRBDPort = &port
	}
	if v.Allocation.Minor != 0 {
		minor, err := toInt32("drbdMinor", int64(v.Allocation.Minor))
		if err != nil {
			return err
		}
		s.DRBDMinor = &minor
	}
	s.Initialized, s.FSType = v.Initialized, v.FsFound
	s.VolumeRecord = v1.VolumeRecord{
		DRBDResource: v.Allocation.Resource, Primary: v.Primary, Home: v.Home,
		PresentNodes: slices.Clone(v.Present), StandAloneNodes: slices.Clone(v.StandAlone), CreatedAt: v1.NewTimestamp(v.CreatedAt),
		FencedAt: v1.NewTimestamp(v.FencedAt), Tail: v.Tail, SuccessorAnnounced: v.SuccessorAnnounced,
		Snapshots: snapshotRefs(v.Snapshots), Deleting: v.Deleting, DestroyedNodes: slices.Clone(v.Destroyed),
		AdoptionPending: v.AdoptionPending,
	}
	s.UserSnapshots, err = userSnapshots(v.UserSnapshots)
	return err
}

// volumeReplicas renders the allocation in its own order, keeping the disk
// state the nodes reported for each node.
func volumeReplicas(stored []v1.VolumeReplica, replicas []placement.Replica) []v1.VolumeReplica {
	var out []v1.VolumeReplica
	for _, r := range replicas {
		vr := v1.VolumeReplica{Node: r.Node, NodeID: int32(r.NodeID)}
		if i := slices.IndexFunc(stored, func(s v1.VolumeReplica) bool { return s.Node == r.Node }); i >= 0 {
			vr.DiskState = stored[i].DiskState
		}
		out = append(out, vr)
	}
	return out
}

// volumeRecord reads a member's record back from its Volume object.
func volumeRecord(cluster chain.ClusterID, o *v1.Volume) (core.Volume, error) {
	v, err := volumeIdentity(cluster, o)
	if err != nil {
		return core.Volume{}, fmt.Errorf("volume %s: %w", o.Name, err)
	}
	if err := readVolumeStatus(&v, &o.Status); err != nil {
		return core.Volume{}, fmt.Errorf("volume %s: %w", o.Name, err)
	}
	return v, nil
}

func volumeIdentity(cluster chain.ClusterID, o *v1.Volume) (core.Volume, error) {
	root, err := chain.ParseRef(string(o.Spec.RootHandle))
	if err != nil {
		return core.Volume{}, err
	}
	predecessor, err := parseOptionalRef(string(o.Spec.Predecessor))
	if err != nil {
		return core.Volume{}, err
	}
	provisioning, err := provisioningOf(o.Spec.Provisioning)
	if err != nil {
		return core.Volume{}, err
	}
	size, err := toUint64("sizeBytes", o.Spec.SizeBytes)
	if err != nil || o.Spec.Generation < 0 {
		return core.Volume{}, fmt.Errorf("size %d, generation %d: %w", o.Spec.SizeBytes, o.Spec.Generation, err)
	}
	v := core.Volume{
		Member: chain.Member{Ref: chain.Ref{Cluster: cluster, Volume: chain.VolumeID(o.Spec.VolumeID)}, Root: root,
			Generation: uint32(o.Spec.Generation), Predecessor: predecessor},
		Shape: core.Shape{SizeBytes: size, Provisioning: provisioning, PlaceCount: int(o.Spec.PlaceCount),
			FsType: o.Spec.FSType, VolumeMode: core.VolumeMode(o.Spec.VolumeMode)},
		Name: o.Spec.CSIName,
	}
	if origin := o.Spec.OriginSnapshot; origin != nil {
		v.Origin = core.Origin{Dataset: origin.Dataset, Snapshot: origin.Name, GUID: origin.GUID}
	}
	return v, nil
}

func readVolumeStatus(v *core.Volume, s *v1.VolumeStatus) error {
	var err error
	if v.State, err = memberStates.value(s.State); err != nil {
		return err
	}
	if v.Successor, err = parseOptionalRef(string(s.Successor)); err != nil {
		return err
	}
	v.Allocation = placement.Allocation{Resource: s.DRBDResource}
	if s.DRBDPort != nil {
		v.Allocation.Port = uint16(*s.DRBDPort)
	}
	if s.DRBDMinor != nil {
		v.Allocation.Minor = uint32(*s.DRBDMinor)
	}
	for _, r := range s.Replicas {
		v.Allocation.Replicas = append(v.Allocation.Replicas, placement.Replica{Node: r.Node, NodeID: uint8(r.NodeID)})
	}
	v.Primary, v.Home, v.Initialized, v.FsFound = s.Primary, s.Home, s.Initialized, s.FSType
	v.Present, v.Tail, v.SuccessorAnnounced = slices.Clone(s.PresentNodes), s.Tail, s.SuccessorAnnounced
	v.StandAlone = slices.Clone(s.StandAloneNodes)
	v.Snapshots, v.Deleting, v.Destroyed = snapshotInfos(s.Snapshots), s.Deleting, slices.Clone(s.DestroyedNodes)
	v.AdoptionPending = s.AdoptionPending
	if v.UserSnapshots, err = userSnapshotRecords(s.UserSnapshots); err != nil {
		return err
	}
	if v.CreatedAt, err = s.CreatedAt.Time(); err != nil {
		return err
	}
	v.FencedAt, err = s.FencedAt.Time()
	return err
}

func snapshotRefs(snapshots []core.SnapshotInfo) []v1.SnapshotRef {
	var out []v1.SnapshotRef
	for _, s := range snapshots {
		out = append(out, v1.SnapshotRef{Name: s.Name, GUID: s.GUID})
	}
	return out
}

func snapshotInfos(refs []v1.SnapshotRef) []core.SnapshotInfo {
	var out []core.SnapshotInfo
	for _, r := range refs {
		out = append(out, core.SnapshotInfo{Name: r.Name, GUID: r.GUID})
	}
	return out
}

// memberStates are the names of a member's states.
var memberStates = apiNames[chain.State, v1.VolumeState]{what: "member state", pairs: []apiName[chain.State, v1.VolumeState]{
	{chain.Active, v1.VolumeActive},
	{chain.Demoted, v1.VolumeDemoted},
	{chain.Tombstone, v1.VolumeTombstone},
}}

// provisionings are the names of a volume's provisionings.
var provisionings = apiNames[backend.Provisioning, v1.Provisioning]{what: "provisioning", pairs: []apiName[backend.Provisioning, v1.Provisioning]{
	{backend.Thin, v1.ProvisioningThin},
	{backend.Thick, v1.ProvisioningThick},
}}

// provisioningOf reads a provisioning field; empty is thin, as the schemas say.
func provisioningOf(p v1.Provisioning) (backend.Provisioning, error) {
	if p == "" {
		return backend.Thin, nil
	}
	return provisionings.value(p)
}

// volumeModes are the names of a volume's modes. An empty mode has none: the
// Volume CRD defaults it to Filesystem, so it would read back as something it
// was not.
var volumeModes = apiNames[core.VolumeMode, corev1.PersistentVolumeMode]{what: "volume mode", pairs: []apiName[core.VolumeMode, corev1.PersistentVolumeMode]{
	{core.Filesystem, corev1.PersistentVolumeFilesystem},
	{core.Block, corev1.PersistentVolumeBlock},
}}

// ReadVolume reads the member record a Volume object holds, its cluster from
// the object's ClusterLabel: for tools that read records without a Store
// (batonctl).
func ReadVolume(o *v1.Volume) (core.Volume, error) {
	cluster := o.Labels[ClusterLabel]
	if !chain.IsUUID(cluster) {
		return core.Volume{}, fmt.Errorf("volume %s carries no %s label", o.Name, ClusterLabel)
	}
	return volumeRecord(chain.ClusterID(cluster), o)
}
