package workload

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// A database volume, as a write-ahead-logging database lays one out:
//
//	block 0                 control block: checkpoint number, checkpoint LSN
//	blocks 1..LogBlocks     redo-log ring: the block of LSN n is 1 + (n-1) mod LogBlocks
//	then PageBlocks blocks  data pages
//
// A transaction writes its log records (1 to maxLogParts blocks of consecutive
// LSNs, the last one its commit record) and then Syncs: the commit is
// acknowledged. A checkpoint writes the pages changed since the last one,
// Syncs, then writes the control block with the LSN recovery starts from, and
// Syncs: only then may the log before that LSN be overwritten. Recovery reads
// the pages and redoes every complete transaction the log holds from the
// checkpoint LSN on.
const (
	maxLogParts            = 3
	maxPagesPerTransaction = 4
	hotPages               = 16 // half of the updates go to these (options, counters)

	// control payload
	controlNumber = 0
	controlLSN    = 8
	controlEnd    = 16
	// log payload
	logLSN   = 0
	logTxid  = 8
	logPart  = 16
	logParts = 18
	logCount = 20
	logPages = 24 // count × u32
	// page payload
	pagePage = 0
	pageTxid = 8
	pageEnd  = 16
)

// transaction is the model's record of one transaction, for verification.
type transaction struct {
	txid   uint64
	commit int32 // history index of its commit record; -1 until issued
	pages  []uint32
}

type database struct {
	layout DatabaseLayout
	h      *history
	rng    *rand.Rand

	versions   []uint64 // per page, the last committed transaction that updated it
	dirty      []bool   // pages changed since the last checkpoint
	nextLSN    uint64
	checkpoint uint64 // LSN recovery starts from
	number     uint64 // checkpoints taken
	nextTxid   uint64 // never reused, across fail-overs
	txns       []transaction

	// misorderCheckpoint writes the control block before the pages, a bug the
	// invariant must catch; tests only.
	misorderCheckpoint bool
}

func newDatabase(workload, volume string, layout DatabaseLayout, rng *rand.Rand) *database {
	layout.validate()
	blocks := uint64(1 + layout.LogBlocks + layout.PageBlocks)
	return &database{
		layout:     layout,
		h:          newHistory(workload, volume, blocks, rng),
		rng:        rng,
		versions:   make([]uint64, layout.PageBlocks),
		dirty:      make([]bool, layout.PageBlocks),
		nextLSN:    1,
		checkpoint: 1,
		nextTxid:   1,
	}
}

func (d *database) spec() VolumeSpec {
	return VolumeSpec{Name: d.h.volumeName, SizeBytes: roundUpToMiB(d.h.sizeBlocks)}
}

func (d *database) hist() *history { return d.h }

func (d *database) logBlock(lsn uint64) uint64 {
	if lsn == 0 {
		panic("workload: LSN 0 does not exist")
	}
	return 1 + (lsn-1)%uint64(d.layout.LogBlocks)
}

func (d *database) pageBlock(page uint32) uint64 { return uint64(1+d.layout.LogBlocks) + uint64(page) }

// commit runs one transaction, checkpointing first when the log is half full.
func (d *database) commit(now time.Time, dev backend.Device) (string, error) {
	operation := ""
	if d.nextLSN-d.checkpoint+maxLogParts > uint64(d.layout.LogBlocks/2) {
		pages, err := d.takeCheckpoint(now, dev)
		operation = fmt.Sprintf("checkpoint %d (%d pages); ", d.number, pages)
		if err != nil {
			return operation, err
		}
	}
	txn := transaction{txid: d.nextTxid, commit: -1, pages: d.choosePages()}
	d.nextTxid++
	parts := 1 + d.rng.IntN(maxLogParts)
	operation += fmt.Sprintf("commit txn %d (%d log blocks)", txn.txid, parts)
	err := d.writeLog(now, dev, &txn, parts)
	d.txns = append(d.txns, txn)
	if err == nil {
		err = d.h.sync(dev)
	}
	if err != nil {
		return operation, err
	}
	for _, page := range txn.pages {
		d.versions[page], d.dirty[page] = txn.txid, true
	}
	return operation, nil
}

// writeLog writes a transaction's log records, its pages spread over them.
func (d *database) writeLog(now time.Time, dev backend.Device, txn *transaction, parts int) error {
	for part := range parts {
		if d.nextLSN-d.checkpoint >= uint64(d.layout.LogBlocks) {
			panic(fmt.Sprintf("workload: LSN %d would overwrite the log from checkpoint LSN %d", d.nextLSN, d.checkpoint))
		}
		p := d.h.payload()
		binary.LittleEndian.PutUint64(p[logLSN:], d.nextLSN)
		binary.LittleEndian.PutUint64(p[logTxid:], txn.txid)
		binary.LittleEndian.PutUint16(p[logPart:], uint16(part))
		binary.LittleEndian.PutUint16(p[logParts:], uint16(parts))
		count := 0
		for i := part; i < len(txn.pages); i += parts {
			binary.LittleEndian.PutUint32(p[logPages+4*count:], txn.pages[i])
			count++
		}
		binary.LittleEndian.PutUint16(p[logCount:], uint16(count))
		d.h.fill(p[logPages+4*maxPagesPerTransaction:])
		index, err := d.h.write(dev, now, d.logBlock(d.nextLSN), KindDatabaseLog)
		d.nextLSN++
		if part == parts-1 {
			txn.commit = int32(index)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// choosePages picks 1 to maxPagesPerTransaction distinct pages, half of them
// from the hot pages every WordPress request touches.
func (d *database) choosePages() []uint32 {
	want := 1 + d.rng.IntN(maxPagesPerTransaction)
	pages := make([]uint32, 0, want)
	for attempt := 0; len(pages) < want && attempt < 8*maxPagesPerTransaction; attempt++ {
		limit := d.layout.PageBlocks
		if d.rng.IntN(2) == 0 {
			limit = min(limit, hotPages)
		}
		page := uint32(d.rng.IntN(limit))
		if !containsPage(pages, page) {
			pages = append(pages, page)
		}
	}
	if len(pages) == 0 {
		panic("workload: a transaction chose no page")
	}
	return pages
}

func containsPage(pages []uint32, page uint32) bool {
	for _, p := range pages {
		if p == page {
			return true
		}
	}
	return false
}

// takeCheckpoint writes the dirty pages, Syncs, then advances the checkpoint
// pointer, and Syncs. It returns the number of pages written.
func (d *database) takeCheckpoint(now time.Time, dev backend.Device) (int, error) {
	if d.misorderCheckpoint {
		if err := d.writeControl(now, dev); err != nil {
			return 0, err
		}
	}
	pages := 0
	for page, dirty := range d.dirty {
		if !dirty {
			continue
		}
		p := d.h.payload()
		binary.LittleEndian.PutUint32(p[pagePage:], uint32(page))
		binary.LittleEndian.PutUint64(p[pageTxid:], d.versions[page])
		d.h.fill(p[pageEnd:])
		pages++
		if _, err := d.h.write(dev, now, d.pageBlock(uint32(page)), KindDatabasePage); err != nil {
			return pages, err
		}
	}
	if err := d.h.sync(dev); err != nil {
		return pages, err
	}
	if !d.misorderCheckpoint {
		if err := d.writeControl(now, dev); err != nil {
			return pages, err
		}
	}
	clear(d.dirty)
	return pages, nil
}

// writeControl writes the control block pointing at the next LSN, and Syncs.
func (d *database) writeControl(now time.Time, dev backend.Device) error {
	p := d.h.payload()
	binary.LittleEndian.PutUint64(p[controlNumber:], d.number+1)
	binary.LittleEndian.PutUint64(p[controlLSN:], d.nextLSN)
	d.h.fill(p[controlEnd:])
	if _, err := d.h.write(dev, now, 0, KindDatabaseControl); err != nil {
		return err
	}
	if err := d.h.sync(dev); err != nil {
		return err
	}
	d.number++
	d.checkpoint = d.nextLSN
	return nil
}
