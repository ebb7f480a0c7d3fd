package zfs

// A filler is a runaway writer outside the backend's volumes: a log or a
// neighbour's filesystem dataset on the same pool that keeps writing until it
// is stopped. While it runs it takes every block the pool has free and every
// block freed later, so the volumes can shrink but never grow: writes that
// need a new block (a thin zvol overcommits, so it learns only now), snapshots
// of thick volumes, receives and clones that need space are refused with
// ErrPoolFull, as on a real pool at 100%. Unfill stops it and destroys its
// dataset, which gives all of it back at once. The backend does not list it
// (it is not a zvol); Usage counts it, as `zpool list` does.

// Fill starts the filler. Filling a pool already filled changes nothing.
func (p *Pool) Fill() { p.filling = true }

// Unfill stops the filler and destroys its dataset.
func (p *Pool) Unfill() { p.filling = false }

// Filled says whether the filler runs.
func (p *Pool) Filled() bool { return p.filling }

// fillerBytes is what the filler holds: everything the volumes do not.
func (p *Pool) fillerBytes() uint64 {
	if !p.filling {
		return 0
	}
	if allocated := p.allocatedBytes(); allocated < p.sizeBytes {
		return p.sizeBytes - allocated
	}
	return 0
}
