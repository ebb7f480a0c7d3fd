package replication

import "fmt"

// transition moves the pairing to phase to along the edges of its cycle --
// Idle to Snapshotting (a snapshot ordered), Snapshotting to Shipping (it was
// taken), Shipping to Idle (it arrived, or a re-aim found the target holding
// it), Paused to Idle (a sync asked for), and from any phase to Paused --
// and panics on any other: a pairing that skipped a step would ship a
// snapshot never taken, or order one while another is owed.
func (p *Pairing) transition(to Phase) {
	from := p.Phase
	switch {
	case from == to, to == Paused:
	case from == Idle && to == Snapshotting:
	case from == Snapshotting && to == Shipping:
	case from == Shipping && to == Idle:
	case from == Paused && to == Idle:
	default:
		panic(fmt.Sprintf("replication: pairing %s→%s cannot go from %s to %s", p.Source, p.Target, from, to))
	}
	p.Phase = to
}
