package drbd

import (
	"io"
	"maps"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// device is an open DRBD device (/dev/drbdN) on a Primary.
type device struct {
	c      *Cluster
	r      *replica
	closed bool
}

var _ backend.Device = (*device)(nil)

func (d *device) check() error {
	if d.closed {
		return backend.Refusal(backend.ErrInvalid, "drbd", "/dev/drbd%d: file already closed", d.r.config.Minor)
	}
	if d.r.down {
		return nodeDown(d.r.node)
	}
	return nil
}

func (d *device) ioError(format string, args ...any) error {
	return backend.Refusal(backend.ErrRefused, "drbd", "/dev/drbd%d: Input/output error: "+format,
		append([]any{d.r.config.Minor}, args...)...)
}

// sizeBytes is the device's size: the local volume's usable part, or, for a
// diskless node, the size of the data it reaches (a detached disk's size
// while it reaches none).
func (d *device) sizeBytes() uint64 {
	if d.r.md != nil {
		return d.r.usableBytes
	}
	for _, p := range d.c.connectedPeers(d.r) {
		if p.disk() == backend.UpToDate {
			return p.usableBytes
		}
	}
	return d.r.usableBytes
}

// noAccess fails I/O on a node that reaches no UpToDate data, its own or a
// Connected peer's: DRBD's on-no-data-accessible io-error. A Primary whose
// only UpToDate disk was detached while its peer was still a SyncTarget
// reads and flushes nothing (ci/vmtest:
// TestFullPoolUnderThePrimaryWhosePeerIsStillSyncing).
func (d *device) noAccess() error {
	// An UpToDate local disk is the common case: no peer list to build on
	// every block of I/O.
	if d.r.disk() == backend.UpToDate || d.c.hasUpToDateAccess(d.r, d.c.connectedPeers(d.r)) {
		return nil
	}
	return d.ioError("no access to UpToDate data")
}

func (d *device) ReadAt(p []byte, offset int64) (int, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	d.c.observe(d.r.config.Name)
	if err := d.noAccess(); err != nil {
		return 0, err
	}
	size := d.sizeBytes()
	if offset < 0 {
		return 0, backend.Refusal(backend.ErrInvalid, "drbd", "/dev/drbd%d: negative offset", d.r.config.Minor)
	}
	if uint64(offset) >= size {
		return 0, io.EOF
	}
	n := int(min(uint64(len(p)), size-uint64(offset)))
	if err := d.read(p[:n], offset); err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// read serves a block from the local volume when it holds that block's
// current data, otherwise from a Connected UpToDate peer.
func (d *device) read(p []byte, offset int64) error {
	if d.r.disk() == backend.UpToDate {
		_, err := d.r.backing.ReadAt(p, offset)
		return err
	}
	for done := 0; done < len(p); { // bounded: each pass advances by at least one byte
		at := uint64(offset) + uint64(done)
		block := at / blockBytes
		n := int(min(uint64(len(p)-done), (block+1)*blockBytes-at))
		source := d.c.readSource(d.r, block)
		if source == nil {
			return d.ioError("neither local nor remote data, sector %d", at/512)
		}
		if _, err := source.backing.ReadAt(p[done:done+n], int64(at)); err != nil {
			return err
		}
		done += n
	}
	return nil
}

func (c *Cluster) readSource(r *replica, block uint64) *replica {
	if sync := c.syncTargetOf(r); sync != nil && !r.md.bitmapFor(sync.source).has(block) {
		return r
	}
	for _, p := range c.connectedPeers(r) {
		if p.disk() == backend.UpToDate {
			return p
		}
	}
	return nil
}

// WriteAt is a protocol C write: it returns once the bytes reached the local
// volume and every Connected peer's. The diskful nodes that miss it get the
// blocks in the bitmaps of those that have it.
func (d *device) WriteAt(p []byte, offset int64) (int, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	r := d.r
	d.c.observe(r.config.Name)
	if !d.c.hasQuorum(r) {
		return 0, d.ioError("no quorum (on-no-quorum io-error)")
	}
	if err := d.noAccess(); err != nil {
		return 0, err
	}
	if offset < 0 || uint64(offset)+uint64(len(p)) > d.sizeBytes() {
		return 0, d.ioError("write of %d bytes at %d beyond the end of the device (%d bytes)", len(p), offset, d.sizeBytes())
	}
	if r.fenced {
		// The kernel refuses the write before DRBD sees it: nothing reaches
		// a disk, the local one or a peer's, and nothing is detached.
		d.c.logf("%s %s: write of %d bytes at %d refused: the device is fenced", r.config.Name, r.node, len(p), offset)
		return 0, backend.Refusal(backend.ErrRefused, "drbd", "write /dev/drbd%d: Operation not permitted (fenced read-only)",
			r.config.Minor)
	}
	receivers := d.c.receivers(r)
	if len(receivers) == 0 {
		return 0, d.ioError("neither local nor remote disk")
	}
	// Every receiver's backing device takes the write or fails it. DRBD
	// detaches a disk that fails a write (on-io-error detach, 8.4's
	// default), the writer's own as much as a peer's, and the write
	// succeeds if any disk took it: a Primary whose pool is full goes on
	// writing to its peers, Diskless (ci/vmtest: TestFullPoolUnderThePrimary).
	written := make([]*replica, 0, len(receivers))
	var failed []*replica
	for _, x := range receivers {
		if _, err := x.backing.WriteAt(p, offset); err != nil {
			d.c.logf("%s %s: write of %d bytes at %d refused by the backing device: %v", r.config.Name, x.node, len(p), offset, err)
			failed = append(failed, x)
			continue
		}
		written = append(written, x)
		if x != r {
			d.c.stats.ReplicatedBytes += uint64(len(p))
		}
	}
	for _, x := range failed {
		d.c.failDisk(x)
	}
	if len(written) == 0 {
		return 0, d.ioError("no disk took the write")
	}
	if !slices.ContainsFunc(written, func(x *replica) bool { return x.disk() == backend.UpToDate }) {
		// The only UpToDate disk failed the write and only SyncTargets took
		// it: the write fails, and they mark its blocks for the resync that
		// brings them the UpToDate data again; no generation starts on them.
		first, n := blockSpan(offset, len(p))
		missing := missingNodes(r, written)
		for _, x := range written {
			x.md.markMissing(first, n, missing)
		}
		return 0, d.ioError("no UpToDate disk took the write")
	}
	missing := missingNodes(r, written)
	d.c.rotateForMissing(written, missing)
	d.c.recordWrite(r, written, missing, offset, len(p))
	return len(p), nil
}

// receivers are the diskful replicas a write from r reaches: r itself and its
// Connected peers, by node name.
func (c *Cluster) receivers(r *replica) []*replica {
	var out []*replica
	if r.md != nil {
		out = append(out, r)
	}
	for _, p := range c.connectedPeers(r) {
		if p.md != nil {
			out = append(out, p)
		}
	}
	return out
}

// missingNodes are the configured diskful nodes a write does not reach.
func missingNodes(r *replica, receivers []*replica) []string {
	var out []string
	for _, n := range r.config.Nodes {
		if n.Volume == "" {
			continue
		}
		got := false
		for _, x := range receivers {
			got = got || x.node == n.Node
		}
		if !got {
			out = append(out, n.Node)
		}
	}
	return out
}

// recordWrite does the bookkeeping of a write: the writer's activity log,
// bitmaps of the nodes that missed it, the writer's transfer log toward each
// peer, every receiver's unflushed blocks, and resyncs that the write made unnecessary for blocks
// it covered whole.
func (c *Cluster) recordWrite(r *replica, receivers []*replica, missing []string, offset int64, length int) {
	first, n := blockSpan(offset, length)
	if r.md != nil {
		r.md.al.touch(first, n)
	}
	for _, x := range receivers {
		x.md.markMissing(first, n, missing)
		x.md.unsynced.setRange(first, n)
		if r.md != nil && x != r {
			r.tlFor(x.node).setRange(first, n)
		}
	}
	coveredFirst, coveredN := coveredSpan(offset, length)
	if coveredN == 0 {
		return
	}
	for i, x := range receivers {
		for _, y := range receivers[i+1:] {
			conn := c.conns[keyOf(r.config.Name, x.node, y.node)]
			if conn == nil || conn.sync == nil {
				continue
			}
			for block := coveredFirst; block < coveredFirst+coveredN; block++ {
				x.md.bitmapFor(y.node).clear(block)
				y.md.bitmapFor(x.node).clear(block)
			}
		}
	}
}

// rotateForMissing starts a new data generation on the holders of a write
// when a diskful node misses it and was not missing writes before.
func (c *Cluster) rotateForMissing(holders []*replica, missing []string) {
	need := false
	for _, h := range holders {
		for _, m := range missing {
			need = need || (h.md.bitmapUUID[m] == 0 && h.md.sb.current != 0)
		}
	}
	if !need {
		return
	}
	for _, h := range holders[1:] {
		if h.md.sb.current != holders[0].md.sb.current {
			panic("drbd: " + h.config.Name + ": connected holders of a write disagree on the generation")
		}
	}
	uuid := c.mint.next()
	for _, h := range holders {
		h.md.rotate(uuid, missing)
		c.writeSuperblock(h)
	}
	c.logf("%s: new current UUID %016X on %s: %v miss writes", holders[0].config.Name, uuid, nodeNames(holders), missing)
}

func nodeNames(rs []*replica) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.node
	}
	return out
}

// Sync is a flush: DRBD forwards it to every peer, so the data is on stable
// storage wherever it was written, and the transfer log is acknowledged.
func (d *device) Sync() error {
	if err := d.check(); err != nil {
		return err
	}
	d.c.observe(d.r.config.Name)
	if err := d.noAccess(); err != nil {
		return err
	}
	for _, x := range d.c.receivers(d.r) {
		if err := x.backing.Sync(); err != nil {
			return err
		}
		x.md.unsynced.reset()
	}
	for _, peer := range slices.Sorted(maps.Keys(d.r.tl)) {
		d.r.tl[peer].reset()
	}
	return nil
}

func (d *device) Close() error {
	if d.closed {
		return backend.Refusal(backend.ErrInvalid, "drbd", "/dev/drbd%d: file already closed", d.r.config.Minor)
	}
	d.closed = true
	if !d.r.down {
		d.r.opens--
	}
	return nil
}
