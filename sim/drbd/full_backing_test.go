package drbd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// TestAPeerWhoseDiskIsFullGetsTheWriteByResync: a write the peer's backing
// device refuses is acknowledged from the Primary's own disk; the peer is
// Outdated and takes no more writes on this connection, the Primary's bitmap
// collects them under one new generation, and the next handshake once the
// pool has room resyncs them.
func TestAPeerWhoseDiskIsFullGetsTheWriteByResync(t *testing.T) {
	site := newSimSite(t, 2, nil)
	s := newSimResource(t, site, "r0", 2)
	s.start()
	s.must(s.r[0].Primary("r0", false))
	full := site.pools["node-1"].volumes["r0"]
	full.full = true
	for i := range 20 {
		s.write(0, int64(i)*4096, fill(7, 4096), true)
	}
	if got := s.onVolume("node-1", 0, 4096); bytes.Equal(got, fill(7, 4096)) {
		t.Fatal("the full disk holds a write it refused")
	}
	site.Pass(time.Minute)
	if p := s.peer(0, "node-1"); p.OutOfSyncBytes != 20*4096 || p.Disk != backend.Outdated {
		t.Fatalf("the Primary's view of the full peer: %+v%s", p, dumpLog(site))
	}
	if rotations := strings.Count(dumpLog(site), "new current UUID"); rotations != 1 {
		t.Fatalf("%d new generations (want one for the full peer, however many writes it missed):%s", rotations, dumpLog(site))
	}
	full.full = false
	site.Partition("node-0", "node-1")
	site.Pass(time.Second)
	site.Heal("node-0", "node-1")
	if !site.Await(s.allUpToDate) {
		t.Fatalf("no resync once the peer had room:%s", dumpLog(site))
	}
	if got := s.onVolume("node-1", 0, 4096); !bytes.Equal(got, fill(7, 4096)) {
		t.Fatal("the resync did not bring the write to the peer")
	}
}

// TestAWriteTheLocalDiskRefusesFailsWhole: when the Primary's own disk
// refuses, the write fails as an I/O error and reaches no peer.
func TestAWriteTheLocalDiskRefusesFailsWhole(t *testing.T) {
	site := newSimSite(t, 2, nil)
	s := newSimResource(t, site, "r0", 2)
	s.start()
	s.must(s.r[0].Primary("r0", false))
	site.pools["node-0"].volumes["r0"].full = true
	dev, err := s.r[0].Open("r0")
	s.must(err)
	defer dev.Close()
	if _, err := dev.WriteAt(fill(9, 4096), 0); err == nil {
		t.Fatal("a write the local disk refused was acknowledged")
	}
	if got := s.onVolume("node-1", 0, 4096); bytes.Equal(got, fill(9, 4096)) {
		t.Fatal("a failed write reached the peer")
	}
}
