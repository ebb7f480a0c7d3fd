package pooltest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

var snapshotTests = []test{
	{"SnapshotsListOldestFirstWithGUIDs", testSnapshotsListOldestFirstWithGUIDs},
	{"SnapshotFreezesSyncedContent", testSnapshotFreezesSyncedContent},
	{"ClonesAreIndependent", testClonesAreIndependent},
	{"DestroyRefusedWithDependentClones", testDestroyRefusedWithDependentClones},
	{"RollbackToLatestOnly", testRollbackToLatestOnly},
	{"AllSnapshotsListWhatSnapshotsLists", testAllSnapshotsListWhatSnapshotsLists},
}

func testSnapshotsListOldestFirstWithGUIDs(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	for i, name := range []string{"zz", "aa", "mm"} {
		Write(t, pool, "v", int64(i)*chunkBytes, Pattern(uint64(20+i), chunkBytes))
		must(t, pool.Snapshot("v", name), "Snapshot "+name)
	}
	list := wantSnapshots(t, pool, "v", "zz", "aa", "mm")
	seen := map[string]bool{}
	for i, s := range list {
		if s.Volume != "v" || s.GUID == "" || seen[s.GUID] {
			t.Fatalf("snapshot %d = %+v: want volume v and a GUID of its own", i, s)
		}
		seen[s.GUID] = true
		if i > 0 && s.CreateTxg <= list[i-1].CreateTxg {
			t.Fatalf("CreateTxg does not grow: %+v after %+v", s, list[i-1])
		}
	}
	wantRefusal(t, pool.Snapshot("v", "aa"), backend.ErrExists, "a repeated snapshot")
	wantRefusal(t, pool.Snapshot("missing", "s"), backend.ErrNotFound, "a snapshot of a missing volume")
	wantRefusal(t, pool.Snapshot("v", "a@b"), backend.ErrInvalid, "a snapshot with a bad name")
	again := wantSnapshots(t, pool, "v", "zz", "aa", "mm")
	if again[1].GUID != list[1].GUID {
		t.Fatal("a refused snapshot changed the existing one's GUID")
	}
	must(t, pool.DestroySnapshot("v", "aa"), "DestroySnapshot")
	wantRefusal(t, pool.DestroySnapshot("v", "aa"), backend.ErrNotFound, "a repeated DestroySnapshot")
	wantRefusal(t, pool.DestroySnapshot("missing", "aa"), backend.ErrNotFound, "DestroySnapshot on a missing volume")
	after := wantSnapshots(t, pool, "v", "zz", "mm")
	if after[0].GUID != list[0].GUID || after[1].GUID != list[2].GUID {
		t.Fatal("destroying a snapshot changed the GUIDs of the others")
	}
}

func testSnapshotFreezesSyncedContent(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	first := Pattern(30, 4*chunkBytes)
	Write(t, pool, "v", chunkBytes, first)
	must(t, pool.Snapshot("v", "s1"), "Snapshot")
	second := Pattern(31, chunkBytes)
	Write(t, pool, "v", 2*chunkBytes, second)
	must(t, pool.Clone("v", "s1", "view"), "Clone")
	frozen := make([]byte, volumeBytes)
	copy(frozen[chunkBytes:], first)
	wantContent(t, pool, "view", frozen, "a clone of the snapshot reads the content at the snapshot")
	live := bytes.Clone(frozen)
	copy(live[2*chunkBytes:], second)
	wantContent(t, pool, "v", live, "the volume keeps the write after the snapshot")
}

func testClonesAreIndependent(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	base := Pattern(40, volumeBytes/4)
	Write(t, pool, "v", 0, base)
	must(t, pool.Snapshot("v", "s"), "Snapshot")
	must(t, pool.Clone("v", "s", "c"), "Clone")
	info := volumeInfo(t, pool, "c")
	if info.Origin != "v@s" || info.SizeBytes != volumeBytes || info.ReadOnly {
		t.Fatalf("the clone is %+v, want origin v@s and the origin's size", info)
	}
	atSnapshot := make([]byte, volumeBytes)
	copy(atSnapshot, base)
	wantContent(t, pool, "c", atSnapshot, "a new clone")

	cloneWrite := Pattern(41, 2*chunkBytes)
	Write(t, pool, "c", 3*chunkBytes, cloneWrite)
	originWrite := Pattern(42, chunkBytes)
	Write(t, pool, "v", 4*chunkBytes, originWrite)

	wantClone := bytes.Clone(atSnapshot)
	copy(wantClone[3*chunkBytes:], cloneWrite)
	wantOrigin := bytes.Clone(atSnapshot)
	copy(wantOrigin[4*chunkBytes:], originWrite)
	wantContent(t, pool, "c", wantClone, "a clone after writes to it and to its origin")
	wantContent(t, pool, "v", wantOrigin, "the origin after writes to it and to its clone")
	must(t, pool.Clone("v", "s", "c2"), "a second clone")
	wantContent(t, pool, "c2", atSnapshot, "the snapshot after writes to its volume and its clone")

	wantRefusal(t, pool.Clone("v", "s", "c"), backend.ErrExists, "a clone onto an existing volume")
	wantRefusal(t, pool.Clone("v", "missing", "c3"), backend.ErrNotFound, "a clone of a missing snapshot")
	wantRefusal(t, pool.Clone("missing", "s", "c3"), backend.ErrNotFound, "a clone of a missing volume")
	wantContent(t, pool, "c", wantClone, "after refused clones")
}

func testDestroyRefusedWithDependentClones(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	data := Pattern(50, 2*chunkBytes)
	Write(t, pool, "v", 0, data)
	must(t, pool.Snapshot("v", "s"), "Snapshot")
	must(t, pool.Clone("v", "s", "c"), "Clone")
	wantRefusal(t, pool.DestroyVolume("v"), backend.ErrBusy, "destroy of a volume with a cloned snapshot")
	wantRefusal(t, pool.DestroySnapshot("v", "s"), backend.ErrBusy, "destroy of a cloned snapshot")
	wantSnapshots(t, pool, "v", "s")
	if got := Read(t, pool, "c", 0, len(data)); !bytes.Equal(got, data) {
		t.Fatal("refused destroys changed the clone")
	}
	if got := Read(t, pool, "v", 0, len(data)); !bytes.Equal(got, data) {
		t.Fatal("refused destroys changed the origin")
	}
	must(t, pool.DestroyVolume("c"), "destroy the clone")
	must(t, pool.DestroySnapshot("v", "s"), "destroy the snapshot once no clone depends on it")
	must(t, pool.DestroyVolume("v"), "destroy the origin")
}

func testRollbackToLatestOnly(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	atA := Pattern(60, 2*chunkBytes)
	Write(t, pool, "v", 0, atA)
	must(t, pool.Snapshot("v", "a"), "Snapshot a")
	Write(t, pool, "v", chunkBytes, Pattern(61, 3*chunkBytes))
	must(t, pool.Rollback("v", "a"), "Rollback to the latest snapshot")
	wantA := make([]byte, volumeBytes)
	copy(wantA, atA)
	wantContent(t, pool, "v", wantA, "after the rollback")
	must(t, pool.Rollback("v", "a"), "a repeated rollback")

	later := Pattern(62, chunkBytes)
	Write(t, pool, "v", 5*chunkBytes, later)
	must(t, pool.Snapshot("v", "b"), "Snapshot b")
	tail := Pattern(63, chunkBytes)
	Write(t, pool, "v", 6*chunkBytes, tail)
	wantRefusal(t, pool.Rollback("v", "a"), backend.ErrBusy, "a rollback past a later snapshot")
	wantSnapshots(t, pool, "v", "a", "b")
	wantNow := bytes.Clone(wantA)
	copy(wantNow[5*chunkBytes:], later)
	copy(wantNow[6*chunkBytes:], tail)
	wantContent(t, pool, "v", wantNow, "after a refused rollback")
	wantRefusal(t, pool.Rollback("v", "missing"), backend.ErrNotFound, "a rollback to a missing snapshot")
	wantRefusal(t, pool.Rollback("missing", "a"), backend.ErrNotFound, "a rollback of a missing volume")
}

// testAllSnapshotsListWhatSnapshotsLists: a pool that lists every volume's
// snapshots at once (backend.SnapshotLister) lists for each volume what
// Snapshots lists for it, clones and volumes without snapshots included.
func testAllSnapshotsListWhatSnapshotsLists(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	lister, ok := pool.(backend.SnapshotLister)
	if !ok {
		t.Skip("the pool lists snapshots one volume at a time only")
	}
	for _, v := range []string{"a", "b", "empty"} {
		create(t, pool, v, volumeBytes, backend.Thin)
	}
	Write(t, pool, "a", 0, Pattern(60, chunkBytes))
	must(t, pool.Snapshot("a", "s1"), "Snapshot a@s1")
	Write(t, pool, "a", chunkBytes, Pattern(61, chunkBytes))
	must(t, pool.Snapshot("a", "s2"), "Snapshot a@s2")
	must(t, pool.Snapshot("b", "s1"), "Snapshot b@s1")
	must(t, pool.Clone("a", "s1", "clone"), "Clone a@s1")
	must(t, pool.Snapshot("clone", "t1"), "Snapshot clone@t1")
	all, err := lister.AllSnapshots()
	must(t, err, "AllSnapshots")
	for _, v := range []string{"a", "b", "empty", "clone"} {
		if got, want := fmt.Sprint(all[v]), fmt.Sprint(snapshots(t, pool, v)); got != want {
			t.Errorf("AllSnapshots lists %s's snapshots as %s, Snapshots as %s", v, got, want)
		}
	}
	if len(all) > 4 {
		t.Errorf("AllSnapshots lists %d volumes, want at most the 4 there are: %v", len(all), all)
	}
}
