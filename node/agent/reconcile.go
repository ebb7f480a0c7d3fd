package agent

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
)

// Reconcile converges the node on spec and reports what it holds. Each step
// is idempotent; a step that fails is reported and the rest go on.
func (a *Agent) Reconcile(spec core.NodeSpec) core.NodeStatus {
	a.mu.Lock()
	a.spec = spec
	a.mu.Unlock()

	var problems []string
	report := func(err error) {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	held := heldVolumes(a.options.Pool)
	for _, v := range spec.Volumes {
		report(a.converge(v, held))
	}
	for _, dataset := range spec.Destroy {
		report(a.destroy(dataset))
	}
	for _, send := range spec.Sends {
		report(a.ship(send))
	}
	status := a.status()
	status.Errors = problems
	return status
}

// converge brings one volume to its spec: dataset, size, DRBD, role, fence,
// snapshots.
func (a *Agent) converge(v core.VolumeSpec, held map[string]backend.VolumeInfo) error {
	if err := a.ensureDataset(v, held); err != nil {
		return err
	}
	replica, err := a.ensureReplication(v)
	var pending *demotionPending
	if err != nil && !errors.As(err, &pending) {
		return err
	}
	pool := a.options.Pool
	fenced := readOnly(v, replica)
	if err := pool.SetReadOnly(v.Dataset, fenced); err != nil {
		if !fenced {
			// btrfs: a file system the fence shut down is still mounted
			// and fails every write until remounted. The volume is not
			// writable as its role says, and the status says so.
			return fmt.Errorf("failed to lift the fence of %s: %w", v.Dataset, err)
		}
		return fmt.Errorf("failed to fence %s: %w", v.Dataset, err)
	}
	if pending != nil {
		// Fenced, and still Primary: no snapshot of a member whose role is
		// not what its spec says.
		return pending
	}
	if len(v.Snapshots) > 0 {
		if err := a.takeSnapshots(v); err != nil {
			return err
		}
	}
	for _, name := range v.Prune {
		err := pool.DestroySnapshot(v.Dataset, name)
		if err != nil && !errors.Is(err, backend.ErrNotFound) {
			return fmt.Errorf("failed to prune %s@%s: %w", v.Dataset, name, err)
		}
	}
	return nil
}

// takeSnapshots takes the snapshots the spec orders that the volume lacks.
// The volume's snapshots are listed only here: most passes order none, and
// on btrfs a listing reads the whole pool.
func (a *Agent) takeSnapshots(v core.VolumeSpec) error {
	if err := a.snapshotsAllowed(v); err != nil {
		return err
	}
	pool := a.options.Pool
	snaps, err := pool.Snapshots(v.Dataset)
	if err != nil {
		return err
	}
	for _, name := range v.Snapshots {
		if !slices.ContainsFunc(snaps, func(s backend.SnapshotInfo) bool { return s.Name == name }) {
			if err := pool.Snapshot(v.Dataset, name); err != nil {
				return fmt.Errorf("failed to snapshot %s@%s: %w", v.Dataset, name, err)
			}
		}
	}
	return nil
}

// snapshotsAllowed refuses to snapshot a DRBD replica whose disk is not
// UpToDate: a node that missed writes (down, disconnected, or resyncing after
// a restart) holds a stale or torn copy, and a snapshot of it would ship as
// if it held every acknowledged write. The pairing waits; the snapshot is
// taken once the disk is in sync. An UpToDate connected replica holds every
// write protocol C acknowledged, whether it is the primary or not.
func (a *Agent) snapshotsAllowed(v core.VolumeSpec) error {
	drbd := a.options.Replicator
	if drbd == nil || !v.Up {
		return nil
	}
	status, err := drbd.Status(v.Resource.Name)
	if err != nil {
		return fmt.Errorf("not snapshotting %s: %w", v.Dataset, err)
	}
	if status.Disk != backend.UpToDate {
		return fmt.Errorf("not snapshotting %s on %s: its disk is %s", v.Dataset, a.options.Node, status.Disk)
	}
	if status.Role == backend.Primary {
		return nil
	}
	// A Secondary that believes itself UpToDate may be stale: a peer it is
	// not connected to may be a primary writing on (after a crash during a
	// resync the two sides can even refuse to reconnect). Only a Secondary
	// connected to every peer is known to hold every acknowledged write.
	for _, p := range status.Peers {
		if p.Connection != backend.Connected {
			return fmt.Errorf("not snapshotting %s on %s: not connected to %s (%s), which may hold newer writes",
				v.Dataset, a.options.Node, p.Node, p.Connection)
		}
	}
	return nil
}

// ensureDataset finds the volume's dataset, or makes it: a clone of its
// origin, or an empty volume -- but never for a dataset this node held before.
// A dataset under DRBD holds the replicator's metadata too, on top of the
// size the volume promises its consumer.
func (a *Agent) ensureDataset(v core.VolumeSpec, held map[string]backend.VolumeInfo) error {
	pool := a.options.Pool
	if sizer, ok := a.options.Replicator.(backend.MetadataSizer); ok {
		v.SizeBytes += sizer.MetadataBytes(v.SizeBytes)
	}
	info, err := volumeOf(pool, v.Dataset, held)
	switch {
	case err == nil:
		if info.SizeBytes < v.SizeBytes {
			return pool.ResizeVolume(v.Dataset, v.SizeBytes)
		}
		return nil
	case !errors.Is(err, backend.ErrNotFound):
		return err
	case v.MustExist:
		return fmt.Errorf("volume %s held data on %s and is gone: refusing to provision it empty", v.Dataset, a.options.Node)
	case v.Origin.Dataset != "":
		err := pool.Clone(v.Origin.Dataset, v.Origin.Snapshot, v.Dataset)
		if errors.Is(err, backend.ErrNotFound) && a.options.Replicator != nil {
			// This node missed the snapshot the clone starts from: it joins as
			// an empty replica and DRBD syncs it from the nodes that have it.
			return pool.CreateVolume(v.Dataset, v.SizeBytes, v.Provisioning)
		}
		if err != nil {
			return fmt.Errorf("failed to clone %s@%s into %s: %w", v.Origin.Dataset, v.Origin.Snapshot, v.Dataset, err)
		}
		if info, err := pool.Volume(v.Dataset); err == nil && info.SizeBytes < v.SizeBytes {
			return pool.ResizeVolume(v.Dataset, v.SizeBytes)
		}
		return nil
	}
	return pool.CreateVolume(v.Dataset, v.SizeBytes, v.Provisioning)
}

// heldVolumes lists the pool's volumes once for a pass, by name: one
// reading where describing each volume on its own costs a command each. nil
// if the listing failed; each volume is then described on its own.
func heldVolumes(pool backend.Pool) map[string]backend.VolumeInfo {
	volumes, err := pool.Volumes()
	if err != nil {
		return nil
	}
	held := make(map[string]backend.VolumeInfo, len(volumes))
	for _, v := range volumes {
		held[v.Name] = v
	}
	return held
}

// volumeOf describes a dataset from the pass's listing (ErrNotFound if it
// lists no such volume), or on its own without one.
func volumeOf(pool backend.Pool, dataset string, held map[string]backend.VolumeInfo) (backend.VolumeInfo, error) {
	if held == nil {
		return pool.Volume(dataset)
	}
	info, ok := held[dataset]
	if !ok {
		return backend.VolumeInfo{}, fmt.Errorf("%w: no volume %s in the pool's listing", backend.ErrNotFound, dataset)
	}
	return info, nil
}

// ensureReplication brings the DRBD resource up (adopting metadata that
// exists), or down for a tombstone, starts a new volume's identical replicas
// without an initial sync, and sets the role. It returns the resource's
// status as it found it: nil without DRBD, or for a tombstone.
func (a *Agent) ensureReplication(v core.VolumeSpec) (*backend.ResourceStatus, error) {
	drbd := a.options.Replicator
	if drbd == nil {
		return nil, nil
	}
	if !v.Up {
		err := drbd.Down(v.Resource.Name)
		if errors.Is(err, backend.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	has, err := drbd.HasMetadata(v.Resource)
	if err != nil {
		return nil, err
	}
	if !has {
		if err := drbd.CreateMetadata(v.Resource); err != nil {
			return nil, fmt.Errorf("failed to create DRBD metadata for %s: %w", v.Resource.Name, err)
		}
	}
	if err := drbd.Up(v.Resource); err != nil {
		return nil, fmt.Errorf("failed to bring %s up: %w", v.Resource.Name, err)
	}
	status, err := drbd.Status(v.Resource.Name)
	if err != nil {
		return nil, err
	}
	if !v.Initialized && a.startsFresh(v.Resource, status) {
		// Every replica of a new volume holds zeros: identical, so none needs an
		// initial sync. A lone replica is simply declared good by a forced
		// promotion, as drbdadm's own "primary --force" does for a first start.
		if len(v.Resource.Nodes) == 1 {
			err = drbd.Primary(v.Resource.Name, true)
		} else {
			err = drbd.NewCurrentUUID(v.Resource.Name, true)
		}
		if err != nil {
			return nil, err
		}
		if status, err = drbd.Status(v.Resource.Name); err != nil {
			return nil, err
		}
	}
	switch {
	case v.Role == backend.Primary && status.Role != backend.Primary && status.Disk != backend.UpToDate:
		// DRBD would promote a SyncTarget that reads through its peer, but
		// then the peer's loss splits the data between two nodes, neither
		// whole. The device waits until this replica holds all of it.
		return nil, fmt.Errorf("not promoting %s on %s before its resync completes: its disk is %s",
			v.Resource.Name, a.options.Node, status.Disk)
	case v.Role == backend.Primary && status.Role != backend.Primary:
		err = drbd.Primary(v.Resource.Name, onlyFencedMissing(status, v.FencedPeers))
	case v.Role == backend.Secondary && status.Role == backend.Primary:
		err = a.demote(v)
	}
	if err == nil && v.Role == backend.Primary {
		err = a.fenceDevice(v, v.ReadOnly)
	}
	// A role change leaves the disk state as it was: the status still holds.
	return &status, err
}

// demote fences the resource's device, then makes it Secondary. The fence
// comes first: DRBD refuses the demotion while the device is open, and a
// file system mounted from it would go on writing, and replicating, until
// it is unmounted. A demotion refused after the fence (ErrBusy: the file
// system is still mounted, the CSI unstage unmounts it) is demotionPending:
// the member takes no writes, the role waits for the device to close.
func (a *Agent) demote(v core.VolumeSpec) error {
	if err := a.fenceDevice(v, true); err != nil {
		return fmt.Errorf("not demoting %s on %s: %w", v.Resource.Name, a.options.Node, err)
	}
	err := a.options.Replicator.Secondary(v.Resource.Name)
	if errors.Is(err, backend.ErrBusy) {
		return &demotionPending{resource: v.Resource.Name, node: a.options.Node, err: err}
	}
	return err
}

// fenceDevice sets or lifts the fence on the resource's own device, where
// the replicator has one (backend.DeviceFencer). A Primary's fence is lifted
// on every pass: the flag a demotion's fence set outlives the role, and a
// file system the fence shut down and still mounted is reported so, not as
// writable (fence.ErrStillShutDown).
func (a *Agent) fenceDevice(v core.VolumeSpec, fenced bool) error {
	fencer, ok := a.options.Replicator.(backend.DeviceFencer)
	if !ok {
		return nil
	}
	return fencer.FenceDevice(v.Resource.Name, fenced)
}

// demotionPending is a demotion DRBD refused after the device's fence held:
// the device is still open, by a file system mounted from it that the fence
// shut down. The status reports it on every pass until the device closes
// and the demotion goes through; nothing writes meanwhile.
type demotionPending struct {
	resource, node string
	err            error
}

func (d *demotionPending) Error() string {
	return fmt.Sprintf("%s is fenced on %s but stays Primary while its device is open (a file system mounted from it, "+
		"shut down by the fence, until it is unmounted): %v", d.resource, d.node, d.err)
}

func (d *demotionPending) Unwrap() error { return d.err }

// readOnly is the fence of a member that is no longer Active: its dataset
// turns read-only -- but not while DRBD still has to resync this replica.
// A replica behind its peers (a node that was down when the member was
// demoted) takes the writes it missed into its backing volume, and those
// writes would fail on a read-only zvol, the resync with them, and the
// replica would never hold the data its final snapshot must carry. Nothing
// else writes meanwhile: a fenced member has no Primary.
func readOnly(v core.VolumeSpec, replica *backend.ResourceStatus) bool {
	if !v.ReadOnly || replica == nil {
		return v.ReadOnly
	}
	return replica.Disk == backend.UpToDate
}

// onlyFencedMissing reports whether every peer this UpToDate replica is not
// connected to is fenced, and one is: then the promotion may skip fencing the
// peer (drbdadm primary --force), which DRBD cannot do itself without a
// fence-peer handler. The local disk is UpToDate (the caller checked), so the
// force never makes stale data current; it only vouches for the missing peer.
func onlyFencedMissing(status backend.ResourceStatus, fenced []string) bool {
	missing := 0
	for _, p := range status.Peers {
		if p.Connection == backend.Connected {
			continue
		}
		if !slices.Contains(fenced, p.Node) {
			return false
		}
		missing++
	}
	return missing > 0
}

// startsFresh reports whether this node should start a new resource: all its
// replicas are up, connected and Inconsistent, and this node has the lowest
// node-id, so exactly one node does it.
func (a *Agent) startsFresh(config backend.ResourceConfig, status backend.ResourceStatus) bool {
	if status.Disk != backend.Inconsistent || len(config.Nodes) == 0 || config.Nodes[0].Node != a.options.Node {
		return false
	}
	for _, p := range status.Peers {
		if p.Connection != backend.Connected || p.Disk != backend.Inconsistent {
			return false
		}
	}
	return len(status.Peers) == len(config.Nodes)-1
}

func (a *Agent) destroy(dataset string) error {
	if drbd := a.options.Replicator; drbd != nil {
		if err := drbd.Down(dataset); err != nil && !errors.Is(err, backend.ErrNotFound) {
			return err
		}
	}
	err := a.options.Pool.DestroyVolume(dataset)
	if errors.Is(err, backend.ErrNotFound) {
		return nil
	}
	return err
}

// ship starts the streams a send asks for, one per receiver, unless they are
// already in flight. The send succeeds when one receiver took the snapshot:
// the data is then on the other site, and a receiver that missed it catches
// up through DRBD once a clone starts there.
func (a *Agent) ship(send core.SendSpec) error {
	key := sendKey(send)
	a.mu.Lock()
	busy := a.inFlight[key] || slices.ContainsFunc(a.finished, func(r core.SendResult) bool {
		return sendKey(core.SendSpec{Dataset: r.Dataset, Snapshot: r.Snapshot, Target: r.Target}) == key
	})
	a.mu.Unlock()
	// A send that finished but is not reported yet is still in the spec: the
	// control plane has not heard of it. Shipping it again would only repeat it.
	if busy || len(send.Receivers) == 0 {
		return nil
	}
	streams := make([]io.ReadCloser, 0, len(send.Receivers))
	for range send.Receivers {
		stream, err := a.options.Pool.Send(send.Dataset, send.Base, send.Snapshot)
		if err != nil {
			for _, s := range streams {
				s.Close()
			}
			return fmt.Errorf("failed to send %s@%s: %w", send.Dataset, send.Snapshot, err)
		}
		streams = append(streams, stream)
	}
	a.mu.Lock()
	a.inFlight[key] = true
	a.mu.Unlock()
	started := a.now()
	outcome := &shipment{send: send, started: started, pending: len(send.Receivers)}
	for i, receiver := range send.Receivers {
		header := StreamHeader{Source: a.options.Cluster, Dataset: send.TargetDataset, Snapshot: send.Snapshot,
			GUID: send.GUID, Token: receiver.Token}
		a.options.Transport.Ship(receiver, header, streams[i], func(bytes uint64, err error) {
			a.mu.Lock()
			defer a.mu.Unlock()
			if result, done := outcome.add(receiver, bytes, err, a.now()); done {
				delete(a.inFlight, key)
				a.finished = append(a.finished, result)
			}
		})
	}
	return nil
}

// shipment gathers the outcomes of one send's streams.
type shipment struct {
	send      core.SendSpec
	started   time.Time
	pending   int
	delivered int
	bytes     uint64
	failures  []string
	noBase    int
}

func (s *shipment) add(receiver core.Receiver, bytes uint64, err error, now time.Time) (core.SendResult, bool) {
	s.pending--
	s.bytes += bytes
	switch {
	case err == nil:
		s.delivered++
	case errors.Is(err, backend.ErrNoBase):
		s.noBase++
		s.failures = append(s.failures, receiver.Node+": "+err.Error())
	default:
		s.failures = append(s.failures, receiver.Node+": "+err.Error())
	}
	if s.pending > 0 {
		return core.SendResult{}, false
	}
	result := core.SendResult{Dataset: s.send.Dataset, Snapshot: s.send.Snapshot, Target: s.send.Target,
		Bytes: s.bytes, Started: s.started, Finished: now}
	if s.delivered == 0 {
		result.Error = strings.Join(s.failures, "; ")
		result.NoBase = s.noBase == len(s.send.Receivers)
	}
	return result, true
}

// allSnapshots lists every volume's snapshots in one reading where the pool
// can (backend.SnapshotLister); nil otherwise, or if the listing failed, and
// then each volume's are listed on their own.
func allSnapshots(pool backend.Pool) map[string][]backend.SnapshotInfo {
	lister, ok := pool.(backend.SnapshotLister)
	if !ok {
		return nil
	}
	all, err := lister.AllSnapshots()
	if err != nil {
		return nil
	}
	return all
}

// status reads what the node holds and hands over finished streams.
func (a *Agent) status() core.NodeStatus {
	status := core.NodeStatus{Node: a.options.Node, Address: a.options.Address}
	pool := a.options.Pool
	if usage, err := pool.Usage(); err == nil {
		status.Usage = usage
	}
	volumes, err := pool.Volumes()
	if err != nil {
		status.Errors = append(status.Errors, err.Error())
	}
	all := allSnapshots(pool)
	for _, v := range volumes {
		d := core.DatasetStatus{Name: v.Name}
		snaps := all[v.Name] // absent: none
		if all == nil {
			if snaps, err = pool.Snapshots(v.Name); err != nil {
				continue
			}
		}
		for _, s := range snaps {
			d.Snapshots = append(d.Snapshots, core.SnapshotInfo{Name: s.Name, GUID: s.GUID})
		}
		status.Datasets = append(status.Datasets, d)
	}
	if drbd := a.options.Replicator; drbd != nil {
		status.Resources = []backend.ResourceStatus{}
		for _, v := range a.spec.Volumes {
			if r, err := drbd.Status(v.Resource.Name); err == nil {
				status.Resources = append(status.Resources, r)
			}
		}
	}
	a.mu.Lock()
	status.Sent, a.finished = a.finished, nil
	a.mu.Unlock()
	return status
}
