package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/workload"
)

// invariantTailNotKept: an acknowledged write of an old primary is in
// neither the new chain nor the diverged tail its superseded member kept.
const invariantTailNotKept = "volume: diverged tail not kept"

// The diverged tail, end to end. An unplanned move leaves the old primary
// writing (the application's own writes after the cut, which the fail-over
// loses, then its tail instance's); the design keeps all of them in a
// snapshot of the superseded member (core.TailSnapshot) that never ships.
// The fail-over's verdict proves them absent from the new chain; here,
// once the application fails back to the old site, the bed reads that
// snapshot in place on the member's home node and counts them present
// (workload.CheckKept), so a write lost on both sides is a violation.

// unplannedMove is what the fail-back's check needs of an unplanned move.
type unplannedMove struct {
	app  string
	from string // the old primary's site
	// members are the old primary's active ends, by volume order.
	members []chain.Ref
	// since is when the oldest acknowledged write the fail-over lost was
	// issued, on any volume; zero when it lost none.
	since time.Time
	at    time.Time // when the move began: the application stopped writing on from
	// tail is the instance left writing on from; nil if none ran.
	tail workload.Workload
}

var _ bed.TailKeeper = (*World)(nil)

// KeptTails are the tails read back so far.
func (w *World) KeptTails() []reports.KeptTail { return slices.Clone(w.keptTails) }

// Failover is the applications' unplanned move, remembered for the check
// at the fail-back.
func (w *World) Failover(name, to string) (workload.Verdict, error) {
	from, _ := w.Moves.Where(name)
	members := w.activeEnds(name, from)
	at := w.Sim.Now()
	verdict, err := w.Moves.Failover(name, to)
	if err != nil || from == "" {
		return verdict, err
	}
	move := unplannedMove{app: name, from: from, members: members, at: at}
	for _, v := range verdict.Volumes {
		if v.Lost.Acknowledged > 0 && (move.since.IsZero() || v.Lost.Oldest.Before(move.since)) {
			move.since = v.Lost.Oldest
		}
	}
	if a, err := w.apps.App(name); err == nil && a.Ramen.Tail != nil && a.Ramen.Tail.Site == from {
		move.tail = a.Ramen.Tail.Model
	}
	w.unplanned = append(w.unplanned, move)
	return verdict, nil
}

// Relocate is the applications' planned move; one back to the site an
// unplanned move left is a fail-back, after which that site's kept tail is
// read back.
func (w *World) Relocate(name, to string) (workload.Verdict, error) {
	verdict, err := w.Moves.Relocate(name, to)
	if err != nil {
		return verdict, err
	}
	pending := w.unplanned[:0]
	for _, move := range w.unplanned {
		if move.app == name && move.from == to {
			w.checkKeptTail(move)
			continue
		}
		pending = append(pending, move)
	}
	w.unplanned = pending
	return verdict, nil
}

// activeEnds are the application's members on site that are Active: the
// old primary's, before a fail-over supersedes them.
func (w *World) activeEnds(name, site string) []chain.Ref {
	a, err := w.apps.App(name)
	if err != nil || site == "" {
		return nil
	}
	defer w.unfaulted()()
	volumes, err := w.Site(site).Store.Volumes()
	if err != nil {
		return nil
	}
	refs := make([]chain.Ref, len(a.Volumes))
	for i, v := range a.Volumes {
		for _, rec := range volumes {
			if rec.Root.String() == v.Handle && rec.State == chain.Active {
				refs[i] = rec.Ref
			}
		}
	}
	return refs
}

// checkKeptTail reads the kept tail of an unplanned move's old primary and
// counts in it the application's acknowledged writes the fail-over lost and
// its tail instance's: each volume's figures go to KeptTails, and a write in
// neither the new chain nor the kept tail is a violation.
func (w *World) checkKeptTail(move unplannedMove) {
	a, err := w.apps.App(move.app)
	if err != nil || a.Model == nil {
		return // an application run as itself has no history to count
	}
	devices, missing := w.keptDevices(a.Volumes, move)
	var own, tail workload.Kept
	if !move.since.IsZero() {
		if own, err = workload.CheckKept(a.Model, devices, move.since, move.at, apps.TailName(move.app)); err != nil {
			w.violate(invariantTailNotKept, fmt.Sprintf("%s: %v", move.app, err))
			return
		}
	}
	if move.tail != nil {
		if tail, err = workload.CheckKept(move.tail, devices, time.Time{}, w.Sim.Now()); err != nil {
			w.violate(invariantTailNotKept, fmt.Sprintf("%s's tail: %v", move.app, err))
			return
		}
	}
	for i, v := range a.Volumes {
		k := reports.KeptTail{App: move.app, Volume: v.Name, Site: move.from, Member: move.members[i].String(),
			FailedOver: move.at, Checked: w.Sim.Now()}
		var findings []string
		for _, counted := range []workload.Kept{own, tail} {
			if i < len(counted.Volumes) {
				c := counted.Volumes[i]
				k.Acknowledged, k.Held, k.Lost, k.Corrupt = k.Acknowledged+c.Acknowledged, k.Held+c.Held, k.Lost+c.Lost, k.Corrupt+c.Corrupt
				for _, f := range c.Findings {
					findings = append(findings, f.String())
				}
			}
		}
		w.keptTails = append(w.keptTails, k)
		w.event(move.from, reports.EventAction, "%s's %s: the kept tail of %s holds %d of the %d acknowledged writes after the cut",
			move.app, v.Name, k.Member, k.Held, k.Acknowledged)
		if k.Lost+k.Corrupt > 0 {
			w.violate(invariantTailNotKept, fmt.Sprintf("%s's %s: %d acknowledged writes of the old primary on %s (failed over at %s) are in neither the new chain nor its kept tail (%d lost, %d corrupt)%s; first: %s",
				move.app, v.Name, k.Lost+k.Corrupt, move.from, w.offset(move.at), k.Lost, k.Corrupt, missing[v.Name], strings.Join(firstOf(findings, 3), "; ")))
		}
	}
}

// keptDevices opens, read-only and in place, the tail snapshot each of the
// move's old members kept on its home node; a volume without one is
// missing, with the reason.
func (w *World) keptDevices(volumes []apps.Volume, move unplannedMove) (workload.Devices, map[string]string) {
	defer w.unfaulted()()
	devices, missing := workload.Devices{}, map[string]string{}
	site := w.Site(move.from)
	records, err := site.Store.Volumes()
	for i, v := range volumes {
		if err != nil {
			missing[v.Name] = fmt.Sprintf(" (the records of %s: %v)", move.from, err)
			continue
		}
		at := slices.IndexFunc(records, func(rec core.Volume) bool { return rec.Ref == move.members[i] })
		switch {
		case move.members[i].IsZero() || at < 0:
			missing[v.Name] = " (no record of the old member)"
		case records[at].Tail == "":
			missing[v.Name] = fmt.Sprintf(" (%s records no kept tail)", move.members[i])
		default:
			rec := records[at]
			view, err := site.Node(rec.Home).Pool.ReadSnapshot(rec.Dataset(), rec.Tail)
			if err != nil {
				missing[v.Name] = fmt.Sprintf(" (%s on %s: %v)", rec.Tail, rec.Home, err)
				continue
			}
			devices[v.Name] = view
			if w.options.Claims && v.Files {
				devices[v.Name] = filesView{view}
			}
		}
	}
	return devices, missing
}

func firstOf(list []string, n int) []string { return list[:min(n, len(list))] }
