package pooltest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

var streamTests = []test{
	{"SendReceiveFullAndIncremental", testSendReceiveFullAndIncremental},
	{"IncrementalStreamIsProportionalToChange", testIncrementalStreamIsProportional},
	{"ReceiveRefusedOnDivergedTarget", testReceiveRefusedOnDivergedTarget},
	{"ReceiveRefusedWithoutBase", testReceiveRefusedWithoutBase},
	{"BrokenStreamChangesNothing", testBrokenStreamChangesNothing},
	{"ReceiveIntoFencedReplica", testReceiveIntoFencedReplica},
	{"CloneStreamFailBack", testCloneStreamFailBack},
	{"SendRefusals", testSendRefusals},
}

// replica is a volume on site A with its replica received on site B.
type replica struct {
	a, b    backend.Pool
	content []byte // what A's volume "v" holds
}

// newReplica creates A:v with data, snapshots s1 and ships it whole to B:r.
func newReplica(t *testing.T, newPool newPoolFunc) *replica {
	t.Helper()
	rep := &replica{a: newPool(t), b: newPool(t), content: make([]byte, volumeBytes)}
	create(t, rep.a, "v", volumeBytes, backend.Thin)
	rep.write(t, 0, Pattern(70, 8*chunkBytes))
	rep.write(t, volumeBytes/2, Pattern(71, 4*chunkBytes))
	must(t, rep.a.Snapshot("v", "s1"), "Snapshot s1")
	receive(t, rep.b, "r", send(t, rep.a, "v", "", "s1"))
	return rep
}

func (rep *replica) write(t *testing.T, offset int, data []byte) {
	t.Helper()
	Write(t, rep.a, "v", int64(offset), data)
	copy(rep.content[offset:], data)
}

// wantGUIDsMatch checks that B's replica holds A's snapshots by GUID.
func wantGUIDsMatch(t *testing.T, a, b []backend.SnapshotInfo) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("A has %v, B has %v", snapshotNames(a), snapshotNames(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].GUID != b[i].GUID {
			t.Fatalf("snapshot %d: A has %+v, B has %+v; a received snapshot keeps name and GUID", i, a[i], b[i])
		}
	}
}

func testSendReceiveFullAndIncremental(t *testing.T, newPool newPoolFunc) {
	rep := newReplica(t, newPool)
	wantContent(t, rep.b, "r", rep.content, "a fully received replica")
	if info := volumeInfo(t, rep.b, "r"); info.SizeBytes != volumeBytes || info.Origin != "" {
		t.Fatalf("the replica is %+v", info)
	}
	wantGUIDsMatch(t, snapshots(t, rep.a, "v"), snapshots(t, rep.b, "r"))

	full := send(t, rep.a, "v", "", "s1")
	wantRefusal(t, rep.b.Receive("r", bytes.NewReader(full)), backend.ErrExists, "a full stream into an existing volume")
	wantContent(t, rep.b, "r", rep.content, "after a refused full stream")

	for i, name := range []string{"s2", "s3"} {
		rep.write(t, (i+3)*chunkBytes, Pattern(uint64(72+i), 2*chunkBytes))
		must(t, rep.a.Snapshot("v", name), "Snapshot "+name)
		base := []string{"s1", "s2"}[i]
		receive(t, rep.b, "r", send(t, rep.a, "v", base, name))
		wantContent(t, rep.b, "r", rep.content, "after the incremental "+base+".."+name)
		wantGUIDsMatch(t, snapshots(t, rep.a, "v"), snapshots(t, rep.b, "r"))
	}
	// A retried receive of a delta already applied changes nothing: zfs
	// refuses it with ErrExists ("cannot restore to ...: destination already
	// exists"), another tool may consume it.
	err := rep.b.Receive("r", bytes.NewReader(send(t, rep.a, "v", "s2", "s3")))
	if err != nil && !errors.Is(err, backend.ErrExists) {
		t.Fatalf("a repeated incremental receive: %v, want success or ErrExists", err)
	}
	wantContent(t, rep.b, "r", rep.content, "after a repeated incremental")
	wantGUIDsMatch(t, snapshots(t, rep.a, "v"), snapshots(t, rep.b, "r"))
}

func testIncrementalStreamIsProportional(t *testing.T, newPool newPoolFunc) {
	a, b := newPool(t), newPool(t)
	const size = 64 * mib
	create(t, a, "v", size, backend.Thin)
	model := Pattern(80, size)
	Write(t, a, "v", 0, model)
	must(t, a.Snapshot("v", "s1"), "Snapshot s1")
	full := send(t, a, "v", "", "s1")
	if len(full) < size {
		t.Fatalf("a full stream of %d written bytes is %d bytes", size, len(full))
	}
	receive(t, b, "r", full)
	// Change 1% of the volume in chunks spread over it.
	const changed = 10 * chunkBytes
	for i := 0; i < changed/chunkBytes; i++ {
		offset := (i*797 + 13) % (size / chunkBytes) * chunkBytes
		data := Pattern(uint64(81+i), chunkBytes)
		Write(t, a, "v", int64(offset), data)
		copy(model[offset:], data)
	}
	must(t, a.Snapshot("v", "s2"), "Snapshot s2")
	delta := send(t, a, "v", "s1", "s2")
	// Real tools add headers to every record; a delta must still carry the
	// changed bytes and stay far below a resend of the volume.
	if len(delta) < changed || len(delta) >= 3*changed+64<<10 {
		t.Fatalf("an incremental stream of %d changed bytes is %d bytes, want [%d, %d)", changed, len(delta), changed, 3*changed+64<<10)
	}
	receive(t, b, "r", delta)
	wantContent(t, b, "r", model, "after the incremental")
}

func testReceiveRefusedOnDivergedTarget(t *testing.T, newPool newPoolFunc) {
	rep := newReplica(t, newPool)
	rep.write(t, 0, Pattern(90, chunkBytes))
	must(t, rep.a.Snapshot("v", "s2"), "Snapshot s2")
	delta := send(t, rep.a, "v", "s1", "s2")

	// B writes into its replica: the delta must not land on top.
	local := Pattern(91, chunkBytes)
	Write(t, rep.b, "r", 7*chunkBytes, local)
	atB := Content(t, rep.b, "r")
	wantRefusal(t, rep.b.Receive("r", bytes.NewReader(delta)), backend.ErrDiverged, "a delta onto a written replica")
	wantContent(t, rep.b, "r", atB, "after a refused delta")
	wantSnapshots(t, rep.b, "r", "s1")

	// A snapshot taken after the write does not hide it.
	must(t, rep.b.Snapshot("r", "local"), "Snapshot local")
	wantRefusal(t, rep.b.Receive("r", bytes.NewReader(delta)), backend.ErrDiverged, "a delta onto a written, snapshotted replica")
	wantSnapshots(t, rep.b, "r", "s1", "local")
	wantContent(t, rep.b, "r", atB, "after a second refused delta")

	// Discarding the divergence makes the replica receive again.
	must(t, rep.b.DestroySnapshot("r", "local"), "DestroySnapshot local")
	must(t, rep.b.Rollback("r", "s1"), "Rollback to s1")
	receive(t, rep.b, "r", delta)
	wantContent(t, rep.b, "r", rep.content, "after the rollback and the delta")
}

func testReceiveRefusedWithoutBase(t *testing.T, newPool newPoolFunc) {
	rep := newReplica(t, newPool)
	rep.write(t, 0, Pattern(100, chunkBytes))
	must(t, rep.a.Snapshot("v", "s2"), "Snapshot s2")
	delta := send(t, rep.a, "v", "s1", "s2")

	wantRefusal(t, rep.b.Receive("other", bytes.NewReader(delta)), backend.ErrNoBase, "a delta into a missing volume")
	if _, err := rep.b.Volume("other"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("a refused delta left a volume behind: %v", err)
	}
	// A volume of another lineage, even under the replica's name, lacks the base.
	create(t, rep.b, "stranger", volumeBytes, backend.Thin)
	Write(t, rep.b, "stranger", 0, Pattern(101, chunkBytes))
	must(t, rep.b.Snapshot("stranger", "s1"), "Snapshot stranger@s1")
	before := Content(t, rep.b, "stranger")
	wantRefusal(t, rep.b.Receive("stranger", bytes.NewReader(delta)), backend.ErrNoBase, "a delta onto another lineage")
	wantContent(t, rep.b, "stranger", before, "after a refused delta")
	wantSnapshots(t, rep.b, "stranger", "s1")
}

func testBrokenStreamChangesNothing(t *testing.T, newPool newPoolFunc) {
	rep := newReplica(t, newPool)
	full := send(t, rep.a, "v", "", "s1")
	corrupt := bytes.Clone(full)
	corrupt[len(corrupt)/2] ^= 0x55
	for _, broken := range []struct {
		name   string
		stream []byte
	}{
		{"truncated", full[:len(full)/2]}, {"corrupt", corrupt}, {"empty", nil}, {"garbage", Pattern(110, 4096)},
	} {
		wantRefusal(t, rep.b.Receive("new", bytes.NewReader(broken.stream)), backend.ErrInvalid, "a "+broken.name+" full stream")
		if _, err := rep.b.Volume("new"); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("a %s full stream left a volume behind: %v", broken.name, err)
		}
	}
	rep.write(t, 0, Pattern(111, 4*chunkBytes))
	must(t, rep.a.Snapshot("v", "s2"), "Snapshot s2")
	delta := send(t, rep.a, "v", "s1", "s2")
	before := Content(t, rep.b, "r")
	wantRefusal(t, rep.b.Receive("r", bytes.NewReader(delta[:len(delta)-len(delta)/3])), backend.ErrInvalid, "a truncated delta")
	wantContent(t, rep.b, "r", before, "after a truncated delta")
	wantSnapshots(t, rep.b, "r", "s1")
	receive(t, rep.b, "r", delta)
	wantContent(t, rep.b, "r", rep.content, "the whole delta after a truncated one")
}

func testReceiveIntoFencedReplica(t *testing.T, newPool newPoolFunc) {
	rep := newReplica(t, newPool)
	must(t, rep.b.SetReadOnly("r", true), "fence the replica")
	rep.write(t, 2*chunkBytes, Pattern(120, chunkBytes))
	must(t, rep.a.Snapshot("v", "s2"), "Snapshot s2")
	receive(t, rep.b, "r", send(t, rep.a, "v", "s1", "s2"))
	wantContent(t, rep.b, "r", rep.content, "a fenced replica after a delta")
	if !volumeInfo(t, rep.b, "r").ReadOnly {
		t.Fatal("a receive lifted the fence")
	}
}

// testCloneStreamFailBack is the fail-back of ARCHITECTURE §4. Site A has v1
// with snapshots up to Sk, replicated to B. A is cut off: B clones its replica
// of Sk into v2 and writes; A, unaware, writes a diverged tail onto v1. When A
// returns, B ships v2 from the common snapshot (-i replica@Sk): A receives it
// under a new name as a clone of its own v1@Sk plus the delta, and v1 with its
// tail stays untouched.
func testCloneStreamFailBack(t *testing.T, newPool newPoolFunc) {
	a, b := newPool(t), newPool(t)
	create(t, a, "v1", volumeBytes, backend.Thin)
	atSk := make([]byte, volumeBytes)
	for i, snap := range []string{"S1", "Sk"} {
		data := Pattern(uint64(130+i), 4*chunkBytes)
		Write(t, a, "v1", int64(i*8*chunkBytes), data)
		copy(atSk[i*8*chunkBytes:], data)
		must(t, a.Snapshot("v1", snap), "Snapshot "+snap)
	}
	receive(t, b, "replica", send(t, a, "v1", "", "S1"))
	receive(t, b, "replica", send(t, a, "v1", "S1", "Sk"))

	must(t, b.Clone("replica", "Sk", "v2"), "B clones its replica of Sk")
	atT1 := bytes.Clone(atSk)
	const changed = 3 * chunkBytes
	bWrite := Pattern(140, changed)
	Write(t, b, "v2", 20*chunkBytes, bWrite)
	copy(atT1[20*chunkBytes:], bWrite)
	must(t, b.Snapshot("v2", "T1"), "Snapshot T1")

	tailed := bytes.Clone(atSk)
	tail := Pattern(141, chunkBytes)
	Write(t, a, "v1", 2*chunkBytes, tail)
	copy(tailed[2*chunkBytes:], tail)
	must(t, a.Snapshot("v1", "tail"), "A keeps its diverged tail")
	aSnapshots := snapshots(t, a, "v1")

	stream := send(t, b, "v2", "replica@Sk", "T1")
	if len(stream) < changed || len(stream) >= 3*changed+64<<10 {
		t.Fatalf("a clone stream of %d changed bytes is %d bytes: only the delta since Sk may ship", changed, len(stream))
	}
	wantRefusal(t, a.Receive("v1", bytes.NewReader(stream)), backend.ErrExists, "a clone stream onto an existing volume")
	receive(t, a, "v3", stream)
	wantContent(t, a, "v3", atT1, "A's new member")
	if info := volumeInfo(t, a, "v3"); info.Origin != "v1@Sk" {
		t.Fatalf("A's new member is %+v, want a clone of v1@Sk", info)
	}
	wantGUIDsMatch(t, snapshots(t, b, "v2"), snapshots(t, a, "v3"))
	wantContent(t, a, "v1", tailed, "A's stale member keeps its diverged tail")
	wantGUIDsMatch(t, aSnapshots, snapshots(t, a, "v1"))

	// Replication goes on from T1 as plain deltas.
	copy(atT1[25*chunkBytes:], Pattern(142, chunkBytes))
	Write(t, b, "v2", 25*chunkBytes, Pattern(142, chunkBytes))
	must(t, b.Snapshot("v2", "T2"), "Snapshot T2")
	receive(t, a, "v3", send(t, b, "v2", "T1", "T2"))
	wantContent(t, a, "v3", atT1, "A's new member after the next delta")

	// A pool that lacks the origin cannot take the clone stream.
	c := newPool(t)
	wantRefusal(t, c.Receive("v3", bytes.NewReader(stream)), backend.ErrNoBase, "a clone stream without its origin")
	if _, err := c.Volume("v3"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("a refused clone stream left a volume behind: %v", err)
	}
}

func testSendRefusals(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	create(t, pool, "other", volumeBytes, backend.Thin)
	for _, s := range []string{"a", "b"} {
		Write(t, pool, "v", 0, Pattern(150, chunkBytes))
		must(t, pool.Snapshot("v", s), "Snapshot "+s)
	}
	must(t, pool.Snapshot("other", "x"), "Snapshot other@x")
	for _, c := range []struct {
		volume, base, snapshot string
		kind                   error
	}{
		{"missing", "", "a", backend.ErrNotFound},
		{"v", "", "missing", backend.ErrNotFound},
		{"v", "missing", "b", backend.ErrNotFound},
		{"v", "b", "a", backend.ErrInvalid},
		{"v", "a", "a", backend.ErrInvalid},
		{"v", "other@x", "b", backend.ErrInvalid},
	} {
		stream, err := pool.Send(c.volume, c.base, c.snapshot)
		if err == nil {
			stream.Close()
		}
		wantRefusal(t, err, c.kind, "Send "+c.volume+" -i "+c.base+" @"+c.snapshot)
	}
}
