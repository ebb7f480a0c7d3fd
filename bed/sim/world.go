package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	simworld "github.com/baton-dr/baton/sim"
	"github.com/baton-dr/baton/sim/network"
	"github.com/baton-dr/baton/storage/chain"
)

// Options shape a world.
type Options struct {
	Seed         uint64
	Scenario     string // named in replay commands
	NodesPerSite int    // default 2
	// PoolBytes is each node's pool capacity; default 64 GiB.
	PoolBytes uint64
	// AgentPeriod and ControllerPeriod are how often node agents reconcile
	// and control planes tick; default 2 s and 1 s.
	AgentPeriod      time.Duration
	ControllerPeriod time.Duration
	// ReplicationInterval of new pairings; default 1 min.
	ReplicationInterval time.Duration
	// SiteLink is the link between the sites; default 20 ms, 100 MB/s.
	SiteLink network.LinkOptions
	// WithoutDRBD runs one replica per volume on the pool's own device, as the
	// btrfs mode does on hosts without DRBD.
	WithoutDRBD bool
	// Records is where each site keeps its records: in memory, or in CRDs as
	// the site operator does.
	Records Records
	// Undeployed sites have no storage cluster yet: no StorageNode exists
	// until the deployment flow creates it (from the hub's request), and the
	// nodes' reports are refused until then. It needs CRD records.
	Undeployed bool
	// Claims: the applications hold their volumes through claims on the
	// sites' API servers (bed.Needs.Claims, claims.go); the drills run the
	// site operator's TestFailover. It needs CRD records.
	Claims bool
	World  []simworld.Option
}

func (o Options) withDefaults() Options {
	if o.NodesPerSite == 0 {
		o.NodesPerSite = 2
	}
	if o.PoolBytes == 0 {
		o.PoolBytes = 64 << 30
	}
	if o.AgentPeriod == 0 {
		o.AgentPeriod = 2 * time.Second
	}
	if o.ControllerPeriod == 0 {
		o.ControllerPeriod = time.Second
	}
	if o.ReplicationInterval == 0 {
		o.ReplicationInterval = time.Minute
	}
	if o.SiteLink == (network.LinkOptions{}) {
		o.SiteLink = network.LinkOptions{Latency: 20 * time.Millisecond, BandwidthBytesPerSecond: 100 << 20}
	}
	return o
}

// World is the simulation bed's world: the kernel, the network, two sites.
type World struct {
	options Options
	Sim     *simworld.World
	Net     *network.Network
	sites   []*Site
	// hub is the OCM hub; nil with memory records.
	hub     *Hub
	checker *chain.Checker
	// variation draws what a seed varies besides faults (variation.go).
	variation *rand.Rand
	// ramen is Ramen's hub and the sites' csi-addons controllers.
	ramen *ramen.Driver

	// apps are the applications (bed/apps over platform{w}); they answer
	// the Bed's Deploy, Protect, Failover, Relocate, Verify, Where and Pod.
	apps *apps.Apps
	apps.Moves
	writes map[string]int // acknowledged operations per site since the last look
	// The timeline and the violations (Timeline, Violations).
	bed.Journal
	syncs     bed.SyncLog
	shippedAt map[chain.Ref]time.Time // when the last recorded shipment's snapshot was taken
	// apiFaults are the endpoints whose APIs fail calls (FailAPI).
	apiFaults map[string]*apiFault
	// observing counts the bed's own reads in progress (unfaulted).
	observing int
	// calls counts the simulated time of synchronous calls (calls.go).
	calls callClock
	// unplanned are the unplanned moves whose old primary's tail is to be
	// read back at the fail-back; keptTails what those reads found (kept.go).
	unplanned []unplannedMove
	keptTails []reports.KeptTail
}

// SiteNames are the bed's two sites.
var SiteNames = []string{"site-a", "site-b"}

// New assembles a world and starts its loops.
func New(options Options) (*World, error) {
	if options.Undeployed && options.Records != CRDRecords {
		return nil, fmt.Errorf("bed/sim: undeployed sites need CRD records: the deployment flow runs on the sites' API servers")
	}
	if options.Claims && options.Records != CRDRecords {
		return nil, fmt.Errorf("bed/sim: claims need CRD records: they live on the sites' API servers")
	}
	worldOptions := options.World
	if options.Scenario != "" {
		worldOptions = append([]simworld.Option{simworld.WithScenario(options.Scenario)}, worldOptions...)
	}
	kernel := simworld.NewWorld(options.Seed, worldOptions...)
	variation := kernel.Rand("bed/variation")
	options = vary(options, variation).withDefaults()
	kernel.Logf("variation", "replication interval %s, sites' link %s one way at %d B/s",
		options.ReplicationInterval, options.SiteLink.Latency, options.SiteLink.BandwidthBytesPerSecond)
	w := &World{options: options, Sim: kernel, variation: variation, checker: chain.NewChecker(),
		writes:    map[string]int{},
		shippedAt: map[chain.Ref]time.Time{}, apiFaults: map[string]*apiFault{}}
	w.Net = network.New(w.Sim, network.LinkOptions{Latency: 200 * time.Microsecond})
	w.ramen = &ramen.Driver{Sites: SiteNames, Reaches: w.hubReaches, Until: w.RunUntil, Limit: actionLimit,
		Event: w.event, Violate: w.violate}
	w.apps = apps.New(apps.Config{Platform: platform{w}, Ramen: w.ramen, Sites: SiteNames, Limit: actionLimit})
	w.Moves = w.apps
	w.Net.SetLinkBoth(SiteNames[0], SiteNames[1], options.SiteLink)
	for i, name := range SiteNames {
		s, err := newSite(w, name, clusterID(i))
		if err != nil {
			return nil, err
		}
		w.sites = append(w.sites, s)
	}
	for _, s := range w.sites {
		for _, peer := range w.sites {
			if peer != s {
				s.peers[peer.Cluster] = api{from: s.Operator(), target: peer}
			}
		}
		s.newCSI()
		s.start()
	}
	if options.Records == CRDRecords {
		hub, err := newHub(w)
		if err != nil {
			return nil, err
		}
		w.hub = hub
		hub.start()
	}
	w.failAPIServers()
	w.everyAbout(stepPeriod, "applications step", w.step)
	w.everyPhased(vrPeriod, "csi-addons controllers", w.reconcileVRs)
	w.every(10*time.Second, "observe", w.observeTick)
	return w, nil
}

// clusterID is a site's storage cluster UUID: fixed, so runs are comparable.
func clusterID(i int) chain.ClusterID {
	return chain.ClusterID(fmt.Sprintf("%08x-0000-4000-8000-%012x", 0xa0a0a0a0+uint32(i)*0x01010101, i+1))
}

// Site returns a site by name ("site-a") or cluster ID.
func (w *World) Site(name string) *Site {
	for _, s := range w.sites {
		if s.Name == name || string(s.Cluster) == name {
			return s
		}
	}
	panic(fmt.Sprintf("bed/sim: no site %q", name))
}

// Run lets simulated time pass.
func (w *World) Run(d time.Duration) error {
	w.Sim.RunFor(d)
	return nil
}

// RunUntil runs until cond holds or limit passes; it reports whether cond held.
func (w *World) RunUntil(cond func() bool, limit time.Duration) bool {
	return w.Sim.RunUntil(cond, limit)
}

// every schedules f at each period from now on, for as long as the world runs.
func (w *World) every(period time.Duration, label string, f func()) {
	var tick func()
	tick = func() {
		f()
		w.Sim.After(period, label, tick)
	}
	w.Sim.After(period, label, tick)
}
