package placement

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

func zvol(provisioning backend.Provisioning) *backend.VolumeInfo {
	return &backend.VolumeInfo{Name: "pvc-1", SizeBytes: 10 * gib, Provisioning: provisioning}
}

// withData is a diskful replica whose backing volume carries DRBD metadata.
func withData(node string) ReplicaProbe {
	return ReplicaProbe{Node: node, PoolProvisioning: backend.Thin, Volume: zvol(backend.Thin), HasMetadata: true, GenerationID: "GI-" + node}
}

// blank is a diskful replica whose backing volume carries nothing.
func blank(node string) ReplicaProbe {
	return ReplicaProbe{Node: node, PoolProvisioning: backend.Thin, Volume: zvol(backend.Thin)}
}

func running(r ReplicaProbe, live Allocation) ReplicaProbe { r.Live = &live; return r }

func recordOf(a Allocation) *Allocation { return &a }

// decide runs Decide and checks what holds for every adoption: every decision
// has a reason, and no node both adopts and creates metadata.
func decide(t *testing.T, probe Probe) (Adoption, error) {
	t.Helper()
	adoption, err := Decide(probe)
	for _, d := range adoption.Decisions {
		if d.Reason == "" {
			t.Errorf("decision %v has no reason", d)
		}
		if d.Action == ActionCreateMetadata && adoption.Has(d.Node, ActionAdoptMetadata) {
			t.Errorf("node %q both adopts and creates metadata", d.Node)
		}
	}
	return adoption, err
}

// The seed's central bug: a volume the control plane could not find was
// provisioned afresh with new ports, minors and node-ids while it held data,
// and the fresh definition lacked initialized, so the satellite treated it as
// new. Every such probe is refused.
func TestAdoptionNeverReprovisionsAVolumeWithData(t *testing.T) {
	record := recordOf(alloc("pvc-1", 7001, 1001, "a", "b"))
	tests := []struct {
		name  string
		probe Probe
		err   error
	}{
		{"no record, but the chain knows the volume", Probe{Volume: "pvc-1", ChainKnown: true, Replicas: []ReplicaProbe{{Node: "a"}}}, ErrWouldReprovision},
		{"no record, but a node runs it", Probe{Volume: "pvc-1", Replicas: []ReplicaProbe{{Node: "a", Live: recordOf(alloc("pvc-1", 7001, 1001, "a"))}}}, ErrWouldReprovision},
		{"no record, but a node has its metadata", Probe{Volume: "pvc-1", Replicas: []ReplicaProbe{withData("a")}}, ErrWouldReprovision},
		{"no record, but a node has its backing volume", Probe{Volume: "pvc-1", Replicas: []ReplicaProbe{blank("a")}}, ErrWouldReprovision},
		{"no record and no trace", Probe{Volume: "pvc-1", Replicas: []ReplicaProbe{{Node: "a"}}}, ErrNothingToAdopt},
		{"initialized, but no metadata anywhere", Probe{Volume: "pvc-1", Record: record, Initialized: true,
			Replicas: []ReplicaProbe{blank("a"), blank("b")}}, ErrDataNotFound},
		{"initialized, and the backing volume is gone", Probe{Volume: "pvc-1", Record: record, Initialized: true,
			Replicas: []ReplicaProbe{withData("a"), {Node: "b"}}}, ErrDataNotFound},
		{"not marked initialized, but one peer holds metadata", Probe{Volume: "pvc-1", Record: record,
			Replicas: []ReplicaProbe{withData("a"), blank("b")}}, ErrDataNotFound},
		{"not marked initialized, but the kernel runs it", Probe{Volume: "pvc-1", Record: record,
			Replicas: []ReplicaProbe{running(blank("a"), *record)}}, ErrDataNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adoption, err := decide(t, tt.probe)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Decide() error = %v, want %v", err, tt.err)
			}
			if len(adoption.Decisions) != 0 {
				t.Errorf("a refused adoption still decided %v", adoption.Decisions)
			}
		})
	}
}

func TestRefusalsNameTheTraces(t *testing.T) {
	probe := Probe{Volume: "pvc-1", ChainKnown: true, Replicas: []ReplicaProbe{withData("b"), blank("c"),
		running(blank("a"), alloc("pvc-1", 7001, 1001, "a"))}}
	_, err := Decide(probe)
	for _, want := range []string{`"pvc-1" has no record`, "its chain or tombstone exists", "a runs it in the kernel", "b has DRBD metadata", "c has its backing volume"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decide() error %v does not say %q", err, want)
		}
	}
	_, err = Decide(Probe{Volume: "pvc-1", Record: recordOf(alloc("pvc-1", 7001, 1001)), Initialized: true,
		Replicas: []ReplicaProbe{withData("a"), blank("c"), blank("b")}})
	if err == nil || !strings.Contains(err.Error(), "no DRBD metadata on b, c") {
		t.Errorf("Decide() error %v does not name b and c", err)
	}
}

func TestAdoptionOfMetadata(t *testing.T) {
	record := recordOf(alloc("pvc-1", 7001, 1001, "a", "b", "c"))
	diskless := ReplicaProbe{Node: "c", Diskless: true}
	tests := []struct {
		name        string
		probe       Probe
		want        []Decision // actions and values; reasons are checked to exist
		initialized bool
	}{
		{name: "existing metadata is adopted and its generation identifier seeded",
			probe:       Probe{Volume: "pvc-1", Record: record, Initialized: true, Replicas: []ReplicaProbe{withData("b"), withData("a"), diskless}},
			want:        []Decision{{Node: "a", Action: ActionAdoptMetadata, Value: "GI-a"}, {Node: "b", Action: ActionAdoptMetadata, Value: "GI-b"}},
			initialized: true},
		{name: "a converted record without initialized is not new when metadata exists",
			probe: Probe{Volume: "pvc-1", Record: record, Replicas: []ReplicaProbe{withData("a"), withData("b"), diskless}},
			want: []Decision{{Action: ActionMarkInitialized}, {Node: "a", Action: ActionAdoptMetadata, Value: "GI-a"},
				{Node: "b", Action: ActionAdoptMetadata, Value: "GI-b"}},
			initialized: true},
		{name: "no metadata and not initialized: new, create-md on diskful nodes only",
			probe: Probe{Volume: "pvc-1", Record: record, Replicas: []ReplicaProbe{blank("a"), {Node: "b"}, diskless}},
			want:  []Decision{{Node: "a", Action: ActionCreateMetadata}, {Node: "b", Action: ActionCreateMetadata}}},
		{name: "metadata on a diskless replica proves nothing",
			probe: Probe{Volume: "pvc-1", Record: record, Replicas: []ReplicaProbe{blank("a"), {Node: "c", Diskless: true, HasMetadata: true}}},
			want:  []Decision{{Node: "a", Action: ActionCreateMetadata}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adoption, err := decide(t, tt.probe)
			if err != nil {
				t.Fatalf("Decide() error = %v", err)
			}
			if got := withoutReasons(adoption.Decisions); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decide() decisions %v, want %v", got, tt.want)
			}
			if adoption.Initialized != tt.initialized {
				t.Errorf("Decide() initialized = %v, want %v", adoption.Initialized, tt.initialized)
			}
		})
	}
}

func withoutReasons(decisions []Decision) []Decision {
	out := []Decision{}
	for _, d := range decisions {
		d.Reason = ""
		out = append(out, d)
	}
	return out
}

func TestExistingFilesystemIsNeverReformatted(t *testing.T) {
	a, b := withData("a"), withData("b")
	a.Filesystem, b.Filesystem = "xfs", "xfs"
	probe := Probe{Volume: "pvc-1", Record: recordOf(alloc("pvc-1", 7001, 1001, "a", "b")), Initialized: true, Replicas: []ReplicaProbe{a, b}}
	adoption, err := decide(t, probe)
	if err != nil {
		t.Fatal(err)
	}
	if adoption.Filesystem != "xfs" || !adoption.Has("a", ActionKeepFilesystem) || !adoption.Has("b", ActionKeepFilesystem) {
		t.Errorf("Decide() filesystem %q, decisions %v; want xfs kept on a and b", adoption.Filesystem, adoption.Decisions)
	}
	// A new resource on a volume that carries a filesystem (a clone of a
	// received snapshot) gets metadata and keeps the filesystem.
	clone := blank("a")
	clone.Filesystem = "ext4"
	adoption, err = decide(t, Probe{Volume: "pvc-1", Record: probe.Record, Replicas: []ReplicaProbe{clone}})
	if err != nil || !adoption.Has("a", ActionCreateMetadata) || !adoption.Has("a", ActionKeepFilesystem) || adoption.Filesystem != "ext4" {
		t.Errorf("Decide() on a clone: %+v, %v; want create-md and ext4 kept", adoption, err)
	}
	b.Filesystem = "ext4"
	if _, err := Decide(Probe{Volume: "pvc-1", Record: probe.Record, Initialized: true, Replicas: []ReplicaProbe{a, b}}); !errors.Is(err, ErrProbesDisagree) {
		t.Errorf("xfs on a, ext4 on b: error = %v, want ErrProbesDisagree", err)
	}
}

// LINSTOR keeps no DRBD ports in its custom resources, and records can be
// stale: the values the kernel runs win, the record is corrected, and the
// discrepancy is reported.
func TestLivePortWinsOverRecord(t *testing.T) {
	live := Allocation{Resource: "pvc-1", Port: 7010, Minor: 1003, Replicas: []Replica{{"a", 0}, {"b", 2}}}
	tests := []struct {
		name     string
		record   Allocation
		want     []Discrepancy
		corrects bool
	}{
		{name: "stale port and node-id", record: alloc("pvc-1", 7003, 1003, "a", "b"),
			want: []Discrepancy{{Field: FieldPort, Recorded: 7003, Live: 7010}, {Field: FieldNodeID, Node: "b", Recorded: 1, Live: 2}}, corrects: true},
		{name: "a record without port or minor, as converted from LINSTOR", record: Allocation{Resource: "pvc-1", Replicas: live.Replicas},
			want: []Discrepancy{{Field: FieldPort, Live: 7010}, {Field: FieldMinor, Live: 1003}}, corrects: true},
		{name: "a record that matches", record: live, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := Probe{Volume: "pvc-1", Record: &tt.record, Initialized: true,
				Replicas: []ReplicaProbe{running(withData("a"), live), running(withData("b"), live)}}
			adoption, err := decide(t, probe)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(adoption.Discrepancies, tt.want) || adoption.Has("", ActionCorrectRecord) != tt.corrects {
				t.Errorf("Decide() discrepancies %v (correct: %v), want %v (%v)", adoption.Discrepancies,
					adoption.Has("", ActionCorrectRecord), tt.want, tt.corrects)
			}
			if !reflect.DeepEqual(adoption.Record, live) {
				t.Errorf("Decide() record %+v, want the live %+v", adoption.Record, live)
			}
			// The corrected record goes through the allocator unchanged.
			var records []Allocation
			if tt.record.Port != 0 { // an allocator holds only complete records
				records = append(records, tt.record)
			}
			allocator := newChecked(t, DefaultConfig(), records...)
			if got, err := allocator.adopt(adoption.Record); err != nil || !reflect.DeepEqual(got, live) {
				t.Errorf("Allocator.Adopt(corrected record) = %+v, %v; want %+v", got, err, live)
			}
		})
	}
}

func TestLiveValuesMustAgreeAcrossNodes(t *testing.T) {
	record := recordOf(alloc("pvc-1", 7001, 1001, "a", "b"))
	seenByA := alloc("pvc-1", 7001, 1001, "a", "b")
	tests := []struct {
		name    string
		seenByB Allocation
		err     error
	}{
		{"the same view", seenByA, nil},
		{"a partial view that agrees", alloc("pvc-1", 7001, 1001, "a"), nil},
		{"another port", alloc("pvc-1", 7002, 1001, "a", "b"), ErrProbesDisagree},
		{"another minor", alloc("pvc-1", 7001, 1002, "a", "b"), ErrProbesDisagree},
		{"another node-id for b", Allocation{Resource: "pvc-1", Port: 7001, Minor: 1001, Replicas: []Replica{{"a", 0}, {"b", 3}}}, ErrProbesDisagree},
		{"another node on b's node-id", alloc("pvc-1", 7001, 1001, "a", "c"), ErrProbesDisagree},
		{"another resource", alloc("pvc-2", 7001, 1001, "a", "b"), ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := Probe{Volume: "pvc-1", Record: record, Initialized: true,
				Replicas: []ReplicaProbe{running(withData("a"), seenByA), running(withData("b"), tt.seenByB)}}
			if _, err := decide(t, probe); !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
				t.Errorf("Decide() error = %v, want %v", err, tt.err)
			}
		})
	}
}

func TestUnallocatedRecordAsksForAllocation(t *testing.T) {
	probe := Probe{Volume: "pvc-1", Record: &Allocation{Resource: "pvc-1"}, Replicas: []ReplicaProbe{blank("a")}}
	adoption, err := decide(t, probe)
	if err != nil || !adoption.Has("", ActionAllocate) {
		t.Errorf("Decide() = %v, %v; want an Allocate decision", adoption.Decisions, err)
	}
	probe.Record = recordOf(alloc("pvc-1", 7001, 1001, "a"))
	if adoption, _ := decide(t, probe); adoption.Has("", ActionAllocate) {
		t.Errorf("a recorded port and minor still ask for allocation: %v", adoption.Decisions)
	}
}

// A thick-declared pool could hold sparse volumes under LINSTOR; adopting them
// as thick reserved their full size and filled the pool mid-migration.
func TestSparseVolumeInThickPoolAdoptsThin(t *testing.T) {
	tests := []struct {
		name         string
		pool, volume backend.Provisioning
		thin         bool
	}{
		{"sparse volume in a thick pool", backend.Thick, backend.Thin, true},
		{"reserved volume in a thick pool", backend.Thick, backend.Thick, false},
		{"sparse volume in a thin pool", backend.Thin, backend.Thin, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replica := withData("a")
			replica.PoolProvisioning, replica.Volume = tt.pool, zvol(tt.volume)
			adoption, err := decide(t, Probe{Volume: "pvc-1", Record: recordOf(alloc("pvc-1", 7001, 1001, "a")), Initialized: true,
				Replicas: []ReplicaProbe{replica}})
			if err != nil {
				t.Fatal(err)
			}
			if adoption.Has("a", ActionCarryOverThin) != tt.thin {
				t.Errorf("Decide() carries over thin: %v, want %v (%v)", !tt.thin, tt.thin, adoption.Decisions)
			}
		})
	}
}

func TestAdoptionHoldsTopUp(t *testing.T) {
	replicas := []ReplicaProbe{withData("a"), withData("b"), {Node: "c", Diskless: true}}
	probe := Probe{Volume: "pvc-1", Record: recordOf(alloc("pvc-1", 7001, 1001, "a", "b", "c")), Initialized: true, PlaceCount: 3, Replicas: replicas}
	adoption, err := decide(t, probe)
	if err != nil || !adoption.Has("", ActionHoldTopUp) {
		t.Fatalf("Decide() = %v, %v; want the top-up held", adoption.Decisions, err)
	}
	if i := slices.IndexFunc(adoption.Decisions, func(d Decision) bool { return d.Action == ActionHoldTopUp }); !strings.Contains(adoption.Decisions[i].Reason, "2 of 3 replicas") {
		t.Errorf("HoldTopUp reason %q does not count the diskful replicas", adoption.Decisions[i].Reason)
	}
	probe.PlaceCount = 2
	if adoption, _ := decide(t, probe); adoption.Has("", ActionHoldTopUp) {
		t.Errorf("a complete volume holds a top-up: %v", adoption.Decisions)
	}
}

func TestDecideIsDeterministicAndOrdered(t *testing.T) {
	live := alloc("pvc-1", 7010, 1010, "a", "b", "c")
	replicas := []ReplicaProbe{running(withData("c"), live), running(withData("a"), live), running(withData("b"), live)}
	replicas[0].PoolProvisioning = backend.Thick
	replicas[1].Filesystem, replicas[2].Filesystem = "ext4", "ext4"
	probe := Probe{Volume: "pvc-1", Record: recordOf(alloc("pvc-1", 7001, 1001, "a", "b", "c")), PlaceCount: 4, Replicas: replicas}
	first, err := Decide(probe)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(probe.Replicas)
	second, _ := Decide(probe)
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("probe order changed the adoption:\n%v\n%v", first, second)
	}
	var order []string
	for _, d := range first.Decisions {
		order = append(order, d.Node+":"+d.Action.String())
	}
	want := []string{":CorrectRecord", ":MarkInitialized", ":HoldTopUp", "a:AdoptMetadata", "a:KeepFilesystem",
		"b:AdoptMetadata", "b:KeepFilesystem", "c:AdoptMetadata", "c:CarryOverThin"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("decision order %q, want %q", order, want)
	}
}

func TestDecideRejectsMalformedProbes(t *testing.T) {
	record := recordOf(alloc("pvc-1", 7001, 1001, "a"))
	tests := []struct {
		name  string
		probe Probe
	}{
		{"no volume", Probe{Record: record}},
		{"a node twice", Probe{Volume: "pvc-1", Record: record, Replicas: []ReplicaProbe{blank("a"), blank("a")}}},
		{"an unnamed node", Probe{Volume: "pvc-1", Record: record, Replicas: []ReplicaProbe{blank("")}}},
		{"another volume's record", Probe{Volume: "pvc-2", Record: record}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decide(tt.probe); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Decide() error = %v, want ErrInvalidInput", err)
			}
		})
	}
}

func TestEnumStrings(t *testing.T) {
	for _, a := range []Action{ActionAdoptMetadata, ActionCreateMetadata, ActionMarkInitialized, ActionKeepFilesystem,
		ActionCorrectRecord, ActionAllocate, ActionCarryOverThin, ActionHoldTopUp} {
		if strings.HasPrefix(a.String(), "Action(") {
			t.Errorf("Action %d has no name", a)
		}
	}
	if Action(0).String() != "Action(0)" || Field(0).String() != "Field(0)" {
		t.Errorf("unknown enum values print as %q, %q", Action(0), Field(0))
	}
	d := Discrepancy{Field: FieldNodeID, Node: "b", Recorded: 1, Live: 2}
	if d.String() != "node-id of b recorded 1, live 2" {
		t.Errorf("Discrepancy.String() = %q", d)
	}
}

// FuzzDecide feeds arbitrary probes (outside input: what agents report) and
// checks the rules that must hold whatever they say.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		probe := drawProbe(&byteChoices{data: data})
		adoption, err := Decide(probe)
		if err != nil {
			if len(adoption.Decisions) != 0 {
				t.Fatalf("refusal %v carries decisions %v", err, adoption.Decisions)
			}
			if probe.Record == nil && !errors.Is(err, ErrWouldReprovision) && !errors.Is(err, ErrNothingToAdopt) && !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("no record: error = %v, want a refusal to provision", err)
			}
			return
		}
		checkAdoptionRules(t, probe, adoption)
	})
}

func checkAdoptionRules(t *testing.T, probe Probe, adoption Adoption) {
	t.Helper()
	holdsData := probe.Initialized
	for _, r := range probe.Replicas {
		holdsData = holdsData || (!r.Diskless && (r.HasMetadata || r.Live != nil))
	}
	for _, d := range adoption.Decisions {
		if d.Reason == "" {
			t.Fatalf("decision %v has no reason", d)
		}
		if d.Action == ActionCreateMetadata && holdsData {
			t.Fatalf("create-md on %q of a resource that holds data: %+v", d.Node, probe)
		}
	}
	for _, r := range probe.Replicas {
		if r.Diskless {
			continue
		}
		if r.HasMetadata != adoption.Has(r.Node, ActionAdoptMetadata) {
			t.Fatalf("node %q: metadata %v but adopt decision %v", r.Node, r.HasMetadata, !r.HasMetadata)
		}
		if r.Live != nil && (adoption.Record.Port != r.Live.Port && r.Live.Port != 0) {
			t.Fatalf("record port %d, but %q runs port %d", adoption.Record.Port, r.Node, r.Live.Port)
		}
	}
	if adoption.Initialized != holdsData {
		t.Fatalf("initialized = %v, but the resource holds data: %v", adoption.Initialized, holdsData)
	}
}

func drawProbe(c choices) Probe {
	probe := Probe{Volume: "pvc-1", Initialized: c.intN(2) == 0, ChainKnown: c.intN(2) == 0, PlaceCount: c.intN(4)}
	if c.intN(4) != 0 {
		probe.Record = recordOf(alloc("pvc-1", uint16(7000+c.intN(3)), uint32(1000*c.intN(2)), "a", "b"))
	}
	live := alloc("pvc-1", uint16(7000+c.intN(2)), uint32(1000+c.intN(2)), "a", "b", "c")
	for _, node := range []string{"a", "b", "c"}[:1+c.intN(3)] {
		r := ReplicaProbe{Node: node, Diskless: c.intN(5) == 0, HasMetadata: c.intN(2) == 0,
			PoolProvisioning: backend.Provisioning(c.intN(2)), Filesystem: []string{"", "ext4", "xfs"}[c.intN(3)]}
		if c.intN(3) != 0 {
			r.Volume = zvol(backend.Provisioning(c.intN(2)))
		}
		if c.intN(3) == 0 {
			view := live
			if c.intN(6) == 0 {
				view.Port++
			}
			r.Live = &view
		}
		probe.Replicas = append(probe.Replicas, r)
	}
	return probe
}
