package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/storage/chain"
)

// ErrMalformedSnapshotRef reports a snapshot ID that is not a member reference
// and a UUID joined by "@".
var ErrMalformedSnapshotRef = errors.New("malformed snapshot ID")

// SnapshotRef addresses a user snapshot: the member it was taken of and its own
// UUID, written "<cluster-uuid>:<volume-uuid>@<snapshot-uuid>". It is the CSI
// snapshot ID, kept by the CO for ever: the member part never changes, even
// after the chain moved on, because the snapshot stays on that member's dataset.
type SnapshotRef struct {
	Member   chain.Ref
	Snapshot string // a UUID
}

func (r SnapshotRef) String() string {
	if r.Member.IsZero() {
		return ""
	}
	return r.Member.String() + "@" + r.Snapshot
}

// Name is the snapshot's name on the member's dataset.
func (r SnapshotRef) Name() string { return "csi-" + r.Snapshot }

// ParseSnapshotRef parses the form String renders; only canonical lowercase
// UUIDs are accepted, so one snapshot has one spelling.
func ParseSnapshotRef(s string) (SnapshotRef, error) {
	member, snapshot, found := strings.Cut(s, "@")
	if !found || !chain.IsUUID(snapshot) {
		return SnapshotRef{}, fmt.Errorf("%w %q: want <cluster-uuid>:<volume-uuid>@<snapshot-uuid>", ErrMalformedSnapshotRef, clip(s))
	}
	ref, err := chain.ParseRef(member)
	if err != nil {
		return SnapshotRef{}, fmt.Errorf("%w: %w", ErrMalformedSnapshotRef, err)
	}
	return SnapshotRef{Member: ref, Snapshot: snapshot}, nil
}

// UserSnapshot is a snapshot asked for through CSI, recorded on the member it
// was taken of. The member's home node takes it; DeleteSnapshot marks it, and
// the home node destroys it once no clone depends on it any more.
type UserSnapshot struct {
	Ref SnapshotRef
	// Name is the CSI snapshot name (the idempotency key); empty for the
	// snapshot a volume clone is made from.
	Name string
	// ForClone names the volume a clone-of-a-volume snapshot was taken for.
	ForClone  string
	Root      chain.Ref // the handle of the volume the snapshot is of
	SizeBytes uint64
	CreatedAt time.Time
	Deleting  bool
}

// Snapshot is a user snapshot as CSI reports it: ready once the home node
// reported it taken.
type Snapshot struct {
	UserSnapshot
	GUID  string
	Ready bool
}

// CloneSource is what a new volume starts from: exactly one of a snapshot or a
// local member.
type CloneSource struct {
	Snapshot SnapshotRef
	Volume   chain.Ref
}

// CreateSnapshot records a snapshot of a local Active member, which its home
// node takes. It is idempotent by name: the same name of the same chain returns
// the snapshot recorded first (also when the chain has moved on since); the
// same name of another volume is ErrExists.
func (s *Site) CreateSnapshot(member chain.Ref, name string) (Snapshot, error) {
	return perform(s, func(d Decisions, _ *Told) (Snapshot, Effects, error) { return d.CreateSnapshot(member, name) })
}

// CreateSnapshot decides Site.CreateSnapshot.
func (d Decisions) CreateSnapshot(member chain.Ref, name string) (Snapshot, Effects, error) {
	return decide(d.s, func(op *Site) (Snapshot, error) { return op.createSnapshot(member, name) })
}

func (s *Site) createSnapshot(member chain.Ref, name string) (Snapshot, error) {
	if name == "" {
		return Snapshot{}, fmt.Errorf("%w: a snapshot needs a name", ErrInvalid)
	}
	v, err := s.Volume(member)
	if err != nil {
		return Snapshot{}, err
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return Snapshot{}, err
	}
	if found, ok := findUserSnapshot(volumes, func(u UserSnapshot) bool { return u.Name == name && !u.Deleting }); ok {
		if found.Root != v.Root {
			return Snapshot{}, fmt.Errorf("%w: snapshot %q is of %s", ErrExists, name, found.Root)
		}
		return found, nil
	}
	u, err := s.snapshot(&v, name, "")
	if err != nil {
		return Snapshot{}, err
	}
	return v.view(u), s.store.PutVolume(v)
}

// snapshot appends a new user snapshot to v, which must be Active.
func (s *Site) snapshot(v *Volume, name, forClone string) (UserSnapshot, error) {
	if v.State != chain.Active || v.Deleting {
		return UserSnapshot{}, fmt.Errorf("%w: %s is %s", ErrNotActive, v.Ref, v.State)
	}
	v.purgeUserSnapshots()
	u := UserSnapshot{Ref: SnapshotRef{Member: v.Ref, Snapshot: string(s.config.NewVolumeID())}, Name: name,
		ForClone: forClone, Root: v.Root, SizeBytes: v.SizeBytes, CreatedAt: s.now()}
	v.UserSnapshots = append(v.UserSnapshots, u)
	return u, nil
}

// DeleteSnapshot marks a user snapshot deleted. A missing one is success (CSI
// DeleteSnapshot is idempotent). The home node destroys it once no live volume
// was cloned from it.
func (s *Site) DeleteSnapshot(ref SnapshotRef) error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.DeleteSnapshot(ref) })
	return err
}

// DeleteSnapshot decides Site.DeleteSnapshot.
func (d Decisions) DeleteSnapshot(ref SnapshotRef) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.deleteSnapshot(ref) })
}

func (s *Site) deleteSnapshot(ref SnapshotRef) error {
	v, err := s.Volume(ref.Member)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	i := slices.IndexFunc(v.UserSnapshots, func(u UserSnapshot) bool { return u.Ref == ref })
	if i < 0 || v.UserSnapshots[i].Deleting {
		return nil
	}
	v.UserSnapshots[i].Deleting = true
	v.purgeUserSnapshots()
	return s.store.PutVolume(v)
}

// ListSnapshots lists the user snapshots of this site's members, sorted by ID;
// deleted ones and those taken for volume clones are left out.
func (s *Site) ListSnapshots() ([]Snapshot, error) {
	volumes, err := s.store.Volumes()
	if err != nil {
		return nil, err
	}
	var out []Snapshot
	for _, v := range volumes {
		if v.Deleting {
			continue
		}
		for _, u := range v.UserSnapshots {
			if !u.Deleting && u.ForClone == "" {
				out = append(out, v.view(u))
			}
		}
	}
	slices.SortFunc(out, func(a, b Snapshot) int { return cmp.Compare(a.Ref.String(), b.Ref.String()) })
	return out, nil
}

// CreateVolumeFrom creates a volume, the root of its own chain, as a clone of
// a user snapshot or of a local member (through a snapshot taken for it). It is
// idempotent by name like CreateVolume. The clone is placed on the source's
// nodes, its home node first: that is where the origin snapshot is taken.
func (s *Site) CreateVolumeFrom(request CreateRequest, source CloneSource) (Volume, error) {
	return perform(s, func(d Decisions, _ *Told) (Volume, Effects, error) { return d.CreateVolumeFrom(request, source) })
}

// CreateVolumeFrom decides Site.CreateVolumeFrom.
func (d Decisions) CreateVolumeFrom(request CreateRequest, source CloneSource) (Volume, Effects, error) {
	return decide(d.s, func(op *Site) (Volume, error) { return op.createVolumeFrom(request, source) })
}

func (s *Site) createVolumeFrom(request CreateRequest, source CloneSource) (Volume, error) {
	if err := validateCreate(request); err != nil {
		return Volume{}, err
	}
	if source.Snapshot.Member.IsZero() == source.Volume.IsZero() {
		return Volume{}, fmt.Errorf("%w: a clone needs exactly one source, a snapshot or a volume", ErrInvalid)
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return Volume{}, err
	}
	if i := slices.IndexFunc(volumes, func(v Volume) bool { return v.Name == request.Name && !v.Deleting }); i >= 0 {
		return existingClone(volumes[i], request, source, volumes)
	}
	src, u, err := s.cloneOrigin(request, source)
	if err != nil {
		return Volume{}, err
	}
	if request.SizeBytes < src.SizeBytes {
		return Volume{}, fmt.Errorf("%w: a clone of %s needs at least %d bytes, asked %d", ErrInvalid, src.Ref, src.SizeBytes, request.SizeBytes)
	}
	view := src.view(u)
	ref := chain.Ref{Cluster: s.config.Cluster, Volume: s.config.NewVolumeID()}
	v := Volume{
		Member: chain.Member{Ref: ref, Root: ref, State: chain.Active},
		Shape:  request.Shape, Name: request.Name, CreatedAt: s.now(),
		Origin:      Origin{Dataset: src.Dataset(), Snapshot: u.Ref.Name(), GUID: view.GUID},
		Initialized: true, FsFound: src.FsFound,
	}
	if err := s.place(&v, homeFirst(src)); err != nil {
		return Volume{}, err
	}
	if err := s.store.PutVolume(src); err != nil {
		return Volume{}, err
	}
	return v, s.store.PutVolume(v)
}

// cloneOrigin finds (or, for a volume source, takes) the snapshot a clone
// starts from and returns its member with it recorded.
func (s *Site) cloneOrigin(request CreateRequest, source CloneSource) (Volume, UserSnapshot, error) {
	if !source.Volume.IsZero() {
		src, err := s.Volume(source.Volume)
		if err != nil {
			return Volume{}, UserSnapshot{}, err
		}
		// A first attempt whose second write (the clone) failed took it
		// already: taking another would leave the first for ever.
		if i := slices.IndexFunc(src.UserSnapshots, func(u UserSnapshot) bool {
			return u.ForClone == request.Name && !u.Deleting
		}); i >= 0 {
			return src, src.UserSnapshots[i], nil
		}
		u, err := s.snapshot(&src, "", request.Name)
		return src, u, err
	}
	src, err := s.Volume(source.Snapshot.Member)
	if err != nil {
		return Volume{}, UserSnapshot{}, err
	}
	i := slices.IndexFunc(src.UserSnapshots, func(u UserSnapshot) bool { return u.Ref == source.Snapshot && !u.Deleting })
	if i < 0 {
		return Volume{}, UserSnapshot{}, fmt.Errorf("%w: snapshot %s", ErrNotFound, source.Snapshot)
	}
	return src, src.UserSnapshots[i], nil
}

// existingClone answers a repeated CreateVolumeFrom: the same shape from the
// same source, or ErrExists.
func existingClone(v Volume, request CreateRequest, source CloneSource, volumes []Volume) (Volume, error) {
	if v.Shape != request.Shape {
		return Volume{}, fmt.Errorf("%w: volume %q is %d bytes %s, asked %d bytes %s",
			ErrExists, request.Name, v.SizeBytes, v.VolumeMode, request.SizeBytes, request.VolumeMode)
	}
	origin, _ := findUserSnapshot(volumes, func(u UserSnapshot) bool { return u.Ref.Name() == v.Origin.Snapshot })
	same := origin.Ref == source.Snapshot
	if !source.Volume.IsZero() {
		same = origin.Ref.Member == source.Volume && origin.ForClone == request.Name
	}
	if v.Origin.Dataset == "" || !same {
		return Volume{}, fmt.Errorf("%w: volume %q exists with another content source", ErrExists, request.Name)
	}
	return v, nil
}

func homeFirst(v Volume) []string {
	var nodes []string
	if v.Home != "" {
		nodes = append(nodes, v.Home)
	}
	for _, r := range v.Allocation.Replicas {
		if r.Node != v.Home {
			nodes = append(nodes, r.Node)
		}
	}
	return nodes
}

// view renders u with what the home node reported of it.
func (v Volume) view(u UserSnapshot) Snapshot {
	out := Snapshot{UserSnapshot: u}
	if i := slices.IndexFunc(v.Snapshots, func(s SnapshotInfo) bool { return s.Name == u.Ref.Name() }); i >= 0 {
		out.GUID, out.Ready = v.Snapshots[i].GUID, true
	}
	return out
}

// purgeUserSnapshots forgets deleted snapshots the home node no longer holds.
func (v *Volume) purgeUserSnapshots() {
	v.UserSnapshots = slices.DeleteFunc(v.UserSnapshots, func(u UserSnapshot) bool {
		return u.Deleting && !slices.ContainsFunc(v.Snapshots, func(s SnapshotInfo) bool { return s.Name == u.Ref.Name() })
	})
}

// userSnapshotWork is what the home node must do for v's user snapshots: take
// the live ones, destroy the deleted ones no live volume was cloned from.
func userSnapshotWork(v Volume, volumes []Volume) (take, prune []string) {
	for _, u := range v.UserSnapshots {
		name := u.Ref.Name()
		held := slices.ContainsFunc(v.Snapshots, func(s SnapshotInfo) bool { return s.Name == name })
		switch {
		case !u.Deleting && !held && v.State == chain.Active:
			take = append(take, name)
		case u.Deleting && held && !slices.ContainsFunc(volumes, func(c Volume) bool {
			return c.Origin.Dataset == v.Dataset() && c.Origin.Snapshot == name && !c.Deleting
		}):
			prune = append(prune, name)
		}
	}
	return take, prune
}

func findUserSnapshot(volumes []Volume, match func(UserSnapshot) bool) (Snapshot, bool) {
	for _, v := range volumes {
		if i := slices.IndexFunc(v.UserSnapshots, match); i >= 0 && !v.Deleting {
			return v.view(v.UserSnapshots[i]), true
		}
	}
	return Snapshot{}, false
}

// clip keeps error messages short when the input is hostile.
func clip(s string) string {
	const limitBytes = 100
	if len(s) <= limitBytes {
		return s
	}
	return s[:limitBytes] + "…"
}
