package core

import (
	"errors"
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
)

// CreateRequest asks for a new volume.
type CreateRequest struct {
	Name string
	Shape
}

// CreateVolume creates a volume, the root of its own chain. It is idempotent by
// name: the same name and shape returns the existing volume; the same name with
// another shape is ErrExists.
func (s *Site) CreateVolume(request CreateRequest) (Volume, error) {
	return perform(s, func(d Decisions, _ *Told) (Volume, Effects, error) { return d.CreateVolume(request) })
}

// CreateVolume decides Site.CreateVolume.
func (d Decisions) CreateVolume(request CreateRequest) (Volume, Effects, error) {
	return decide(d.s, func(op *Site) (Volume, error) { return op.createVolume(request) })
}

func (s *Site) createVolume(request CreateRequest) (Volume, error) {
	if err := validateCreate(request); err != nil {
		return Volume{}, err
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return Volume{}, err
	}
	found := func(v Volume) bool {
		return v.Name == request.Name && !v.Deleting && (findsUndecided() || !v.Undecided())
	}
	if i := slices.IndexFunc(volumes, found); i >= 0 {
		v := volumes[i]
		if v.Undecided() {
			return Volume{}, fmt.Errorf("%w: volume %q (%s) keeps no DRBD values yet", ErrAdopting, request.Name, v.Ref)
		}
		if v.Shape != request.Shape {
			return Volume{}, fmt.Errorf("%w: volume %q is %d bytes %s, asked %d bytes %s",
				ErrExists, request.Name, v.SizeBytes, v.VolumeMode, request.SizeBytes, request.VolumeMode)
		}
		return v, nil
	}
	if i := slices.IndexFunc(volumes, Volume.Undecided); i >= 0 && findsUndecided() {
		// A fresh allocation may take a port a live resource runs on.
		return Volume{}, fmt.Errorf("%w: %s keeps no DRBD values yet: no volume is created until it is adopted",
			ErrAdopting, volumes[i].Ref)
	}
	ref := chain.Ref{Cluster: s.config.Cluster, Volume: s.config.NewVolumeID()}
	v := Volume{
		Member:    chain.Member{Ref: ref, Root: ref, State: chain.Active},
		Shape:     request.Shape,
		Name:      request.Name,
		CreatedAt: s.now(),
	}
	if err := s.place(&v, nil); err != nil {
		return Volume{}, err
	}
	if err := s.store.PutVolume(v); err != nil {
		return Volume{}, err
	}
	return v, nil
}

func validateCreate(r CreateRequest) error {
	switch {
	case r.Name == "":
		return fmt.Errorf("%w: a volume needs a name", ErrInvalid)
	case r.SizeBytes == 0:
		return fmt.Errorf("%w: volume %q has no size", ErrInvalid, r.Name)
	case r.PlaceCount < 1 || r.PlaceCount > placement.MaxReplicas:
		return fmt.Errorf("%w: placeCount %d is outside 1..%d", ErrInvalid, r.PlaceCount, placement.MaxReplicas)
	case r.VolumeMode != Filesystem && r.VolumeMode != Block:
		return fmt.Errorf("%w: volumeMode %q is neither Filesystem nor Block", ErrInvalid, r.VolumeMode)
	}
	return nil
}

// place chooses the volume's nodes (preferring those in prefer, which hold its
// data already) and allocates its DRBD resource.
func (s *Site) place(v *Volume, prefer []string) error {
	candidates, allocations, err := s.candidates(prefer)
	if err != nil {
		return err
	}
	plan, err := placement.Place(placement.Request{Volume: v.Dataset(), SizeBytes: v.SizeBytes,
		PlaceCount: v.PlaceCount, Provisioning: v.Provisioning, ThinOvercommitPercent: s.config.ThinOvercommitPercent, AddReplicas: true}, candidates)
	if errors.Is(err, placement.ErrNotEnoughNodes) {
		return fmt.Errorf("%w: %w", ErrNoCapacity, err)
	}
	if err != nil {
		return err
	}
	chosen := append(slices.Clone(plan.Keep), plan.Add...)
	if len(chosen) > v.PlaceCount {
		chosen = chosen[:v.PlaceCount]
	}
	allocator, err := placement.NewAllocator(s.config.Placement, allocations)
	if err != nil {
		return err
	}
	allocation, err := allocator.Allocate(v.Dataset(), chosen)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoCapacity, err)
	}
	v.Allocation = allocation
	v.Primary, v.Home = chosen[0], chosen[0]
	return nil
}

// Volume returns a local member.
func (s *Site) Volume(ref chain.Ref) (Volume, error) {
	if err := s.local(ref); err != nil {
		return Volume{}, err
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return Volume{}, err
	}
	i := slices.IndexFunc(volumes, func(v Volume) bool { return v.Ref == ref })
	if i < 0 {
		return Volume{}, fmt.Errorf("%w: volume %s", ErrNotFound, ref)
	}
	return volumes[i], nil
}

// DeleteVolume deletes a volume that takes no part in replication: its nodes
// destroy the data, then the record goes. A missing volume is success (CSI
// DeleteVolume is idempotent). A member of a chain with other members, or one
// with a pairing, is ErrReplicated: a replica on the other site must never be
// destroyed by cleaning up this one, and a chain's records are never dropped.
func (s *Site) DeleteVolume(ref chain.Ref) error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.DeleteVolume(ref) })
	return err
}

// DeleteVolume decides Site.DeleteVolume.
func (d Decisions) DeleteVolume(ref chain.Ref) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.deleteVolume(ref) })
}

func (s *Site) deleteVolume(ref chain.Ref) error {
	v, err := s.Volume(ref)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if v.Generation > 0 || !v.Successor.IsZero() {
		return fmt.Errorf("%w: %s is generation %d of chain %s", ErrReplicated, ref, v.Generation, v.Root)
	}
	if _, ok, err := s.pairing(ref); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %s ships to another site; disable its replication first", ErrReplicated, ref)
	}
	v.Deleting = true
	return s.store.PutVolume(v)
}

// ExpandVolume grows a volume; the nodes resize their datasets.
func (s *Site) ExpandVolume(ref chain.Ref, sizeBytes uint64) (Volume, error) {
	return perform(s, func(d Decisions, _ *Told) (Volume, Effects, error) { return d.ExpandVolume(ref, sizeBytes) })
}

// ExpandVolume decides Site.ExpandVolume.
func (d Decisions) ExpandVolume(ref chain.Ref, sizeBytes uint64) (Volume, Effects, error) {
	return decide(d.s, func(op *Site) (Volume, error) { return op.expandVolume(ref, sizeBytes) })
}

func (s *Site) expandVolume(ref chain.Ref, sizeBytes uint64) (Volume, error) {
	v, err := s.Volume(ref)
	if err != nil {
		return Volume{}, err
	}
	if v.State != chain.Active {
		return Volume{}, fmt.Errorf("%w: %s is %s", ErrInvalid, ref, v.State)
	}
	if sizeBytes < v.SizeBytes {
		return Volume{}, fmt.Errorf("%w: %s cannot shrink from %d to %d bytes", ErrInvalid, ref, v.SizeBytes, sizeBytes)
	}
	v.SizeBytes = sizeBytes
	return v, s.store.PutVolume(v)
}

// Members answers what this site records of root's chain (chain.Directory).
func (s *Site) Members(root chain.Ref) ([]chain.Member, error) {
	volumes, err := lendOrList(s.store, Lender.LendVolumes, s.store.Volumes) // read only
	if err != nil {
		return nil, err
	}
	var out []chain.Member
	for _, v := range volumes {
		if v.Root == root && !v.Deleting {
			out = append(out, v.Member)
		}
	}
	return out, nil
}

// Holdings lists the GUIDs of the snapshots of root's chain this site holds,
// in its members and in its replicas, sorted.
func (s *Site) Holdings(root chain.Ref) ([]string, error) {
	volumes, err := s.store.Volumes()
	if err != nil {
		return nil, err
	}
	replicas, err := s.store.Replicas()
	if err != nil {
		return nil, err
	}
	var guids []string
	for _, v := range volumes {
		if v.Root == root {
			for _, snap := range v.Snapshots {
				guids = append(guids, snap.GUID)
			}
		}
	}
	for _, r := range replicas {
		if r.Root == root {
			for _, snap := range r.held() {
				guids = append(guids, snap.GUID)
			}
		}
	}
	slices.Sort(guids)
	return slices.Compact(guids), nil
}
