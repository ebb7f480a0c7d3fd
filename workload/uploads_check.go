package workload

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// slottedEntry is a directory entry and the slot it was found in.
type slottedEntry struct {
	slot  int
	entry fileEntry
}

// uploadsState is what the directory holds; Resume continues from it.
type uploadsState struct {
	files []slottedEntry // in slot order
}

// check reads the directory and every file it names: each data block must hold
// exactly the write the entry names, a part of that file.
func (u *uploads) check(dev backend.Device, _ int, r *reporter) any {
	var st uploadsState
	ids := map[uint64]bool{}
	for block := range u.layout.DirectoryBlocks {
		for _, se := range u.readDirectory(dev, block, r) {
			if problem := u.entryProblem(se.entry, ids); problem != "" {
				r.add(Malformed, uint64(block), fmt.Sprintf("a valid entry in slot %d", se.slot), problem)
				continue
			}
			ids[se.entry.id] = true
			u.checkFile(dev, se.entry, r)
			st.files = append(st.files, se)
		}
	}
	u.checkOverlaps(st.files, r)
	return st
}

// readDirectory decodes one directory block's entries (copied out of the read
// buffer, which the file checks reuse).
func (u *uploads) readDirectory(dev backend.Device, block int, r *reporter) []slottedEntry {
	_, p, problem := u.h.readApp(dev, uint64(block), KindDirectory)
	if problem != "" {
		r.add(Malformed, uint64(block), "a directory block", problem)
		return nil
	}
	if p == nil {
		return nil
	}
	if index := binary.LittleEndian.Uint32(p[0:]); index != uint32(block) {
		r.add(Malformed, uint64(block), fmt.Sprintf("directory block %d", block), fmt.Sprintf("directory block %d", index))
		return nil
	}
	var entries []slottedEntry
	for i := range uploadSlotsPerBlock {
		e := decodeEntry(p[uploadDirHeader+i*uploadEntrySize:])
		if e.id != 0 {
			entries = append(entries, slottedEntry{slot: block*uploadSlotsPerBlock + i, entry: e})
		}
	}
	return entries
}

func (u *uploads) entryProblem(e fileEntry, ids map[uint64]bool) string {
	switch {
	case e.blocks < 1 || e.blocks > maxFileBlocks:
		return fmt.Sprintf("file %d of %d blocks", e.id, e.blocks)
	case int(e.start)+e.blocks > u.layout.DataBlocks:
		return fmt.Sprintf("file %d at data blocks %d+%d beyond the ring of %d", e.id, e.start, e.blocks, u.layout.DataBlocks)
	case ids[e.id]:
		return fmt.Sprintf("file %d named twice", e.id)
	}
	return ""
}

// checkFile checks that a named file has all its blocks.
func (u *uploads) checkFile(dev backend.Device, e fileEntry, r *reporter) {
	name := string(bytes.TrimRight(e.name[:], "\x00"))
	for part := range e.blocks {
		block := u.dataBlock(e.start, part)
		expected := fmt.Sprintf("write #%d, part %d/%d of file %d %q", e.seqs[part], part+1, e.blocks, e.id, name)
		hdr, p, problem := u.h.readApp(dev, block, KindFileData)
		switch {
		case problem != "":
			r.add(FileIncomplete, block, expected, problem)
		case p == nil:
			r.add(FileIncomplete, block, expected, "zeros")
		default:
			id := binary.LittleEndian.Uint64(p[fileID:])
			gotPart, gotParts := binary.LittleEndian.Uint16(p[filePart:]), binary.LittleEndian.Uint16(p[fileParts:])
			if hdr.seq != e.seqs[part] || id != e.id || int(gotPart) != part || int(gotParts) != e.blocks {
				r.add(FileIncomplete, block, expected, fmt.Sprintf("write #%d, part %d/%d of file %d", hdr.seq, gotPart+1, gotParts, id))
			}
		}
	}
}

// checkOverlaps reports live files sharing data blocks.
func (u *uploads) checkOverlaps(files []slottedEntry, r *reporter) {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b slottedEntry) int { return cmp.Compare(a.entry.start, b.entry.start) })
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1].entry, sorted[i].entry
		if int(a.start)+a.blocks > int(b.start) {
			r.add(Malformed, u.dataBlock(b.start, 0), fmt.Sprintf("file %d alone in its blocks", b.id), fmt.Sprintf("file %d's extent overlaps", a.id))
		}
	}
}

// resume continues from the directory found: the ring continues after the
// newest file.
func (u *uploads) resume(recovered any) {
	st := recovered.(uploadsState)
	clear(u.slots)
	u.live = u.live[:0]
	for _, se := range st.files {
		if se.slot >= len(u.slots) || u.slots[se.slot].id != 0 {
			panic(fmt.Sprintf("workload: resuming uploads %s: slot %d", u.h.volumeName, se.slot))
		}
		u.slots[se.slot] = se.entry
		u.live = append(u.live, se.slot)
	}
	slices.SortFunc(u.live, func(a, b int) int { return cmp.Compare(u.slots[a].id, u.slots[b].id) })
	u.head = 0
	if n := len(u.live); n > 0 {
		newest := u.slots[u.live[n-1]]
		u.head = newest.start + uint32(newest.blocks)
	}
}
