package drbd

import (
	"bytes"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// TestAPeerWhoseDiskIsFullGetsTheWriteByResync: a write the peer's backing
// device refuses is acknowledged from the Primary's own disk, recorded as out
// of sync toward the peer, and reaches it by resync once its pool has room.
func TestAPeerWhoseDiskIsFullGetsTheWriteByResync(t *testing.T) {
	site := newSimSite(t, 2, nil)
	s := newSimResource(t, site, "r0", 2)
	s.start()
	s.must(s.r[0].Primary("r0", false))
	full := site.pools["node-1"].volumes["r0"]
	full.full = true
	s.write(0, 0, fill(7, 4096), true)
	if got := s.onVolume("node-1", 0, 4096); bytes.Equal(got, fill(7, 4096)) {
		t.Fatal("the full disk holds a write it refused")
	}
	site.Pass(time.Minute)
	if p := s.peer(0, "node-1"); p.OutOfSyncBytes == 0 && p.Connection == backend.Connected {
		t.Fatalf("the Primary forgot what the full peer missed: %+v%s", p, dumpLog(site))
	}
	full.full = false
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
