package drbd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// TestAFullPeerDiskIsDetachedUntilUpAttachesIt: a write the peer's backing
// device refuses is acknowledged from the Primary's own disk; DRBD detaches
// the peer's disk, the Primary's bitmap collects what it misses under one
// new generation, and no reconnect brings the disk back -- the agent's next
// Up does, and the resync brings the writes. ci/vmtest's
// TestFullPoolDetachesTheSecondaryUntilTheAgentAttachesIt saw real DRBD 8.4
// do the same.
func TestAFullPeerDiskIsDetachedUntilUpAttachesIt(t *testing.T) {
	site, s := newPrimaryPair(t, nil)
	full := site.pools["node-1"].volumes["r0"]
	full.full = true
	for i := range 20 {
		s.write(0, int64(i)*4096, fill(7, 4096), true)
	}
	if got := s.onVolume("node-1", 0, 4096); bytes.Equal(got, fill(7, 4096)) {
		t.Fatal("the full disk holds a write it refused")
	}
	site.Pass(time.Minute)
	if p := s.peer(0, "node-1"); p.OutOfSyncBytes != 20*4096 || p.Disk != backend.Diskless || p.Connection != backend.Connected {
		t.Fatalf("the Primary's view of the full peer: %+v, want Connected Diskless with the writes out of sync%s", p, dumpLog(site))
	}
	if rotations := strings.Count(dumpLog(site), "new current UUID"); rotations != 1 {
		t.Fatalf("%d new generations (want one for the full peer, however many writes it missed):%s", rotations, dumpLog(site))
	}
	wantRefusal(t, s.r[1].Up(s.config), backend.ErrRefused, "apply-al' terminated with exit code 10")
	if st, _ := s.r[1].Status("r0"); st.Disk != backend.Diskless {
		t.Fatalf("after an attach onto the full pool the disk is %s, want Diskless", st.Disk)
	}
	full.full = false
	site.Partition("node-0", "node-1")
	site.Pass(time.Second)
	site.Heal("node-0", "node-1")
	site.Pass(time.Minute)
	if st, err := s.r[1].Status("r0"); err != nil || st.Disk != backend.Diskless {
		t.Fatalf("after a reconnect the detached disk is %+v, %v: want Diskless until an attach", st, err)
	}
	s.rejoin(1)
	if got := s.onVolume("node-1", 0, 4096); !bytes.Equal(got, fill(7, 4096)) {
		t.Fatal("the resync did not bring the write to the peer")
	}
}

// TestAFullLocalDiskLeavesThePrimaryWritingThroughItsPeer: when the
// Primary's own disk refuses, DRBD detaches it and the write succeeds on the
// peer; the Diskless Primary reads through the peer, and once its disk is
// attached again it resyncs as SyncTarget while Primary. ci/vmtest's
// TestFullPoolUnderThePrimary saw real DRBD 8.4 do the same.
func TestAFullLocalDiskLeavesThePrimaryWritingThroughItsPeer(t *testing.T) {
	site, s := newPrimaryPair(t, nil)
	full := site.pools["node-0"].volumes["r0"]
	full.full = true
	s.write(0, 0, fill(9, 4096), true)
	st, err := s.r[0].Status("r0")
	s.must(err)
	if st.Disk != backend.Diskless || st.Role != backend.Primary {
		t.Fatalf("the Primary after its disk refused a write: %+v, want a Diskless Primary", st)
	}
	if got := s.onVolume("node-1", 0, 4096); !bytes.Equal(got, fill(9, 4096)) {
		t.Fatal("the write did not reach the peer")
	}
	dev, err := s.r[0].Open("r0")
	s.must(err)
	got := make([]byte, 4096)
	if _, err := dev.ReadAt(got, 0); err != nil || !bytes.Equal(got, fill(9, 4096)) {
		t.Fatalf("the Diskless Primary reads %v: not what it wrote", err)
	}
	s.must(dev.Close())
	full.full = false
	s.rejoin(0)
	if got := s.onVolume("node-0", 0, 4096); !bytes.Equal(got, fill(9, 4096)) {
		t.Fatal("the resync did not bring the write to the Primary's disk")
	}
}

// TestAWriteNoDiskTakesFails: a lone Primary whose disk refuses has nowhere
// to put the write: it fails as an I/O error, and the disk is detached.
func TestAWriteNoDiskTakesFails(t *testing.T) {
	site, s := newPrimaryPair(t, nil)
	site.Partition("node-0", "node-1")
	site.Pass(time.Minute)
	site.pools["node-0"].volumes["r0"].full = true
	dev, err := s.r[0].Open("r0")
	s.must(err)
	defer dev.Close()
	if _, err := dev.WriteAt(fill(9, 4096), 0); err == nil {
		t.Fatal("a write no disk took was acknowledged")
	}
	if st, _ := s.r[0].Status("r0"); st.Disk != backend.Diskless {
		t.Fatalf("the disk that refused is %s, want Diskless (detached)", st.Disk)
	}
}

// TestAFullPoolUnderThePrimaryWhosePeerIsStillSyncing: the Primary holds
// the only UpToDate copy while its peer is the SyncTarget of the initial
// sync, and its pool fills. The write fails, and so does every read and
// flush after (no UpToDate data is reachable); nothing starts a generation
// on the SyncTarget. Once the disk is attached again the sync resumes from
// it, and the failed write is nowhere. ci/vmtest's
// TestFullPoolUnderThePrimaryWhosePeerIsStillSyncing saw real DRBD 8.4 do
// the same.
func TestAFullPoolUnderThePrimaryWhosePeerIsStillSyncing(t *testing.T) {
	site := newSimSite(t, 2, func(o *Options) { o.ResyncBytesPerSecond = 4096 })
	s := newSimResource(t, site, "r0", 2)
	for i := range s.config.Nodes {
		s.must(s.r[i].CreateMetadata(s.config))
		s.must(s.r[i].Up(s.config))
	}
	s.must(s.r[0].Primary("r0", true))
	s.write(0, 64*4096, fill(3, 4096), true)
	site.Pass(time.Second)
	if p := s.peer(0, "node-1"); p.Disk != backend.Inconsistent {
		t.Fatalf("the peer is %s, want the SyncTarget of the initial sync", p.Disk)
	}
	full := site.pools["node-0"].volumes["r0"]
	full.full = true
	dev, err := s.r[0].Open("r0")
	s.must(err)
	if _, err := dev.WriteAt(fill(4, 4096), 8*4096); err == nil {
		t.Fatal("a write only a SyncTarget took was acknowledged")
	}
	if _, err := dev.ReadAt(make([]byte, 4096), 64*4096); err == nil {
		t.Fatal("a Primary that reaches no UpToDate data read")
	}
	if err := dev.Sync(); err == nil {
		t.Fatal("a Primary that reaches no UpToDate data flushed")
	}
	s.must(dev.Close())
	if strings.Contains(dumpLog(site), "new current UUID") {
		t.Fatalf("a generation started without an UpToDate disk:%s", dumpLog(site))
	}
	full.full = false
	s.must(s.r[0].Up(s.config))
	site.sched.runFor(time.Hour)
	if !s.allUpToDate() {
		t.Fatalf("the sync did not resume from the attached disk:%s", dumpLog(site))
	}
	if got := s.read(0, 64*4096, 4096); !bytes.Equal(got, fill(3, 4096)) {
		t.Fatal("the data written before the fill is gone")
	}
	for _, node := range []string{"node-0", "node-1"} {
		if got := s.onVolume(node, 8*4096, 4096); bytes.Equal(got, fill(4, 4096)) {
			t.Fatalf("%s holds the write that failed", node)
		}
	}
}
