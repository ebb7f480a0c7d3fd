package zfs

import "fmt"

// The block-pointer tree: nine levels of 64 slots address 2^54 blocks, enough
// for the largest volume the pool accepts (maxVolumeSizeBytes at 512-byte
// blocks). A fixed height keeps every tree comparable slot by slot, so two
// trees of different volume sizes diff without lifting one onto the other; a
// sparse volume pays for it with a few single-child nodes at the top.
const (
	fanoutBits = 6
	fanout     = 1 << fanoutBits
	treeLevels = 9
	topLevel   = treeLevels - 1
	// maxBlocks bounds a block index: indexes are below it.
	maxBlocks = uint64(1) << (fanoutBits * treeLevels)
)

// block is one volblocksize of data. Once a tree references it, it never
// changes: copy-on-write replaces it instead.
type block struct {
	refs uint32 // leaf slots that point here
	data []byte
}

// node is one indirect block. Leaves (level 0) hold block pointers; interior
// nodes hold child pointers. refs counts the parents and roots (volume heads,
// snapshots) that point here: a node with refs > 1 is shared and is copied
// before it is changed.
type node struct {
	refs     uint32
	children []*node
	blocks   []*block
}

func newNode(level int) *node {
	if level == 0 {
		return &node{refs: 1, blocks: make([]*block, fanout)}
	}
	return &node{refs: 1, children: make([]*node, fanout)}
}

// slotAt is the slot that holds a block index at a level.
func slotAt(index uint64, level int) int {
	return int(index>>(fanoutBits*uint(level))) & (fanout - 1)
}

func (n *node) child(slot int) *node {
	if n == nil {
		return nil
	}
	return n.children[slot]
}

func (n *node) leafBlock(slot int) *block {
	if n == nil {
		return nil
	}
	return n.blocks[slot]
}

// lookup returns the block at an index, nil when it was never written.
func lookup(root *node, index uint64) *block {
	if index >= maxBlocks {
		panic(fmt.Sprintf("zfs: block index %d beyond the tree", index))
	}
	n := root
	for level := topLevel; level > 0 && n != nil; level-- {
		n = n.children[slotAt(index, level)]
	}
	return n.leafBlock(slotAt(index, 0))
}

// exclusive reports whether overwriting the block at an index frees the old
// block: the whole path and the block are referenced by this root alone. An
// unwritten index is not exclusive, since writing it takes a new block.
func exclusive(root *node, index uint64) bool {
	n := root
	for level := topLevel; level >= 0; level-- {
		if n == nil || n.refs != 1 {
			return false
		}
		if level == 0 {
			b := n.blocks[slotAt(index, 0)]
			return b != nil && b.refs == 1
		}
		n = n.children[slotAt(index, level)]
	}
	panic("zfs: unreachable")
}

// uniqueBytes counts the bytes of the blocks only this root references: the
// nodes reached through unshared nodes, and of their blocks the unshared ones.
func uniqueBytes(n *node, level int) uint64 {
	if n == nil || n.refs != 1 {
		return 0
	}
	var total uint64
	for slot := 0; slot < fanout; slot++ {
		if level == 0 {
			if b := n.blocks[slot]; b != nil && b.refs == 1 {
				total += uint64(len(b.data))
			}
			continue
		}
		total += uniqueBytes(n.children[slot], level-1)
	}
	return total
}

// diff calls emit, in index order, for every block of "to" that "from" does not
// hold at the same index by identity. Subtrees the two trees share are
// skipped, so the cost follows the changed paths, not the volume. The trees
// must be of one lineage ("from" older): a block present in "from" and absent
// in "to" breaks that, as nothing in a pool ever unwrites a block.
func diff(from, to *node, level int, firstIndex uint64, emit func(index uint64, b *block)) {
	if from == to {
		return
	}
	for slot := 0; slot < fanout; slot++ {
		index := firstIndex + uint64(slot)<<(fanoutBits*uint(level))
		if level > 0 {
			diff(from.child(slot), to.child(slot), level-1, index, emit)
			continue
		}
		old, cur := from.leafBlock(slot), to.leafBlock(slot)
		if old == cur {
			continue
		}
		if cur == nil {
			panic(fmt.Sprintf("zfs: block %d written in the older tree and absent in the newer", index))
		}
		emit(index, cur)
	}
}

// The reference counting below is the pool's: freeing a block gives its bytes
// back to the pool.

func (p *Pool) retainNode(n *node) {
	if n != nil {
		n.refs++
	}
}

// releaseNode drops one reference and frees what only it held.
func (p *Pool) releaseNode(n *node) {
	if n == nil {
		return
	}
	if n.refs == 0 {
		panic("zfs: releasing a free node")
	}
	n.refs--
	if n.refs > 0 {
		return
	}
	for slot := 0; slot < fanout; slot++ {
		if n.blocks != nil {
			if b := n.blocks[slot]; b != nil {
				p.releaseBlock(b)
			}
			continue
		}
		p.releaseNode(n.children[slot])
	}
}

func (p *Pool) retainBlock(b *block) {
	if b.refs == 0 {
		p.liveBytes += uint64(len(b.data))
	}
	b.refs++
}

// releaseBlock drops one reference and reports whether the block was freed.
func (p *Pool) releaseBlock(b *block) bool {
	if b.refs == 0 || p.liveBytes < uint64(len(b.data)) {
		panic("zfs: releasing a free block")
	}
	b.refs--
	if b.refs > 0 {
		return false
	}
	p.liveBytes -= uint64(len(b.data))
	return true
}

// copyNode makes an unshared copy of a shared node for the one root that
// writes through it; the copy references every child the original did.
func (p *Pool) copyNode(n *node, level int) *node {
	c := newNode(level)
	for slot := 0; slot < fanout; slot++ {
		if level == 0 {
			if b := n.blocks[slot]; b != nil {
				p.retainBlock(b)
				c.blocks[slot] = b
			}
			continue
		}
		if ch := n.children[slot]; ch != nil {
			p.retainNode(ch)
			c.children[slot] = ch
		}
	}
	return c
}

// setBlock points the index at b in the tree rooted at *root, copying every
// shared node on the way down, and reports whether the block it replaced was
// freed (it was unique to this root). b must be new to every tree.
func (p *Pool) setBlock(root **node, index uint64, b *block) bool {
	if b.refs != 0 || index >= maxBlocks {
		panic("zfs: setBlock takes a fresh block within the tree")
	}
	slot := root
	for level := topLevel; ; level-- {
		n := *slot
		switch {
		case n == nil:
			n = newNode(level)
			*slot = n
		case n.refs > 1:
			c := p.copyNode(n, level)
			n.refs-- // this root now reaches the copy instead
			*slot = c
			n = c
		}
		if level == 0 {
			i := slotAt(index, 0)
			old := n.blocks[i]
			p.retainBlock(b)
			n.blocks[i] = b
			return old != nil && p.releaseBlock(old)
		}
		slot = &n.children[slotAt(index, level)]
	}
}
