package zfs

import (
	"fmt"
	"sort"
)

// Verify recomputes the pool's bookkeeping from its trees and compares: every
// reference count, the live bytes, each volume's unique and cached bytes,
// clone counts, snapshot order and block sizes. It is the simulation's own
// checker, for tests and for the world's invariant sweeps; an error means the
// simulation, not its user, is broken.
func (p *Pool) Verify() error {
	nodeRefs := map[*node]uint32{}
	blockRefs := map[*block]uint32{}
	clones := map[*snapshot]int{}
	var liveBytes uint64
	var count func(n *node, level int, blockSizeBytes uint64) error
	count = func(n *node, level int, blockSizeBytes uint64) error {
		nodeRefs[n]++
		if nodeRefs[n] > 1 {
			return nil // its children were counted on the first visit
		}
		for slot := 0; slot < fanout; slot++ {
			if level > 0 {
				if c := n.children[slot]; c != nil {
					if err := count(c, level-1, blockSizeBytes); err != nil {
						return err
					}
				}
				continue
			}
			if b := n.blocks[slot]; b != nil {
				if uint64(len(b.data)) != blockSizeBytes {
					return fmt.Errorf("a block of %d bytes in a volume of %d-byte blocks", len(b.data), blockSizeBytes)
				}
				if blockRefs[b] == 0 {
					liveBytes += blockSizeBytes
				}
				blockRefs[b]++
			}
		}
		return nil
	}
	for _, v := range p.sortedVolumes() {
		roots := []*node{v.head}
		for _, s := range v.snapshots {
			roots = append(roots, s.root)
		}
		for _, root := range roots {
			if root != nil {
				if err := count(root, topLevel, v.blockSizeBytes); err != nil {
					return fmt.Errorf("volume %s: %w", v.name, err)
				}
			}
		}
		if v.origin != nil {
			clones[v.origin]++
		}
	}
	if err := compareRefs(nodeRefs, blockRefs); err != nil {
		return err
	}
	if liveBytes != p.liveBytes {
		return fmt.Errorf("live bytes %d, recounted %d", p.liveBytes, liveBytes)
	}
	for _, v := range p.sortedVolumes() {
		if err := v.verify(clones); err != nil {
			return fmt.Errorf("volume %s: %w", v.name, err)
		}
	}
	return nil
}

func compareRefs(nodeRefs map[*node]uint32, blockRefs map[*block]uint32) error {
	var problems []string
	for n, refs := range nodeRefs {
		if n.refs != refs {
			problems = append(problems, fmt.Sprintf("a node counts %d references, the trees hold %d", n.refs, refs))
		}
	}
	for b, refs := range blockRefs {
		if b.refs != refs {
			problems = append(problems, fmt.Sprintf("a block counts %d references, the trees hold %d", b.refs, refs))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%d reference counts are wrong, e.g. %s", len(problems), problems[0])
	}
	return nil
}

func (v *volume) verify(clones map[*snapshot]int) error {
	if unique := uniqueBytes(v.head, topLevel); unique != v.uniqueBytes {
		return fmt.Errorf("unique bytes %d, recounted %d", v.uniqueBytes, unique)
	}
	if extra := v.pendingExtraFor(v.head); extra != v.pendingExtraBytes {
		return fmt.Errorf("cached extra bytes %d, recounted %d", v.pendingExtraBytes, extra)
	}
	if v.sizeBytes%v.blockSizeBytes != 0 {
		return fmt.Errorf("size %d is not a multiple of the block size %d", v.sizeBytes, v.blockSizeBytes)
	}
	for i, s := range v.snapshots {
		if s.volume != v || (i > 0 && v.snapshots[i-1].createTxg >= s.createTxg) {
			return fmt.Errorf("snapshot %s is out of place", s.name)
		}
		if s.clones != clones[s] {
			return fmt.Errorf("snapshot %s counts %d clones, the pool holds %d", s.name, s.clones, clones[s])
		}
	}
	for index, b := range v.pending {
		if b.refs != 0 || uint64(len(b.data)) != v.blockSizeBytes || index >= v.sizeBytes/v.blockSizeBytes {
			return fmt.Errorf("cached block %d is malformed", index)
		}
	}
	return nil
}
