package drbd

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// resyncState is a running resync on one connection.
type resyncState struct {
	source, target string
	full           bool
	totalBytes     uint64
}

// startResync makes target a SyncTarget of source. The blocks to copy are the
// union of both bitmaps (a full sync: every block); the target takes the
// source's generation now and is Inconsistent until the last block arrived,
// so an interrupted resync resumes rather than restarts.
func (c *Cluster) startResync(source, target *replica, full bool) {
	resource := source.config.Name
	key := keyOf(resource, source.node, target.node)
	conn := c.conns[key]
	blocks := source.md.bitmapFor(target.node)
	blocks.union(target.md.bitmapFor(source.node))
	if full {
		blocks.setRange(0, min(source.usableBytes, target.usableBytes)/blockBytes)
	}
	target.md.bitmap[source.node] = blocks.clone()
	takeGeneration(source, target)
	source.md.crashed, target.md.crashed = false, false
	conn.sync = &resyncState{source: source.node, target: target.node, full: full, totalBytes: blocks.bytes()}
	c.stats.Resyncs++
	kind := "bitmap"
	if full {
		kind = "full"
	}
	c.logf("%s %s->%s: resync (%s) of %d bytes: repl( Established -> SyncSource/SyncTarget )",
		resource, source.node, target.node, kind, blocks.bytes())
	if target.md.sb.disk != backend.Inconsistent {
		c.logf("%s %s: disk( %s -> Inconsistent )", resource, target.node, target.md.sb.disk)
		target.md.sb.disk = backend.Inconsistent
	}
	c.writeSuperblock(target)
	c.scheduleResync(key, conn.epoch, blocks.bytes())
}

// takeGeneration gives target the source's data generation (its own goes
// to its history), and the two no longer keep the generation they last knew
// of each other: from now on they hold one.
func takeGeneration(source, target *replica) {
	if target.md.sb.current != source.md.sb.current {
		target.md.pushHistory(target.md.sb.current)
		target.md.sb.current = source.md.sb.current
	}
	delete(source.md.bitmapUUID, target.node)
	delete(target.md.bitmapUUID, source.node)
}

func (c *Cluster) scheduleResync(key connKey, epoch, remainingBytes uint64) {
	chunkBytes := min(remainingBytes, c.opts.ResyncChunkBytes)
	label := fmt.Sprintf("drbd resync %s %s-%s", key.resource, key.a, key.b)
	c.opts.Scheduler.After(transferTime(chunkBytes, c.opts.ResyncBytesPerSecond), label, func() {
		c.resyncStep(key, epoch)
	})
}

// transferTime is how long bytes take at a rate, saturating rather than
// overflowing for absurd sizes.
func transferTime(sizeBytes, bytesPerSecond uint64) time.Duration {
	hi, lo := bits.Mul64(sizeBytes, uint64(time.Second))
	if hi >= bytesPerSecond {
		return time.Duration(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, bytesPerSecond)
	return time.Duration(min(q, math.MaxInt64))
}

// resyncStep copies the next chunk of out-of-sync blocks, lowest first. A
// step whose connection dropped or was re-established since is stale.
func (c *Cluster) resyncStep(key connKey, epoch uint64) {
	conn, ok := c.conns[key]
	if !ok || conn.epoch != epoch || conn.sync == nil {
		return
	}
	source := c.replicaOf(key.resource, conn.sync.source)
	target := c.replicaOf(key.resource, conn.sync.target)
	blocks := source.md.bitmapFor(target.node)
	budget := c.opts.ResyncChunkBytes
	buf, held := make([]byte, blockBytes), make([]byte, blockBytes)
	next := uint64(0)
	for budget > 0 {
		block, ok := blocks.next(next)
		if !ok {
			break
		}
		if err := c.copyBlock(source, target, block, buf, held); err != nil {
			c.logf("%s %s->%s: resync I/O error: %v", key.resource, source.node, target.node, err)
			if errors.Is(err, backend.ErrPoolFull) || errors.Is(err, backend.ErrRefused) {
				// The target's disk refuses writes: DRBD detaches it, the
				// resync stops where it is, the bitmap keeps the rest, and
				// the attach that brings the disk back resumes it.
				c.failDisk(target)
				c.checkInvariants()
				return
			}
			c.disconnect(key, false)
			return
		}
		blocks.clear(block)
		target.md.bitmapFor(source.node).clear(block)
		budget -= blockBytes
		next = block + 1
	}
	if blocks.count == 0 {
		c.finishResync(conn, source, target)
	} else {
		c.scheduleResync(key, epoch, blocks.bytes())
	}
	c.checkInvariants()
}

// copyBlock resyncs one block; held is scratch for the target's copy.
func (c *Cluster) copyBlock(source, target *replica, block uint64, buf, held []byte) error {
	offset := block * blockBytes
	limit := min(source.usableBytes, target.usableBytes)
	if offset >= limit {
		return nil
	}
	n := min(blockBytes, limit-offset)
	if _, err := source.backing.ReadAt(buf[:n], int64(offset)); err != nil {
		return err
	}
	c.stats.ResyncedBytes += n
	if !c.opts.FullResync {
		if _, err := target.backing.ReadAt(held[:n], int64(offset)); err != nil {
			return err
		}
		if bytes.Equal(held[:n], buf[:n]) {
			c.stats.ResyncIdenticalBytes += n
			return nil
		}
	}
	if _, err := target.backing.WriteAt(buf[:n], int64(offset)); err != nil {
		return err
	}
	target.md.unsynced.set(block)
	return nil
}

// finishResync: the target holds the source's data. It takes over the
// source's knowledge of the peers it is not connected to (what they miss of
// this generation), is in sync with the connected peers of its new
// generation, and re-handshakes the others.
func (c *Cluster) finishResync(conn *connection, source, target *replica) {
	resource := source.config.Name
	conn.sync = nil
	c.logf("%s %s->%s: resync done: repl( SyncSource/SyncTarget -> Established )", resource, source.node, target.node)
	// A source that kept taking writes the target missed (a weak target) moved
	// on to a new generation meanwhile; the resync copied those blocks too.
	takeGeneration(source, target)
	for _, peer := range target.diskfulPeers() {
		if peer == source.node || c.connected(target, peer) {
			continue
		}
		if u := source.md.bitmapUUID[peer]; u != 0 {
			target.md.bitmapUUID[peer] = u
		} else {
			delete(target.md.bitmapUUID, peer)
		}
		target.md.bitmapFor(peer).union(source.md.bitmapFor(peer))
	}
	c.setDisk(target, source.md.sb.disk)
	for _, peer := range c.connectedPeers(target) {
		if peer == source || peer.md == nil {
			continue
		}
		if other := c.conns[keyOf(resource, target.node, peer.node)]; other.sync != nil {
			continue
		}
		if peer.md.sb.current == target.md.sb.current && peer.md.sb.disk != backend.Inconsistent {
			peer.md.bitmapFor(target.node).reset()
			target.md.bitmapFor(peer.node).reset()
			continue
		}
		c.rehandshake(target, peer)
	}
	c.observe(resource)
}
