package core

import (
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/chain"
)

// DrillRequest asks for the bubble of a test fail-over.
type DrillRequest struct {
	// Name is the bubble's idempotency key, as CreateRequest's is.
	Name string
	// Root is the protected volume's handle, as its PersistentVolume carries it.
	Root chain.Ref
	// Snapshot names the replica snapshot to clone; empty takes the newest.
	Snapshot string
}

// Drill clones a snapshot of this site's replica of root's chain into a bubble:
// a volume of its own (a new root, generation 0) outside the chain. Unlike
// Failover it leaves the replica open and records no hop, so the source keeps
// shipping while the drill runs; DeleteVolume removes the bubble afterwards.
// It is idempotent by name: a bubble that exists is returned as it is.
func (s *Site) Drill(request DrillRequest) (Volume, error) {
	return perform(s, func(d Decisions, _ *Told) (Volume, Effects, error) { return d.Drill(request) })
}

// Drill decides Site.Drill.
func (d Decisions) Drill(request DrillRequest) (Volume, Effects, error) {
	return decide(d.s, func(op *Site) (Volume, error) { return op.drill(request) })
}

func (s *Site) drill(request DrillRequest) (Volume, error) {
	if request.Name == "" || request.Root.IsZero() {
		return Volume{}, fmt.Errorf("%w: a drill needs a name and the protected volume's handle", ErrInvalid)
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return Volume{}, err
	}
	if i := slices.IndexFunc(volumes, func(v Volume) bool { return v.Name == request.Name && !v.Deleting }); i >= 0 {
		return volumes[i], nil
	}
	r, err := s.drillReplica(request.Root)
	if err != nil {
		return Volume{}, err
	}
	snapshot, holders, ok := r.newest()
	if request.Snapshot != "" {
		snapshot, holders, ok = r.named(request.Snapshot)
	}
	if !ok {
		return Volume{}, fmt.Errorf("%w: replica of %s holds no snapshot %q", ErrNoSnapshot, r.Source, request.Snapshot)
	}
	ref := chain.Ref{Cluster: s.config.Cluster, Volume: s.config.NewVolumeID()}
	v := Volume{
		Member:      chain.Member{Ref: ref, Root: ref, State: chain.Active},
		Shape:       r.Shape,
		Name:        request.Name,
		Origin:      Origin{Dataset: r.Dataset(), Snapshot: snapshot.Name, GUID: snapshot.GUID},
		Initialized: true,
		CreatedAt:   s.now(),
	}
	if err := v.Validate(); err != nil {
		panic(fmt.Sprintf("site: drill of %s built an invalid bubble: %v", request.Root, err))
	}
	if err := s.place(&v, holders); err != nil {
		return Volume{}, err
	}
	return v, s.store.PutVolume(v)
}

// drillReplica is the replica a drill clones: of root's chain, still open (not
// failed over here), and of the newest member this site receives.
func (s *Site) drillReplica(root chain.Ref) (Replica, error) {
	replicas, err := s.store.Replicas()
	if err != nil {
		return Replica{}, err
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return Replica{}, err
	}
	best := -1
	for i, r := range replicas {
		if r.Root == root && closedInto(r, volumes).IsZero() && (best < 0 || r.SourceGeneration > replicas[best].SourceGeneration) {
			best = i
		}
	}
	if best < 0 {
		return Replica{}, fmt.Errorf("%w: no open replica of chain %s", ErrNoReplica, root)
	}
	return replicas[best], nil
}

// named returns the snapshot called name and the receiving nodes that hold it.
func (r Replica) named(name string) (SnapshotInfo, []string, bool) {
	var found SnapshotInfo
	var holders []string
	for _, n := range r.Nodes {
		if i := slices.IndexFunc(r.Received[n], func(s SnapshotInfo) bool { return s.Name == name }); i >= 0 {
			found = r.Received[n][i]
			holders = append(holders, n)
		}
	}
	return found, holders, len(holders) > 0
}
