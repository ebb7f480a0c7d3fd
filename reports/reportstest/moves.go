package reportstest

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/reports"
)

// movesResult relocates an application back and forth twelve times, so each
// volume's chain grows to thirteen members alternating sites, with
// partitions injected during two of the moves.
func movesResult(a app, seed uint64, moves int) reports.Result {
	b := newBuilder(a.name+"/twelve-moves", seed)
	b.deployAndProtect(a)
	b.phase("replicate to site-b", func() (bool, string) {
		b.steady(a, siteA, 2)
		return true, ""
	})
	active := siteA
	for move := 1; move <= moves; move++ {
		to := other(active)
		b.phase(fmt.Sprintf("relocate %d to %s", move, to), func() (bool, string) {
			note := b.injectPartition(move, active)
			b.relocate(a, active, to, move)
			return true, note
		})
		active = to
		b.phase(fmt.Sprintf("replicate to %s", other(active)), func() (bool, string) {
			b.steady(a, active, 1)
			return true, ""
		})
	}
	states := make([]string, moves+1)
	for generation := range states {
		switch {
		case generation == moves:
			states[generation] = "Active"
		case generation == moves-1:
			states[generation] = "Demoted"
		default:
			states[generation] = "Tombstone"
		}
	}
	b.chains(a, states)
	return b.finish()
}

// injectPartition cuts a link during some moves: the hub from both sites on
// the fourth (the move waits for it), the target site on the ninth (the
// final sync retries after the heal); on the sixth a storage node of the
// target site crashes and restarts instead.
func (b *builder) injectPartition(move int, active string) string {
	switch move {
	case 4:
		b.begin(hub, reports.EventPartition, "cut hub", "hub cut off from both sites")
		b.advance(18 * time.Second)
		b.end(hub, reports.EventPartition, "cut hub", "hub reachable again")
		return "hub partitioned for the first 18 s"
	case 6:
		target := other(active)
		b.event(target, reports.EventFault, target+"-node-2 crashed")
		b.advance(12 * time.Second)
		b.event(target, reports.EventFault, target+"-node-2 restarted; DRBD resync of its replicas")
		return "a storage node of " + target + " crashed and restarted"
	case 9:
		target := other(active)
		b.begin(target, reports.EventPartition, "cut "+target, target+" cut off from "+active)
		b.event(active, reports.EventFault, "final sync to "+target+" timed out; retrying")
		b.advance(25 * time.Second)
		b.end(target, reports.EventPartition, "cut "+target, target+" reachable again")
		return target + " partitioned during the final sync"
	}
	return ""
}
