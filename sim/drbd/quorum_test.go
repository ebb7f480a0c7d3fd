package drbd

import (
	"bytes"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// A Primary cut off from the majority fails writes (on-no-quorum io-error)
// and reports it; the majority promotes without force and the old Primary
// rejoins as SyncTarget once demoted.
func TestQuorumLossRefusesWrites(t *testing.T) {
	site := newSimSite(t, 3, func(o *Options) { o.Quorum = true })
	res := newSimResource(t, site, "r0", 3)
	res.start()
	res.must(res.r[0].Primary("r0", false))
	res.write(0, 0, fill(1, 4096), true)
	dev, err := res.r[0].Open("r0")
	res.must(err)

	site.Partition("node-0", "node-1")
	if !res.status(0).Quorum {
		t.Fatal("node-0 lost quorum while it still sees node-2 (2 of 3)")
	}
	if _, err := dev.WriteAt(fill(2, 4096), 4096); err != nil {
		t.Fatalf("write with 2 of 3: %v", err)
	}
	site.Partition("node-0", "node-2")
	if res.status(0).Quorum {
		t.Error("node-0 alone reports quorum")
	}
	if !res.status(1).Quorum || !res.status(2).Quorum {
		t.Error("the majority reports no quorum")
	}
	_, err = dev.WriteAt(fill(3, 4096), 8192)
	wantRefusal(t, err, backend.ErrRefused, "no quorum")

	res.must(res.r[1].Primary("r0", false)) // quorum stands in for fencing: no force
	res.write(1, 8192, fill(4, 4096), true)
	res.must(dev.Close())
	res.must(res.r[0].Secondary("r0"))
	wantRefusal(t, res.r[0].Primary("r0", true), backend.ErrRefused, "State change failed: (-25) No quorum")

	site.Heal("node-0", "node-1")
	site.Heal("node-0", "node-2")
	if !site.Await(res.allUpToDate) {
		t.Fatalf("no convergence after heal:%s", dumpLog(site))
	}
	want := append(append(fill(1, 4096), fill(2, 4096)...), fill(4, 4096)...)
	if got := res.onVolume("node-0", 0, 3*4096); !bytes.Equal(got, want) {
		t.Error("node-0 did not get the majority's writes, or kept the refused one")
	}
}

func TestTwoNodeQuorumIsLostOnBothSides(t *testing.T) {
	site, res := newPrimaryPair(t, func(o *Options) { o.Quorum = true })
	site.Partition("node-0", "node-1")
	if res.status(0).Quorum || res.status(1).Quorum {
		t.Error("one of two nodes has a majority")
	}
	wantRefusal(t, res.r[1].Primary("r0", true), backend.ErrRefused, "No quorum")
}

func TestQuorumOffAlwaysReportsQuorum(t *testing.T) {
	site := newSimSite(t, 2, nil)
	res := newSimResource(t, site, "r0", 2)
	res.start()
	site.Partition("node-0", "node-1")
	if !res.status(0).Quorum {
		t.Error("without quorum configured a node reports no quorum")
	}
}

// Every block of I/O observes its resource, so observing a steady, Connected
// resource with quorum allocates nothing: the peers are listed once, when the
// replica comes up, and the votes are counted, not collected.
func TestObservingASteadyResourceAllocatesNothing(t *testing.T) {
	site := newSimSite(t, 3, func(o *Options) { o.Quorum = true })
	res := newSimResource(t, site, "r0", 3)
	res.start()
	res.must(res.r[0].Primary("r0", false))
	if !res.status(0).Quorum {
		t.Fatal("node-0 has no quorum with all 3 nodes Connected")
	}
	if allocs := testing.AllocsPerRun(100, func() { site.cluster.observe("r0") }); allocs != 0 {
		t.Errorf("observe allocates %.1f times, want 0", allocs)
	}
}
