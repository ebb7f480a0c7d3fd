package reportstest

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/reports"
)

// fullVolumeBytes is the provisioned size of a sample volume: what a full
// copy ships.
const fullVolumeBytes = 8 << 30

// failoverResult tells the reference story of ARCHITECTURE.md §4 for one
// application: protect on site-a, cut site-a off, fail over to site-b, heal,
// demote and resync, relocate back. With broken set it replays the first
// seed's bug: Demote on site-a resolves the handle to the active end on
// site-b, and the resync then ships a full copy instead of the delta.
func failoverResult(a app, seed uint64, broken bool) reports.Result {
	b := newBuilder(a.name+"/failover", seed)
	b.deployAndProtect(a)
	b.phase("replicate to site-b", func() (bool, string) {
		b.steady(a, siteA, 3+b.rng.IntN(3))
		return true, ""
	})
	var cut time.Time
	b.phase("partition site-a", func() (bool, string) {
		b.writes(siteA, a.volumes, 6*time.Second+time.Duration(b.rng.IntN(14))*time.Second)
		cut = b.now
		b.begin(siteA, reports.EventPartition, "cut site-a", "site-a cut off from site-b and the hub, both directions")
		b.tail(a.volumes, 15*time.Second)
		return true, "site-a unreachable from site-b and the hub"
	})
	b.phase("failover to site-b", func() (bool, string) {
		b.failover(a, siteA, siteB, 1, cut)
		b.tail(a.volumes, 4*time.Second)
		return true, ""
	})
	b.phase("run on site-b", func() (bool, string) {
		for range 2 {
			b.writes(siteB, a.volumes, 20*time.Second)
			b.event(siteB, reports.EventAction, "replication to site-a waits: site-a unreachable")
		}
		return true, "site-a still cut off; its diverged tail grows"
	})
	b.phase("heal site-a", func() (bool, string) {
		b.end(siteA, reports.EventPartition, "cut site-a", "site-a reachable again")
		b.advance(3 * time.Second)
		return true, ""
	})
	resynced := true
	b.phase("resync site-a", func() (bool, string) {
		if broken {
			b.brokenResync(a)
			resynced = false
			return false, "Demote addressed the active end; the resync shipped a full copy"
		}
		b.resync(a)
		return true, ""
	})
	if !resynced {
		b.chains(a, []string{"Active", "Demoted"})
		return b.finish()
	}
	b.phase("relocate to site-a", func() (bool, string) {
		b.relocate(a, siteB, siteA, 2)
		return true, ""
	})
	b.phase("replicate to site-b", func() (bool, string) {
		b.steady(a, siteA, 2)
		return true, ""
	})
	b.chains(a, []string{"Tombstone", "Demoted", "Active"})
	return b.finish()
}

// tail lets the cut-off site-a keep acknowledging writes nobody replicates:
// without fencing, the diverged tail is the price of an unplanned fail-over.
func (b *builder) tail(volumes []string, d time.Duration) {
	end := b.now.Add(d)
	for batch := 0; b.now.Before(end) && batch < 1000; batch++ {
		for _, volume := range volumes {
			count := 20 + b.rng.IntN(200)
			b.event(siteA, reports.EventWrite, fmt.Sprintf("%s: %d writes acknowledged while cut off (diverged tail)", volume, count))
		}
		b.advance(2 * time.Second)
	}
}

// failover promotes the replicas on to: an unplanned fail-over (failure:
// its cut) loses what from wrote after its last shipped snapshot, a planned
// one (failure: zero, the decision counts) loses nothing after a final sync.
// The RPO runs from the failure back to the oldest lost write, the loss age
// from it to the promotion, the RTO from the failure to serving.
func (b *builder) failover(a app, from, to string, generation int, failure time.Time) {
	planned := failure.IsZero()
	verb := "failover"
	if planned {
		verb, failure = "relocate", b.now
	}
	span := fmt.Sprintf("%s-%d", verb, generation)
	b.begin(hub, reports.EventAction, span, fmt.Sprintf("%s %s to %s", verb, a.name, to))
	b.advance(3 * time.Second)
	first := len(b.result.Failovers)
	for _, volume := range a.volumes {
		lost := b.writesSinceSync[volume]
		var rpo, age time.Duration
		if lost > 0 {
			rpo, age = max(0, failure.Sub(b.firstUnsynced[volume])), b.now.Sub(b.firstUnsynced[volume])
		}
		b.event(to, reports.EventRole, fmt.Sprintf("%s: promote: cloned S%d into %s (generation %d), active end",
			volume, b.nextSnapshot[volume], memberRef(to, volume, generation), generation))
		b.result.Failovers = append(b.result.Failovers, reports.Failover{App: a.name, Volume: volume, From: from, To: to,
			Planned: planned, At: b.now, LostWrites: lost, RPO: rpo, LossAge: age})
		b.forgetUnsynced(volume)
		b.advance(500 * time.Millisecond)
	}
	b.advance(6 * time.Second)
	b.end(hub, reports.EventAction, span, fmt.Sprintf("%s serving on %s", a.name, to))
	for i := first; i < len(b.result.Failovers); i++ {
		b.result.Failovers[i].RTO = b.now.Sub(failure)
	}
}

// resync demotes site-a's stale members, ships the fail-back delta from the
// active end on site-b, and reaps the stale members.
func (b *builder) resync(a app) {
	for _, volume := range a.volumes {
		b.event(siteA, reports.EventRole, fmt.Sprintf("%s: demote %s (last local member): fenced read-only, diverged tail kept as snapshot tail-S%d",
			volume, memberRef(siteA, volume, 0), b.nextSnapshot[volume]))
	}
	b.advance(2 * time.Second)
	b.begin(siteB, reports.EventAction, "resync", "resync: re-aim replication at site-a from the common snapshot")
	b.sync(siteB, siteA, a.volumes, true)
	b.end(siteB, reports.EventAction, "resync", "resync: site-a in sync")
	for _, volume := range a.volumes {
		b.event(siteA, reports.EventRole, fmt.Sprintf("%s: reap %s: tombstone (record, snapshots and tail kept)",
			volume, memberRef(siteA, volume, 0)))
	}
	b.advance(2 * time.Second)
}

// brokenResync is the first seed's bug: Demote on site-a resolves the handle
// to the chain's active end on site-b.
func (b *builder) brokenResync(a app) {
	for _, volume := range a.volumes {
		b.event(siteA, reports.EventRole, fmt.Sprintf("%s: demote resolved the handle to %s on site-b (the active end)",
			volume, memberRef(siteB, volume, 1)))
		b.event(siteB, reports.EventRole, fmt.Sprintf("%s: demoted %s: read-only", volume, memberRef(siteB, volume, 1)))
	}
	b.advance(time.Second)
	volume := a.volumes[0]
	b.violate("chain: resolution returns the active end",
		fmt.Sprintf("Demote on site-a acted on %s (site-b, the active end) instead of site-a's last local member %s; the chain has no writable active end",
			memberRef(siteB, volume, 1), memberRef(siteA, volume, 0)), 8)
	b.begin(siteB, reports.EventAction, "resync", "resync: re-aim replication at site-a")
	changed := b.written[volume]
	b.recordSync(volume, siteB, siteA, changed, fullVolumeBytes, true)
	b.end(siteB, reports.EventAction, "resync", "resync: site-a received a full copy")
	b.violate("volume: fail-back ships only the delta",
		fmt.Sprintf("the resync shipped %d MiB to site-a for %d MiB changed since the common snapshot: a full copy",
			uint64(fullVolumeBytes)>>20, changed>>20), 6)
}

// relocate moves a to the other site without loss: final sync, demote the
// source, promote the target.
func (b *builder) relocate(a app, from, to string, generation int) {
	b.sync(from, to, a.volumes, false)
	for _, volume := range a.volumes {
		b.event(from, reports.EventRole, fmt.Sprintf("%s: demote %s: read-only", volume, memberRef(from, volume, generation-1)))
	}
	b.advance(time.Second)
	b.failover(a, from, to, generation, time.Time{})
}

// chains records each volume's chain at the end of the run: one member per
// state given, alternating sites from site-a.
func (b *builder) chains(a app, states []string) {
	for _, volume := range a.volumes {
		chain := reports.Chain{Handle: memberRef(siteA, volume, 0)}
		site := siteA
		for generation, state := range states {
			member := reports.Member{Site: site, Ref: memberRef(site, volume, generation),
				Generation: uint32(generation), State: state}
			if state != "Tombstone" {
				member.LastSync = b.lastSync[volume]
			}
			chain.Members = append(chain.Members, member)
			site = other(site)
		}
		b.result.Chains = append(b.result.Chains, chain)
	}
}
