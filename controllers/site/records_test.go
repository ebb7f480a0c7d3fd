package site_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/placement"
	"github.com/baton-dr/baton/storage/replication"
)

// The records of the store tests: site A's members and pairings, its replicas
// of site B's members, and its nodes. The hand-written ones sit on the edges
// (largest values, empty lists next to absent ones, nanoseconds, every state);
// the random ones cover the combinations.

const (
	clusterA    chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB    chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
	clusterName                 = "site-a"
)

func ref(cluster chain.ClusterID, n int) chain.Ref {
	return chain.Ref{Cluster: cluster, Volume: chain.VolumeID(fmt.Sprintf("%s0000000-0000-4000-8000-%012d", cluster[:1], n))}
}

// at is an instant with nanoseconds.
func at(seconds int) time.Time {
	return time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC).Add(time.Duration(seconds)*time.Second + 123456789)
}

func volumeTable() []core.Volume {
	root := ref(clusterA, 1)
	b2 := ref(clusterB, 2)
	return []core.Volume{
		{ // a fresh root, nothing allocated yet
			Member: chain.Member{Ref: root, Root: root, State: chain.Active},
			Shape:  core.Shape{SizeBytes: 1, PlaceCount: 1, VolumeMode: core.Filesystem}, Name: "pvc-minimal",
		},
		{ // a fail-over clone of B:v2, fully recorded
			Member: chain.Member{Ref: ref(clusterA, 3), Root: root, Generation: 2, Predecessor: b2, State: chain.Active},
			Shape: core.Shape{SizeBytes: 10 << 30, Provisioning: backend.Thick, PlaceCount: 3, FsType: "xfs",
				VolumeMode: core.Block},
			Origin: core.Origin{Dataset: core.Replica{Source: b2}.Dataset(), Snapshot: "baton-000007", GUID: "g7"},
			Allocation: placement.Allocation{Resource: "vol-" + string(ref(clusterA, 3).Volume), Port: 7000, Minor: 1000,
				Replicas: []placement.Replica{{Node: "a2", NodeID: 1}, {Node: "a1", NodeID: 0}, {Node: "a3", NodeID: 15}}},
			Primary: "a2", Home: "a2", Initialized: true, Present: []string{"a1", "a2"}, FsFound: "xfs",
			CreatedAt: at(1), SuccessorAnnounced: true,
			Snapshots: []core.SnapshotInfo{{Name: "baton-000001", GUID: "1"}, {Name: "baton-000002"}},
		},
		{ // a superseded member: fenced, its tail named, its successor known
			Member: chain.Member{Ref: ref(clusterA, 4), Root: ref(clusterA, 4), Successor: b2, State: chain.Demoted},
			Shape:  core.Shape{SizeBytes: math.MaxInt64, PlaceCount: 16, VolumeMode: core.Filesystem},
			Name:   "pvc-largest",
			Allocation: placement.Allocation{Resource: "r", Port: math.MaxUint16, Minor: 1048575,
				Replicas: []placement.Replica{{Node: "a1", NodeID: 0}}},
			Home: "a1", Initialized: true, Present: []string{}, CreatedAt: at(2), FencedAt: at(3),
			Tail: core.TailSnapshot(b2), Snapshots: []core.SnapshotInfo{},
		},
		{ // a tombstone
			Member: chain.Member{Ref: ref(clusterA, 5), Root: root, Generation: 4, Predecessor: b2, Successor: ref(clusterB, 6),
				State: chain.Tombstone},
			Shape: core.Shape{SizeBytes: 4096, PlaceCount: 2, VolumeMode: core.Block},
			Allocation: placement.Allocation{Resource: "r5", Port: 7001, Minor: 1001,
				Replicas: []placement.Replica{{Node: "a1", NodeID: 0}, {Node: "a2", NodeID: 1}}},
			Home: "a1", Initialized: true, FencedAt: at(4), Tail: "baton-tail-x",
		},
		{ // a drill's bubble: cloned from a replica that is not its predecessor's
			Member: chain.Member{Ref: ref(clusterA, 7), Root: ref(clusterA, 7), State: chain.Active},
			Shape:  core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Block},
			Name:   "drill-0d5e",
			Origin: core.Origin{Dataset: core.Replica{Source: b2}.Dataset(), Snapshot: "baton-000009", GUID: "g9"},
		},
		{ // a CSI clone of a local member, being deleted
			Member: chain.Member{Ref: ref(clusterA, 8), Root: ref(clusterA, 8), State: chain.Active},
			Shape:  core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Filesystem, FsType: "ext4"},
			Name:   "pvc-clone",
			Origin: core.Origin{Dataset: "vol-" + string(root.Volume), Snapshot: "snap-1"},
			Allocation: placement.Allocation{Resource: "r8", Port: 7002, Minor: 1002,
				Replicas: []placement.Replica{{Node: "a1", NodeID: 0}, {Node: "a2", NodeID: 1}}},
			Deleting: true, Destroyed: []string{"a2"},
		},
	}
}

func pairingTable() []core.Pairing {
	due := at(60)
	return []core.Pairing{
		{Pairing: replication.Pairing{Source: ref(clusterA, 1), Target: clusterB, Interval: time.Minute, Retention: 2,
			Phase: replication.Idle, Due: due}},
		{Pairing: replication.Pairing{Source: ref(clusterA, 3), Target: clusterB, Interval: 90*time.Second + 1, Retention: 64,
			Phase: replication.Shipping, Sequence: math.MaxInt64,
			Snapshots: []replication.Snapshot{
				{Name: "baton-000001", GUID: "1", TakenAt: at(1), ShippedAt: at(2)},
				{Name: "baton-000002", GUID: "2", TakenAt: at(3)},
			},
			Base: replication.Base{Volume: "rep-x", Snapshot: "baton-000007", GUID: "g7"}, Due: due, RetryAt: at(5),
			Last:     replication.Sync{At: at(2), Duration: -time.Nanosecond, Bytes: math.MaxInt64, Snapshot: "baton-000001"},
			Failures: 3, LastError: "most recent snapshot does not match incremental source"},
			Receivers: []core.Receiver{{Node: "b2", Address: "10.0.1.2:7900"}, {Node: "b1"}},
			ReaimedAt: at(4)},
		{Pairing: replication.Pairing{Source: ref(clusterA, 4), Target: clusterB, Interval: 5 * time.Minute, Retention: 3,
			Phase: replication.Snapshotting, Sequence: 1, Snapshots: []replication.Snapshot{{Name: "baton-000001"}}, Due: due},
			Receivers: []core.Receiver{}},
		{Pairing: replication.Pairing{Source: ref(clusterA, 5), Target: clusterB, Interval: time.Hour, Retention: 2,
			Phase: replication.Paused, LastError: "superseded"}},
	}
}

func replicaTable() []core.Replica {
	return []core.Replica{
		{Source: ref(clusterB, 2), Root: ref(clusterA, 1), SourceGeneration: 1,
			Shape: core.Shape{SizeBytes: 10 << 30, Provisioning: backend.Thick, PlaceCount: 2, FsType: "xfs", VolumeMode: core.Block},
			Nodes: []string{"a2", "a1"}, Received: map[string][]core.SnapshotInfo{
				"a1": {{Name: "baton-000001", GUID: "1"}, {Name: "baton-000002", GUID: "2"}}, "a2": nil},
			ClonedInto: ref(clusterA, 3), CreatedAt: at(1)},
		{Source: ref(clusterB, 9), Root: ref(clusterB, 9),
			Shape:    core.Shape{SizeBytes: 1, PlaceCount: 1, VolumeMode: core.Filesystem},
			Received: map[string][]core.SnapshotInfo{}},
	}
}

func nodeTable() []core.Node {
	return []core.Node{
		{Name: "a1", Address: "10.0.0.1:7900", Schedulable: true,
			Usage: backend.Usage{SizeBytes: 100 << 30, AllocatedBytes: 1 << 30, FreeBytes: 99 << 30}, ReportedAt: at(1)},
		{Name: "a2", Provisioning: backend.Thick, Usage: backend.Usage{SizeBytes: math.MaxInt64}},
		{Name: "a3", Schedulable: true, Fenced: true},
	}
}

// randomVolume is a valid member of chain root on cluster A: generation 0 is
// the root itself; later generations follow a member of B.
func randomVolume(r *rand.Rand, n int) core.Volume {
	self := ref(clusterA, 1000+n)
	v := core.Volume{Member: chain.Member{Ref: self, Root: self, State: chain.State(1 + r.IntN(3))},
		Shape: core.Shape{SizeBytes: 1 + r.Uint64N(math.MaxInt64), Provisioning: backend.Provisioning(r.IntN(2)),
			PlaceCount: 1 + r.IntN(16), FsType: pick(r, "", "ext4", "xfs"), VolumeMode: core.VolumeMode(pick(r, "Filesystem", "Block"))},
		Name: pick(r, "", fmt.Sprintf("pvc-%d", n)), Primary: pick(r, "", "a1"), Home: pick(r, "", "a1", "a2"),
		Initialized: r.IntN(2) == 0, Present: randomNames(r), StandAlone: randomNames(r), FsFound: pick(r, "", "ext4"),
		CreatedAt: randomTime(r), FencedAt: randomTime(r), Tail: pick(r, "", "baton-tail-1"),
		SuccessorAnnounced: r.IntN(2) == 0, Snapshots: randomSnapshots(r), Deleting: r.IntN(4) == 0, Destroyed: randomNames(r)}
	if r.IntN(2) == 0 {
		v.Generation, v.Root, v.Predecessor = 1+uint32(r.IntN(math.MaxInt32)), ref(clusterA, 1), ref(clusterB, 2000+n)
		v.Origin = core.Origin{Dataset: core.Replica{Source: v.Predecessor}.Dataset(), Snapshot: "baton-000001", GUID: pick(r, "", "g")}
	}
	if v.State != chain.Active && r.IntN(2) == 0 {
		v.Successor = ref(clusterB, 3000+n)
	}
	if r.IntN(2) == 0 {
		v.Allocation = placement.Allocation{Resource: "r", Port: uint16(1 + r.IntN(math.MaxUint16)), Minor: uint32(r.IntN(1048576)),
			Replicas: []placement.Replica{{Node: "a1", NodeID: uint8(r.IntN(8))}, {Node: "a2", NodeID: uint8(8 + r.IntN(8))}}}
	}
	return v
}

func randomPairing(r *rand.Rand, n int) core.Pairing {
	p := core.Pairing{Pairing: replication.Pairing{Source: ref(clusterA, 1000+n), Target: clusterB,
		Interval: time.Duration(1 + r.Int64N(int64(24*time.Hour))), Retention: 2 + r.IntN(63),
		Phase: replication.Phase(1 + r.IntN(4)), Sequence: r.Uint64N(math.MaxInt64),
		Base: replication.Base{Volume: pick(r, "", "rep-x"), Snapshot: pick(r, "", "baton-000001"), GUID: pick(r, "", "g")},
		Due:  randomTime(r), RetryAt: randomTime(r),
		Last: replication.Sync{At: randomTime(r), Duration: time.Duration(r.Int64N(int64(time.Hour))), Bytes: r.Uint64N(math.MaxInt64),
			Snapshot: pick(r, "", "baton-000002")},
		Failures: r.IntN(100), LastError: pick(r, "", "connection refused")},
		ReaimedAt: randomTime(r)}
	for i := range r.IntN(4) {
		p.Snapshots = append(p.Snapshots, replication.Snapshot{Name: replication.SnapshotName(uint64(i + 1)),
			GUID: pick(r, "", "g"), TakenAt: randomTime(r), ShippedAt: randomTime(r)})
	}
	for _, node := range randomNames(r) {
		p.Receivers = append(p.Receivers, core.Receiver{Node: node, Address: pick(r, "", node+":7900")})
	}
	return p
}

func randomReplica(r *rand.Rand, n int) core.Replica {
	rep := core.Replica{Source: ref(clusterB, 1000+n), Root: ref(clusterA, 1), SourceGeneration: uint32(r.IntN(math.MaxInt32)),
		Shape: core.Shape{SizeBytes: 1 + r.Uint64N(math.MaxInt64), Provisioning: backend.Provisioning(r.IntN(2)),
			PlaceCount: 1 + r.IntN(16), VolumeMode: core.VolumeMode(pick(r, "Filesystem", "Block"))},
		Nodes: randomNames(r), Received: map[string][]core.SnapshotInfo{}, CreatedAt: randomTime(r)}
	for _, node := range rep.Nodes {
		rep.Received[node] = randomSnapshots(r)
	}
	if r.IntN(2) == 0 {
		rep.ClonedInto = ref(clusterA, 4000+n)
	}
	return rep
}

func randomTime(r *rand.Rand) time.Time {
	if r.IntN(3) == 0 {
		return time.Time{}
	}
	return time.Unix(r.Int64N(1<<34), r.Int64N(1e9)).UTC()
}

func randomNames(r *rand.Rand) []string {
	all := []string{"a1", "a2", "a3"}
	return all[:r.IntN(len(all)+1)]
}

func randomSnapshots(r *rand.Rand) []core.SnapshotInfo {
	var out []core.SnapshotInfo
	for i := range r.IntN(4) {
		out = append(out, core.SnapshotInfo{Name: replication.SnapshotName(uint64(i + 1)), GUID: pick(r, "", fmt.Sprint(i))})
	}
	return out
}

func pick(r *rand.Rand, choices ...string) string { return choices[r.IntN(len(choices))] }
