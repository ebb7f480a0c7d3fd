package drbd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// Metadata lives on the volume: a volume destroyed and created again under
// the same name has none, whatever the Cluster remembers.
func TestRecreatedVolumeHasNoMetadata(t *testing.T) {
	site := newSimSite(t, 1, nil)
	res := newSimResource(t, site, "r0", 1)
	res.must(res.r[0].CreateMetadata(res.config))
	delete(site.pools["node-0"].volumes, "r0")
	res.must(site.CreateVolume("node-0", "r0", testVolumeBytes))
	has, err := res.r[0].HasMetadata(res.config)
	if err != nil || has {
		t.Fatalf("HasMetadata on a recreated volume = %t, %v", has, err)
	}
	wantRefusal(t, res.r[0].Up(res.config), backend.ErrNotFound, "No valid meta-data signature found")
	delete(site.pools["node-0"].volumes, "r0")
	_, err = res.r[0].HasMetadata(res.config)
	wantRefusal(t, err, backend.ErrNotFound, "open(r0) failed")
}

// Received clones carry the metadata of the volume they were sent from: the
// replicas of one snapshot adopt it, share its generation, and connect in
// sync without create-md or a byte of resync.
func TestClonesCarryMetadata(t *testing.T) {
	siteA := newSimSite(t, 2, nil)
	a := newSimResource(t, siteA, "r0", 2)
	a.start()
	a.must(a.r[0].Primary("r0", false))
	a.write(0, 0, fill(5, 10000), true)
	a.must(a.r[0].Secondary("r0"))
	a.must(a.r[0].Down("r0"))
	a.must(a.r[1].Down("r0"))

	siteB := newSimSite(t, 2, func(o *Options) { o.Site = "site-b" })
	b := newSimResource(t, siteB, "r0", 2)
	for _, node := range siteB.names {
		siteA.pools["node-0"].volumes["r0"].copyTo(siteB.pools[node].volumes["r0"])
	}
	for i := range b.r {
		has, err := b.r[i].HasMetadata(b.config)
		if err != nil || !has {
			t.Fatalf("HasMetadata on a received clone = %t, %v", has, err)
		}
		wantRefusal(t, b.r[i].CreateMetadata(b.config), backend.ErrRefused, "already in place")
		b.must(b.r[i].Up(b.config))
	}
	if !siteB.Await(b.allUpToDate) {
		t.Fatalf("clones did not connect in sync:%s", dumpLog(siteB))
	}
	if moved := siteB.cluster.Stats().ResyncedBytes; moved != 0 {
		t.Errorf("clones of one snapshot resynced %d bytes", moved)
	}
	b.must(b.r[1].Primary("r0", false))
	if got := b.read(1, 0, 10000); !bytes.Equal(got, fill(5, 10000)) {
		t.Error("the clone does not read the snapshot's data")
	}
}

func TestUpRefusesWhatAnotherResourceHolds(t *testing.T) {
	site := newSimSite(t, 2, nil)
	one := newSimResource(t, site, "one", 2)
	one.start()
	two := newSimResource(t, site, "two", 2)
	two.must(two.r[0].CreateMetadata(two.config))

	sameMinor := two.config
	sameMinor.Port = 7001
	wantRefusal(t, two.r[0].Up(sameMinor), backend.ErrExists, "(161) Minor or volume exists already")
	samePort := two.config
	samePort.Minor = 1001
	wantRefusal(t, two.r[0].Up(samePort), backend.ErrExists, "(102) Local address(port) already in use.")
	sameVolume := samePort
	sameVolume.Port = 7001
	sameVolume.Nodes = append([]backend.ResourceNode(nil), two.config.Nodes...)
	sameVolume.Nodes[0].Volume = "one"
	wantRefusal(t, two.r[0].Up(sameVolume), backend.ErrBusy, "Lower device is already claimed")
	wantRefusal(t, two.r[0].CreateMetadata(sameVolume), backend.ErrRefused, "Device '1000' is configured!")
	good := samePort
	good.Port = 7001
	two.must(two.r[0].Up(good))
}

func TestUpRefusesBadConfigs(t *testing.T) {
	site := newSimSite(t, 2, nil)
	res := newSimResource(t, site, "r0", 2)
	tests := map[string]func(c *backend.ResourceConfig){
		"no name":          func(c *backend.ResourceConfig) { c.Name = "" },
		"node-id too high": func(c *backend.ResourceConfig) { c.Nodes[1].NodeID = 16 },
		"node-id twice":    func(c *backend.ResourceConfig) { c.Nodes[1].NodeID = 0 },
		"node twice":       func(c *backend.ResourceConfig) { c.Nodes[1].Node = c.Nodes[0].Node },
		"not this host":    func(c *backend.ResourceConfig) { c.Nodes = c.Nodes[1:] },
	}
	for name, breakIt := range tests {
		config := res.config
		config.Nodes = append([]backend.ResourceNode(nil), res.config.Nodes...)
		breakIt(&config)
		if err := res.r[0].Up(config); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%s: Up = %v, want ErrInvalid", name, err)
		}
	}
}
