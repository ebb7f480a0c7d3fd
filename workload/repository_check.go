package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/baton-dr/baton/storage/backend"
)

// repositoryState is what the refs block holds; Resume continues from it.
type repositoryState struct {
	tips []objectRef // per layout.Refs; zero for a ref never pushed
}

// check reads the refs and walks every object reachable from them, as git fsck
// does: each must be complete, every block carrying its hash, and its content
// must hash to it.
func (g *repository) check(dev backend.Device, _ int, r *reporter) any {
	st := repositoryState{tips: g.readRefs(dev, r)}
	g.walk(dev, st.tips, r)
	return st
}

func (g *repository) readRefs(dev backend.Device, r *reporter) []objectRef {
	tips := make([]objectRef, len(g.layout.Refs))
	_, p, problem := g.h.readApp(dev, 0, KindRefs)
	if problem != "" {
		r.add(Malformed, 0, "the refs block", problem)
		return tips
	}
	if p == nil {
		return tips
	}
	count := int(binary.LittleEndian.Uint16(p[0:]))
	if count != len(g.layout.Refs) {
		r.add(Malformed, 0, fmt.Sprintf("%d refs", len(g.layout.Refs)), fmt.Sprintf("%d refs", count))
		return tips
	}
	for i, name := range g.layout.Refs {
		entry := p[refsHeader+i*refEntrySize:]
		if got := bytes.TrimRight(entry[0:refNameSizeBytes], "\x00"); string(got) != name {
			r.add(Malformed, 0, fmt.Sprintf("ref %q", name), fmt.Sprintf("ref %q", got))
			continue
		}
		tips[i] = decodeObjectRef(entry[refNameSizeBytes:])
	}
	return tips
}

// reachable is an object to visit and who points at it.
type reachable struct {
	ref    objectRef
	kind   objectKind
	parent string // "ref site/main" or "commit 3fa2c1d0 of ref site/main"
	root   string
	at     uint64 // the block that points at it
}

// walk visits every object reachable from the refs once. The walk is bounded
// by the history: no graph of objects this volume wrote is larger.
func (g *repository) walk(dev backend.Device, tips []objectRef, r *reporter) {
	var stack []reachable
	for i := len(tips) - 1; i >= 0; i-- {
		if !tips[i].isZero() {
			name := g.layout.Refs[i]
			stack = append(stack, reachable{ref: tips[i], kind: commitObject, parent: "ref " + name, root: name, at: 0})
		}
	}
	visited := map[[sha256.Size]byte]bool{}
	for steps := 0; len(stack) > 0; steps++ {
		if steps > len(g.h.writes)+len(tips) {
			r.add(Malformed, 0, "an object graph no larger than the history", "more objects reachable than written")
			return
		}
		next := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[next.ref.hash] {
			continue
		}
		visited[next.ref.hash] = true
		content, ok := g.readObject(dev, next, r)
		if ok && next.kind == commitObject {
			stack = g.pushCommitEdges(stack, next, content, r)
		}
	}
}

// pushCommitEdges queues a commit's blobs and parent.
func (g *repository) pushCommitEdges(stack []reachable, commit reachable, content []byte, r *reporter) []reachable {
	from := fmt.Sprintf("commit %s of ref %s", commit.ref.short(), commit.root)
	at := g.objectBlock(commit.ref.start, 0)
	if len(content) != commitSize {
		r.add(Malformed, at, fmt.Sprintf("a commit of %d bytes", commitSize), fmt.Sprintf("%d bytes", len(content)))
		return stack
	}
	count := int(binary.LittleEndian.Uint16(content[commitBlobs:]))
	if count > maxBlobsPerCommit {
		r.add(Malformed, at, fmt.Sprintf("a commit naming at most %d blobs", maxBlobsPerCommit), fmt.Sprintf("%d blobs", count))
		return stack
	}
	if parent := decodeObjectRef(content[commitParent:]); !parent.isZero() {
		stack = append(stack, reachable{ref: parent, kind: commitObject, parent: from, root: commit.root, at: at})
	}
	for i := range count {
		blob := decodeObjectRef(content[commitBlobs+8+i*objectRefSize:])
		stack = append(stack, reachable{ref: blob, kind: blobObject, parent: from, root: commit.root, at: at})
	}
	return stack
}

// readObject reads an object's blocks and checks them and its content hash. It
// returns the content (a scratch buffer the next read reuses).
func (g *repository) readObject(dev backend.Device, o reachable, r *reporter) ([]byte, bool) {
	what := fmt.Sprintf("%s %s (from %s)", o.kind, o.ref.short(), o.parent)
	if o.ref.blocks < 1 || o.ref.blocks > maxBlobBlocks || int(o.ref.start)+o.ref.blocks > g.layout.ObjectBlocks {
		r.add(DanglingRef, o.at, what, fmt.Sprintf("a location of %d blocks at object block %d", o.ref.blocks, o.ref.start))
		return nil, false
	}
	g.hashing = append(g.hashing[:0], byte(o.kind))
	for part := range o.ref.blocks {
		block := g.objectBlock(o.ref.start, part)
		expected := fmt.Sprintf("part %d/%d of %s", part+1, o.ref.blocks, what)
		hdr, p, problem := g.h.readApp(dev, block, KindObject)
		if p == nil {
			r.add(DanglingRef, block, expected, orZeros(problem))
			return nil, false
		}
		found := objectRef{blocks: int(binary.LittleEndian.Uint16(p[36:]))}
		copy(found.hash[:], p[0:sha256.Size])
		length := int(binary.LittleEndian.Uint16(p[38:]))
		if found.hash != o.ref.hash || objectKind(p[32]) != o.kind || int(binary.LittleEndian.Uint16(p[34:])) != part ||
			found.blocks != o.ref.blocks || length > objectContentBytes {
			r.add(DanglingRef, block, expected, fmt.Sprintf("write #%d, part %d/%d of %s %s",
				hdr.seq, binary.LittleEndian.Uint16(p[34:])+1, found.blocks, objectKind(p[32]), found.short()))
			return nil, false
		}
		g.hashing = append(g.hashing, p[objectHeader:objectHeader+length]...)
	}
	if sum := sha256.Sum256(g.hashing); sum != o.ref.hash {
		r.add(DanglingRef, g.objectBlock(o.ref.start, 0), what, fmt.Sprintf("content hashing to %x", sum[:4]))
		return nil, false
	}
	return g.hashing[1:], true
}

func orZeros(problem string) string {
	if problem == "" {
		return "zeros"
	}
	return problem
}

// resume continues from the refs found; the object area continues after the
// last block the cut history wrote there.
func (g *repository) resume(recovered any) {
	st := recovered.(repositoryState)
	if len(st.tips) != len(g.tips) {
		panic(fmt.Sprintf("workload: resuming repository %s with %d refs", g.h.volumeName, len(st.tips)))
	}
	copy(g.tips, st.tips)
	g.head = 0
	if highest := g.h.maxBlockBefore(1, g.h.sizeBlocks); highest >= 1 {
		g.head = uint32(highest) // object block b sits at g.objectBlock(b-1, 0)
	}
}
