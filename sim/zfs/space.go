package zfs

import "github.com/baton-dr/baton/storage/backend"

// charge is what one volume adds to the pool's allocation beyond the blocks
// its trees reference (those are in Pool.liveBytes, shared blocks once).
type charge struct {
	uniqueBytes       uint64 // synced bytes only the head references
	pendingExtraBytes uint64 // new blocks its unsynced writes will take
	reservationBytes  uint64 // refreservation: the size of a thick volume
}

// bytes is the unsynced writes' new blocks plus what the reservation still
// holds back beyond the bytes the volume holds alone (usedbyrefreservation).
func (c charge) bytes() uint64 {
	held := c.uniqueBytes + c.pendingExtraBytes
	if c.reservationBytes > held {
		return c.pendingExtraBytes + c.reservationBytes - held
	}
	return c.pendingExtraBytes
}

func (v *volume) charge() charge {
	c := charge{uniqueBytes: v.uniqueBytes, pendingExtraBytes: v.pendingExtraBytes}
	if v.provisioning == backend.Thick {
		c.reservationBytes = v.sizeBytes
	}
	return c
}

// allocatedBytes is the pool's allocation. The sum runs over a map, but
// addition does not care about order.
func (p *Pool) allocatedBytes() uint64 {
	total := p.liveBytes
	for _, v := range p.volumes {
		total += v.charge().bytes()
	}
	return total
}

// fits says whether a change may happen: the change adds addLiveBytes of new
// blocks and turns v's charge into next (v nil: a volume that does not exist
// yet, whose charge is next). A change that does not raise the allocation
// always fits, even on a pool already past its capacity; while a filler runs
// (filler.go) nothing else does.
func (p *Pool) fits(addLiveBytes uint64, v *volume, next charge) bool {
	now := p.allocatedBytes()
	after := now + addLiveBytes + next.bytes()
	if v != nil {
		after -= v.charge().bytes()
	}
	return after <= now || (!p.filling && after <= p.sizeBytes)
}

// outOfSpace is zfs's refusal when the pool cannot hold a change.
func outOfSpace(context string) error {
	return backend.Refusal(backend.ErrPoolFull, tool, "%s: out of space", context)
}

// recount recomputes what a volume holds alone after a change that can make
// shared blocks unique again (a destroyed snapshot).
func (v *volume) recount() {
	v.uniqueBytes = uniqueBytes(v.head, topLevel)
	v.pendingExtraBytes = v.pendingExtraFor(v.head)
}

// pendingExtraFor is the space the unsynced writes would take over a head.
func (v *volume) pendingExtraFor(head *node) uint64 {
	var extra uint64
	for index := range v.pending {
		if !exclusive(head, index) {
			extra += v.blockSizeBytes
		}
	}
	return extra
}
