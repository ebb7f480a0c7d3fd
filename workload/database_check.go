package workload

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/baton-dr/baton/storage/backend"
)

// databaseState is what recovery found on a database volume; Resume continues
// from it.
type databaseState struct {
	number     uint64
	checkpoint uint64 // LSN the redo started from
	nextLSN    uint64 // the first LSN the log does not hold
	versions   []uint64
	dirty      []bool // pages the redo changed: the next checkpoint writes them
}

// check recovers the database as the database would -- control block, data
// pages, redo from the checkpoint LSN to the end of the log -- and compares the
// result with what the transactions committed in the prefix imply.
func (d *database) check(dev backend.Device, cut int, r *reporter) any {
	st := databaseState{versions: make([]uint64, d.layout.PageBlocks), dirty: make([]bool, d.layout.PageBlocks)}
	st.number, st.checkpoint = d.readControl(dev, r)
	d.readPages(dev, st.versions, r)
	st.nextLSN = d.redo(dev, &st, r)
	d.compare(st, cut, r)
	return st
}

func (d *database) readControl(dev backend.Device, r *reporter) (number, lsn uint64) {
	_, p, problem := d.h.readApp(dev, 0, KindDatabaseControl)
	if problem != "" {
		r.add(Malformed, 0, "the control block", problem)
		return 0, 1
	}
	if p == nil {
		return 0, 1 // a database that never checkpointed starts its log at LSN 1
	}
	number, lsn = binary.LittleEndian.Uint64(p[controlNumber:]), binary.LittleEndian.Uint64(p[controlLSN:])
	if lsn == 0 {
		r.add(Malformed, 0, "a checkpoint LSN of 1 or more", "0")
		return number, 1
	}
	return number, lsn
}

func (d *database) readPages(dev backend.Device, versions []uint64, r *reporter) {
	for page := range versions {
		block := d.pageBlock(uint32(page))
		_, p, problem := d.h.readApp(dev, block, KindDatabasePage)
		switch {
		case problem != "":
			r.add(Malformed, block, fmt.Sprintf("data page %d", page), problem)
		case p == nil:
		case binary.LittleEndian.Uint32(p[pagePage:]) != uint32(page):
			r.add(Malformed, block, fmt.Sprintf("data page %d", page), fmt.Sprintf("page %d", binary.LittleEndian.Uint32(p[pagePage:])))
		default:
			versions[page] = binary.LittleEndian.Uint64(p[pageTxid:])
		}
	}
}

// logRecord is one decoded log block.
type logRecord struct {
	txid        uint64
	part, parts int
	pages       []uint32
}

// redo scans the log from the checkpoint LSN until a block does not hold the
// next LSN, applies every complete transaction, and returns the end LSN. A
// transaction the scan ends inside was never committed.
func (d *database) redo(dev backend.Device, st *databaseState, r *reporter) uint64 {
	lsn := st.checkpoint
	var open *logRecord // the transaction being read: its pages so far, next part
	for range d.layout.LogBlocks {
		block := d.logBlock(lsn)
		_, p, _ := d.h.readApp(dev, block, KindDatabaseLog)
		if p == nil || binary.LittleEndian.Uint64(p[logLSN:]) != lsn {
			break // the end of the log; what else the block holds is the prefix check's concern
		}
		rec, problem := d.decodeLog(p)
		if problem == "" && rec.part > 0 && (open == nil || open.txid != rec.txid || open.part != rec.part || open.parts != rec.parts) {
			problem = fmt.Sprintf("part %d/%d of txn %d out of sequence", rec.part+1, rec.parts, rec.txid)
		}
		if problem != "" {
			r.add(Malformed, block, fmt.Sprintf("a log record of LSN %d", lsn), problem)
			break
		}
		if rec.part == 0 {
			open = &logRecord{txid: rec.txid, parts: rec.parts}
		}
		open.pages = append(open.pages, rec.pages...)
		open.part++
		lsn++
		if open.part == open.parts {
			applyTransaction(st, open)
			open = nil
		}
	}
	return lsn
}

func (d *database) decodeLog(p []byte) (logRecord, string) {
	rec := logRecord{
		txid:  binary.LittleEndian.Uint64(p[logTxid:]),
		part:  int(binary.LittleEndian.Uint16(p[logPart:])),
		parts: int(binary.LittleEndian.Uint16(p[logParts:])),
	}
	count := int(binary.LittleEndian.Uint16(p[logCount:]))
	if rec.parts < 1 || rec.parts > maxLogParts || rec.part >= rec.parts || count > maxPagesPerTransaction {
		return rec, fmt.Sprintf("part %d/%d with %d pages", rec.part+1, rec.parts, count)
	}
	for i := range count {
		page := binary.LittleEndian.Uint32(p[logPages+4*i:])
		if int(page) >= d.layout.PageBlocks {
			return rec, fmt.Sprintf("an update of page %d of %d", page, d.layout.PageBlocks)
		}
		rec.pages = append(rec.pages, page)
	}
	return rec, ""
}

// applyTransaction redoes a committed transaction; redo is idempotent, since a
// page a checkpoint wrote may already hold it.
func applyTransaction(st *databaseState, txn *logRecord) {
	for _, page := range txn.pages {
		if txn.txid > st.versions[page] {
			st.versions[page], st.dirty[page] = txn.txid, true
		}
	}
}

// compare checks the recovered pages against the transactions the prefix
// commits: every one of them must be recovered, and nothing else.
func (d *database) compare(st databaseState, cut int, r *reporter) {
	expected := make([]uint64, d.layout.PageBlocks)
	for _, t := range d.txns {
		if t.commit >= 0 && int(t.commit) < cut && d.h.writes[t.commit].discarded == 0 {
			for _, page := range t.pages {
				expected[page] = t.txid
			}
		}
	}
	type loss struct {
		txid, got uint64
		page      int
	}
	var losses []loss // one per transaction, in commit order
	reported := map[uint64]bool{}
	for page, want := range expected {
		got := st.versions[page]
		switch {
		case got < want && !reported[want]:
			reported[want] = true
			losses = append(losses, loss{txid: want, got: got, page: page})
		case got > want:
			r.add(UncommittedData, d.pageBlock(uint32(page)),
				fmt.Sprintf("page %d at txn %d, the last the prefix commits", page, want),
				fmt.Sprintf("txn %d", got))
		}
	}
	slices.SortFunc(losses, func(a, b loss) int { return cmp.Compare(a.txid, b.txid) })
	for _, l := range losses {
		t := d.transaction(l.txid)
		r.add(TransactionLost, d.h.writes[t.commit].block,
			fmt.Sprintf("txn %d, committed by %s", l.txid, d.h.describe(int(t.commit))),
			fmt.Sprintf("page %d recovers to txn %d (redo from checkpoint LSN %d ended at LSN %d)", l.page, l.got, st.checkpoint, st.nextLSN))
	}
}

// transaction finds a transaction the model recorded; txids only grow.
func (d *database) transaction(txid uint64) transaction {
	i := sort.Search(len(d.txns), func(i int) bool { return d.txns[i].txid >= txid })
	if i == len(d.txns) || d.txns[i].txid != txid {
		panic(fmt.Sprintf("workload: txn %d is not recorded", txid))
	}
	return d.txns[i]
}

// resume continues from the recovered database. Transactions the cut history
// no longer commits are forgotten; their txids are never reused.
func (d *database) resume(recovered any) {
	st := recovered.(databaseState)
	if len(st.versions) != d.layout.PageBlocks || st.nextLSN < st.checkpoint {
		panic(fmt.Sprintf("workload: resuming database %s from a malformed state", d.h.volumeName))
	}
	d.versions, d.dirty = st.versions, st.dirty
	d.nextLSN, d.checkpoint, d.number = st.nextLSN, st.checkpoint, st.number
	kept := d.txns[:0]
	for _, t := range d.txns {
		if t.commit >= 0 && d.h.writes[t.commit].discarded == 0 {
			kept = append(kept, t)
		}
	}
	d.txns = kept
}
