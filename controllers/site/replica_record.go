package site

import (
	"fmt"
	"maps"
	"slices"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// renderReplica writes a replica's record onto its Replica object.
func renderReplica(o *v1.Replica, r core.Replica) error {
	size, err := toInt64("sizeBytes", r.SizeBytes)
	if err != nil {
		return err
	}
	placeCount, err := toInt32("placeCount", int64(r.PlaceCount))
	if err != nil {
		return err
	}
	generation, err := toInt32("sourceGeneration", int64(r.SourceGeneration))
	if err != nil {
		return err
	}
	provisioning, err := provisionings.name(r.Provisioning)
	if err != nil {
		return err
	}
	mode, err := volumeModes.name(r.VolumeMode)
	if err != nil {
		return err
	}
	o.Spec = v1.ReplicaSpec{
		Source: v1.VolumeHandle(r.Source.String()), RootHandle: v1.VolumeHandle(r.Root.String()),
		SourceGeneration: generation, SizeBytes: size, PlaceCount: placeCount, Provisioning: provisioning,
		FSType: r.FsType, VolumeMode: mode, Nodes: slices.Clone(r.Nodes), OriginGUID: r.OriginGUID,
	}
	o.Status.Received = nil
	for _, node := range slices.Sorted(maps.Keys(r.Received)) {
		o.Status.Received = append(o.Status.Received, v1.ReceivedSnapshots{Node: node, Snapshots: snapshotRefs(r.Received[node])})
	}
	o.Status.ClonedInto = v1.VolumeHandle(r.ClonedInto.String())
	o.Status.CreatedAt = v1.NewTimestamp(r.CreatedAt)
	return nil
}

// replicaRecord reads a replica back from its Replica object. Received is
// never nil, as the core's own store hands it out.
func replicaRecord(o *v1.Replica) (core.Replica, error) {
	r, err := readReplica(o)
	if err != nil {
		return core.Replica{}, fmt.Errorf("replica %s: %w", o.Name, err)
	}
	return r, nil
}

func readReplica(o *v1.Replica) (core.Replica, error) {
	source, err := chain.ParseRef(string(o.Spec.Source))
	if err != nil {
		return core.Replica{}, err
	}
	root, err := chain.ParseRef(string(o.Spec.RootHandle))
	if err != nil {
		return core.Replica{}, err
	}
	clonedInto, err := parseOptionalRef(string(o.Status.ClonedInto))
	if err != nil {
		return core.Replica{}, err
	}
	provisioning, err := provisioningOf(o.Spec.Provisioning)
	if err != nil {
		return core.Replica{}, err
	}
	size, err := toUint64("sizeBytes", o.Spec.SizeBytes)
	if err != nil || o.Spec.SourceGeneration < 0 {
		return core.Replica{}, fmt.Errorf("size %d, generation %d: %w", o.Spec.SizeBytes, o.Spec.SourceGeneration, err)
	}
	created, err := o.Status.CreatedAt.Time()
	if err != nil {
		return core.Replica{}, err
	}
	r := core.Replica{
		Source: source, Root: root, SourceGeneration: uint32(o.Spec.SourceGeneration),
		Shape: core.Shape{SizeBytes: size, Provisioning: provisioning, PlaceCount: int(o.Spec.PlaceCount),
			FsType: o.Spec.FSType, VolumeMode: core.VolumeMode(o.Spec.VolumeMode)},
		Nodes: slices.Clone(o.Spec.Nodes), Received: map[string][]core.SnapshotInfo{},
		ClonedInto: clonedInto, CreatedAt: created, OriginGUID: o.Spec.OriginGUID,
	}
	for _, received := range o.Status.Received {
		r.Received[received.Node] = snapshotInfos(received.Snapshots)
	}
	return r, nil
}
