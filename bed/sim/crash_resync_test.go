package sim_test

import (
	"bytes"
	"testing"
	"time"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/storage/backend"
)

// A Secondary that was down while the Primary took writes must not call
// itself UpToDate until it has resynced them: the agent promotes and snapshots
// on that word (chaos seed 10172).
func TestCrashedSecondaryIsUpToDateOnlyWithTheWritesItMissed(t *testing.T) {
	w, err := bedsim.New(bedsim.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	a := w.Site("site-a")
	v, other := placedPair(t, w, a)
	write(t, w, a, v.Ref, 0, 'a')
	w.CrashNode("site-a", other)
	write(t, w, a, v.Ref, 8192, 'b')
	w.Run(20 * time.Second)
	w.RestartNode("site-a", other)
	w.Run(60 * time.Second)
	st, err := a.DRBD.Node(other).Status(v.Dataset())
	if err != nil {
		t.Fatal(err)
	}
	if st.Disk != backend.UpToDate {
		t.Fatalf("the restarted secondary is %s after 60 s connected, want UpToDate", st.Disk)
	}
	t.Logf("secondary %s: disk %s role %s peers %+v", other, st.Disk, st.Role, st.Peers)
	d, err := a.Node(other).Pool.Open(v.Dataset())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	_, err = d.ReadAt(buf, 8192)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, bytes.Repeat([]byte{'b'}, 8192)) {
		t.Fatalf("the UpToDate secondary misses a write made while it was down: %q", buf[:8])
	}
}
