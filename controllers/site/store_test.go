package site_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// dump is a record's canonical text: fmt prints nil and empty slices alike
// and maps sorted by key, which is the equality the core's MemoryStore keeps
// (it clones what it is given). Times print with their location: the store
// reads them back in UTC, and the records here are written in UTC.
func dump(v any) string { return fmt.Sprintf("%+v", v) }

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// onEachBackend runs test once on each kind of client (backends), as a
// subtest, with a namespace and a store over it.
func onEachBackend(t *testing.T, test func(t *testing.T, c client.Client, ns string, s *sitecontroller.Store)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c, ns := b.client(t)
			test(t, c, ns, newStore(t, c, ns))
		})
	}
}

func newStore(t testing.TB, c client.Client, namespace string) *sitecontroller.Store {
	t.Helper()
	s, err := sitecontroller.NewStore(sitecontroller.StoreConfig{Client: c, Namespace: namespace, Cluster: clusterA,
		ClusterName: clusterName, Context: testContext(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storageNode is a StorageNode of cluster site-a, as the deployment flow
// creates it: the node records are kept on it.
func storageNode(namespace, name string) *v1.StorageNode {
	return &v1.StorageNode{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1.StorageNodeSpec{Cluster: clusterName, NodeName: name, Address: "10.0.0.1"}}
}

func createNodes(t *testing.T, c client.Client, namespace string, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := c.Create(testContext(t), storageNode(namespace, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecordsReadBackAsPut puts every record of the tables and a seeded
// random set, and reads each list back: every record unchanged, lists sorted
// as the Store contract says.
func TestRecordsReadBackAsPut(t *testing.T) {
	onEachBackend(t, func(t *testing.T, c client.Client, ns string, s *sitecontroller.Store) {
		r := rand.New(rand.NewPCG(1, 2))
		volumes, pairings, replicas, nodes := volumeTable(), pairingTable(), replicaTable(), nodeTable()
		for i := range 40 {
			volumes = append(volumes, randomVolume(r, i))
			pairings = append(pairings, randomPairing(r, i))
			replicas = append(replicas, randomReplica(r, i))
		}
		createNodes(t, c, ns, "a1", "a2", "a3")
		putAll(t, volumes, s.PutVolume)
		putAll(t, pairings, s.PutPairing)
		putAll(t, replicas, s.PutReplica)
		putAll(t, nodes, s.PutNode)

		slices.SortFunc(volumes, func(a, b core.Volume) int { return chain.CompareRefs(a.Ref, b.Ref) })
		slices.SortFunc(pairings, func(a, b core.Pairing) int { return chain.CompareRefs(a.Source, b.Source) })
		slices.SortFunc(replicas, func(a, b core.Replica) int { return chain.CompareRefs(a.Source, b.Source) })
		checkList(t, "volumes", volumes, must(s.Volumes()))
		checkList(t, "pairings", pairings, must(s.Pairings()))
		checkList(t, "replicas", replicas, must(s.Replicas()))
		checkList(t, "nodes", nodes, must(s.Nodes()))
		for _, got := range must(s.Replicas()) {
			if got.Received == nil {
				t.Errorf("replica of %s read back with a nil Received map; the core writes into it", got.Source)
			}
		}
	})
}

// TestUpdatesReadBackAsPut evolves each table record the way the core does
// (snapshots arrive, a member is fenced and reaped, a pairing ships) and puts
// it again: the update path reads back as exactly as the create path.
func TestUpdatesReadBackAsPut(t *testing.T) {
	onEachBackend(t, func(t *testing.T, c client.Client, ns string, s *sitecontroller.Store) {
		createNodes(t, c, ns, "a1", "a2", "a3")
		for round := range 3 {
			volumes, pairings, replicas, nodes := volumeTable(), pairingTable(), replicaTable(), nodeTable()
			for i := range volumes {
				evolveVolume(&volumes[i], round)
			}
			for i := range pairings {
				evolvePairing(&pairings[i], round)
			}
			for i := range replicas {
				evolveReplica(&replicas[i], round)
			}
			for i := range nodes {
				nodes[i].Schedulable = round%2 == 0
				nodes[i].Usage.FreeBytes = uint64(round)
				nodes[i].ReportedAt = at(round)
			}
			putAll(t, volumes, s.PutVolume)
			putAll(t, pairings, s.PutPairing)
			putAll(t, replicas, s.PutReplica)
			putAll(t, nodes, s.PutNode)
			checkList(t, fmt.Sprintf("round %d volumes", round), volumes, must(s.Volumes()))
			checkList(t, fmt.Sprintf("round %d pairings", round), pairings, must(s.Pairings()))
			checkList(t, fmt.Sprintf("round %d replicas", round), replicas, must(s.Replicas()))
			checkList(t, fmt.Sprintf("round %d nodes", round), nodes, must(s.Nodes()))
		}
	})
}

func evolveVolume(v *core.Volume, round int) {
	if round == 0 {
		return
	}
	v.Snapshots = append(v.Snapshots, core.SnapshotInfo{Name: fmt.Sprintf("baton-%06d", 100+round), GUID: fmt.Sprint(round)})
	v.Present = []string{"a1", "a2", "a3"}[:round]
	v.Initialized = true
	if v.SizeBytes < 1<<62 {
		v.SizeBytes += uint64(round) * 4096 // a volume grows, never shrinks
	}
	if v.State == chain.Active && round == 2 && v.Successor.IsZero() {
		v.State, v.FencedAt, v.Primary = chain.Demoted, at(100), ""
	}
}

func evolvePairing(p *core.Pairing, round int) {
	if round == 0 || p.Phase == 0 {
		return
	}
	p.Sequence = p.Sequence/2 + uint64(round)
	p.Snapshots = append(p.Snapshots, replication.Snapshot{Name: fmt.Sprintf("baton-%06d", 100+round), GUID: fmt.Sprint(round),
		TakenAt: at(round), ShippedAt: at(round + 1)})
	p.Last.At, p.Last.Bytes, p.Failures = at(round+1), uint64(round)<<20, 0
}

func evolveReplica(r *core.Replica, round int) {
	if round == 0 {
		return
	}
	for _, node := range r.Nodes {
		r.Received[node] = append(r.Received[node], core.SnapshotInfo{Name: fmt.Sprintf("baton-%06d", 100+round), GUID: "x"})
	}
}

func putAll[T any](t *testing.T, records []T, put func(T) error) {
	t.Helper()
	for _, r := range records {
		if err := put(r); err != nil {
			t.Fatalf("put %s: %v", dump(r), err)
		}
	}
}

func checkList[T any](t *testing.T, what string, want, got []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: read %d records, put %d", what, len(got), len(want))
	}
	for i := range want {
		if w, g := dump(want[i]), dump(got[i]); w != g {
			t.Errorf("%s[%d] read back differs:\nput  %s\nread %s", what, i, w, g)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestRecordsTheCRDsCannotHoldAreRefused: a record the API has no exact word
// for is an error before anything is written, on either backend.
func TestRecordsTheCRDsCannotHoldAreRefused(t *testing.T) {
	volume := volumeTable()[1]
	unknown, modeless, foreign := volume, volume, volume
	unknown.State = chain.Unknown
	modeless.VolumeMode = ""
	foreign.Ref = ref(clusterB, 77)
	pairing := pairingTable()[0]
	noInterval, lowRetention := pairing, pairing
	noInterval.Interval = 0
	lowRetention.Retention = 1
	cases := []struct {
		name string
		put  func(s *sitecontroller.Store) error
		want error
	}{
		{"a member in no state", func(s *sitecontroller.Store) error { return s.PutVolume(unknown) }, sitecontroller.ErrUnrepresentable},
		{"a member without a volume mode", func(s *sitecontroller.Store) error { return s.PutVolume(modeless) }, sitecontroller.ErrUnrepresentable},
		{"another cluster's member", func(s *sitecontroller.Store) error { return s.PutVolume(foreign) }, sitecontroller.ErrForeignRecord},
		{"a pairing without an interval", func(s *sitecontroller.Store) error { return s.PutPairing(noInterval) }, sitecontroller.ErrUnrepresentable},
		{"a pairing keeping one snapshot", func(s *sitecontroller.Store) error { return s.PutPairing(lowRetention) }, sitecontroller.ErrUnrepresentable},
		{"a node the deployment flow never made", func(s *sitecontroller.Store) error { return s.PutNode(core.Node{Name: "stranger"}) }, sitecontroller.ErrUnknownNode},
	}
	onEachBackend(t, func(t *testing.T, c client.Client, ns string, s *sitecontroller.Store) {
		for _, tc := range cases {
			if err := tc.put(s); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			}
		}
		if n := len(must(s.Volumes())) + len(must(s.Pairings())) + len(must(s.Nodes())); n != 0 {
			t.Errorf("refused records left %d records behind", n)
		}
	})
}

func TestRemovingAMissingRecordIsStoreNotFound(t *testing.T) {
	s := newStore(t, fakeClient(t), "baton")
	for name, remove := range map[string]func() error{
		"volume":  func() error { return s.RemoveVolume(ref(clusterA, 1)) },
		"replica": func() error { return s.RemoveReplica(ref(clusterB, 1)) },
		"pairing": func() error { return s.RemovePairing(ref(clusterA, 1)) },
	} {
		if err := remove(); !errors.Is(err, core.ErrStoreNotFound) {
			t.Errorf("%s: %v, want ErrStoreNotFound", name, err)
		}
	}
	v := volumeTable()[0]
	if err := s.PutVolume(v); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveVolume(v.Ref); err != nil {
		t.Fatal(err)
	}
	if got := must(s.Volumes()); len(got) != 0 {
		t.Fatalf("after removal: %v", got)
	}
}

// TestAnotherClustersObjectIsNeverOverwritten: two clusters' stores share a
// namespace; an object of the same name that holds the other's record is
// refused, and lists show each store only its own.
func TestAnotherClustersObjectIsNeverOverwritten(t *testing.T) {
	c := fakeClient(t)
	a := newStore(t, c, "baton")
	other, err := sitecontroller.NewStore(sitecontroller.StoreConfig{Client: c, Namespace: "baton", Cluster: clusterB,
		ClusterName: "site-b", Context: testContext(t)})
	if err != nil {
		t.Fatal(err)
	}
	v := volumeTable()[0]
	if err := a.PutVolume(v); err != nil {
		t.Fatal(err)
	}
	theirs := v
	theirs.Ref = chain.Ref{Cluster: clusterB, Volume: v.Ref.Volume}
	theirs.Root = theirs.Ref
	if err := other.PutVolume(theirs); !errors.Is(err, sitecontroller.ErrForeignRecord) {
		t.Fatalf("B's put over A's object: %v, want ErrForeignRecord", err)
	}
	if got := must(other.Volumes()); len(got) != 0 {
		t.Fatalf("B lists A's volumes: %v", got)
	}
	if err := other.RemoveVolume(theirs.Ref); !errors.Is(err, core.ErrStoreNotFound) {
		t.Fatalf("B removing A's object: %v, want ErrStoreNotFound", err)
	}
}

// TestRefusedChangesAreNeverHalfApplied sends changes the CRDs' CEL refuses:
// the put fails with Invalid and the stored object is byte for byte what it
// was -- spec, status and resourceVersion -- even when only one half of the
// change was refused.
func TestRefusedChangesAreNeverHalfApplied(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c)
	s := newStore(t, c, ns)
	base := volumeTable()[1] // port 7000, initialized, Active
	if err := s.PutVolume(base); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		change func(v *core.Volume)
	}{
		{"the DRBD port moves", func(v *core.Volume) { v.Allocation.Port = 7001 }},
		{"the DRBD port is forgotten", func(v *core.Volume) { v.Allocation.Port = 0 }},
		{"initialized reverts", func(v *core.Volume) { v.Initialized = false }},
		{"the volume shrinks while its snapshots change", func(v *core.Volume) {
			v.SizeBytes--
			v.Snapshots = nil
		}},
		{"the volume grows while its port moves", func(v *core.Volume) {
			v.SizeBytes++
			v.Allocation.Port = 7001
		}},
		{"the volume mode changes", func(v *core.Volume) { v.VolumeMode = core.Filesystem }},
		{"an active member with a successor", func(v *core.Volume) { v.Successor = ref(clusterB, 50) }},
	}
	for _, tc := range cases {
		before := &v1.Volume{}
		key := client.ObjectKey{Namespace: ns, Name: string(base.Ref.Volume)}
		if err := c.Get(testContext(t), key, before); err != nil {
			t.Fatal(err)
		}
		changed := base
		changed.Snapshots = slices.Clone(base.Snapshots)
		tc.change(&changed)
		err := s.PutVolume(changed)
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want Invalid", tc.name, err)
		}
		after := &v1.Volume{}
		if err := c.Get(testContext(t), key, after); err != nil {
			t.Fatal(err)
		}
		if b, a := jsonOf(t, before), jsonOf(t, after); b != a {
			t.Errorf("%s: the refused put left a trace:\nbefore %s\nafter  %s", tc.name, b, a)
		}
	}

	// A new record whose status is refused is not created at all.
	fresh := volumeTable()[0]
	fresh.Ref, fresh.Root = ref(clusterA, 60), ref(clusterA, 60)
	fresh.Successor = ref(clusterB, 61) // Active with a successor
	if err := s.PutVolume(fresh); !apierrors.IsInvalid(err) {
		t.Fatalf("a new member, Active with a successor: %v, want Invalid", err)
	}
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: string(fresh.Ref.Volume)}, &v1.Volume{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused new member's object: %v, want NotFound", err)
	}

	// A replica once failed over stays so.
	replica := replicaTable()[0]
	if err := s.PutReplica(replica); err != nil {
		t.Fatal(err)
	}
	replica.ClonedInto = ref(clusterA, 62)
	if err := s.PutReplica(replica); !apierrors.IsInvalid(err) {
		t.Fatalf("a replica cloned into a second member: %v, want Invalid", err)
	}
	if got := must(s.Replicas())[0]; got.ClonedInto != replicaTable()[0].ClonedInto {
		t.Fatalf("clonedInto is %s after the refusal", got.ClonedInto)
	}
}

// TestAnUnfinishedCreateReadsAsAbsent: a Volume or a Replication whose create
// never wrote its status (the status write failed, and the delete that undoes
// it too) holds no record: the lists skip it -- every other record stays
// readable -- and the next write of the record makes it whole.
func TestAnUnfinishedCreateReadsAsAbsent(t *testing.T) {
	onEachBackend(t, func(t *testing.T, c client.Client, ns string, s *sitecontroller.Store) {
		ctx := testContext(t)
		volumes, pairings := volumeTable(), pairingTable()
		putAll(t, volumes[:2], s.PutVolume)
		putAll(t, pairings[:2], s.PutPairing)
		unfinish := func(o client.Object) {
			t.Helper()
			if err := c.Delete(ctx, o); err != nil {
				t.Fatal(err)
			}
			o.SetResourceVersion("")
			o.SetUID("")
			if err := c.Create(ctx, o); err != nil { // the status subresource: created without its status
				t.Fatal(err)
			}
		}
		var volume v1.Volume
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: string(volumes[1].Ref.Volume)}, &volume); err != nil {
			t.Fatal(err)
		}
		volume.Status = v1.VolumeStatus{}
		unfinish(&volume)
		var replication v1.Replication
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: string(pairings[1].Source.Volume)}, &replication); err != nil {
			t.Fatal(err)
		}
		replication.Status = v1.ReplicationStatus{}
		unfinish(&replication)
		gotVolumes, err := s.Volumes()
		if err != nil || len(gotVolumes) != 1 || gotVolumes[0].Ref != volumes[0].Ref {
			t.Fatalf("Volumes with one unfinished = %d records, %v; want only %s", len(gotVolumes), err, volumes[0].Ref)
		}
		gotPairings, err := s.Pairings()
		if err != nil || len(gotPairings) != 1 || gotPairings[0].Source != pairings[0].Source {
			t.Fatalf("Pairings with one unfinished = %d records, %v; want only %s's", len(gotPairings), err, pairings[0].Source)
		}
		putAll(t, volumes[1:2], s.PutVolume)
		putAll(t, pairings[1:2], s.PutPairing)
		if gotVolumes, err = s.Volumes(); err != nil || len(gotVolumes) != 2 || dump(gotVolumes[1]) != dump(volumes[1]) {
			t.Fatalf("after the record's next write: %v, %v; want it whole", gotVolumes, err)
		}
		if gotPairings, err = s.Pairings(); err != nil || len(gotPairings) != 2 || dump(gotPairings[1]) != dump(pairings[1]) {
			t.Fatalf("after the pairing's next write: %v, %v; want it whole", gotPairings, err)
		}
	})
}
