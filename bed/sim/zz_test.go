package sim_test

import (
	"bytes"
	"testing"
	"time"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/site"
)

func TestCrashResyncTmp(t *testing.T) {
	w, _ := bedsim.New(bedsim.Options{Seed: 3})
	a := w.Site("site-a")
	v, _ := a.Control.CreateVolume(site.CreateRequest{Name: "x", Shape: site.Shape{SizeBytes: 64 << 20, PlaceCount: 2, VolumeMode: site.Block}})
	w.Run(10 * time.Second)
	v, _ = a.Control.Volume(v.Ref)
	other := "node-1"
	if v.Primary == "node-1" {
		other = "node-2"
	}
	write(t, w, a, v.Ref, 0, 'a')
	w.CrashNode("site-a", other)
	write(t, w, a, v.Ref, 8192, 'b')
	w.Run(20 * time.Second)
	w.RestartNode("site-a", other)
	w.Run(60 * time.Second)
	st, _ := a.DRBD.Node(other).Status(v.Dataset())
	t.Logf("secondary %s: disk %s role %s peers %+v", other, st.Disk, st.Role, st.Peers)
	d, err := a.Node(other).Pool.Open(v.Dataset())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	d.ReadAt(buf, 8192)
	d.Close()
	if st.Disk == backend.UpToDate && !bytes.Equal(buf, bytes.Repeat([]byte{'b'}, 8192)) {
		t.Fatalf("the UpToDate secondary misses a write made while it was down: %q", buf[:8])
	}
}
