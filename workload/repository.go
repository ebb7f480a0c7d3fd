package workload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// A repository volume, as a git server keeps its repositories, reduced to what
// a fail-over can break:
//
//	block 0                 refs block: each ref names its tip commit object
//	then ObjectBlocks blocks append-only object area
//
// An object is content-addressed: its hash is SHA-256 over its kind and
// content, and every one of its blocks carries that hash, its part and the
// part count. A commit names its parent commit and its blobs (hash and
// location). A push writes the blobs and the commit, Syncs, then rewrites the
// refs block, and Syncs: a ref never leads to an object that is not durable.
const (
	refNameSizeBytes   = 32
	refEntrySize       = 72 // name [32], hash [32], start u32, blocks u16, 2 reserved
	refsHeader         = 8  // u16 count, 6 reserved
	refsPerBlock       = (payloadSizeBytes - refsHeader) / refEntrySize
	objectHeader       = 40 // hash [32], kind u8, 1 reserved, part u16, parts u16, length u16
	objectContentBytes = payloadSizeBytes - objectHeader
	maxBlobBlocks      = 4
	maxBlobsPerCommit  = 3
	objectRefSize      = 40 // hash [32], start u32, blocks u16, 2 reserved

	// commit content
	commitParent  = 0
	commitRef     = objectRefSize
	commitTime    = commitRef + refNameSizeBytes
	commitBlobs   = commitTime + 8 // u16 count, 6 reserved, then the blobs
	commitMessage = commitBlobs + 8 + maxBlobsPerCommit*objectRefSize
	commitSize    = commitMessage + 64
)

// objectKind says what an object is.
type objectKind uint8

const (
	blobObject objectKind = iota + 1
	commitObject
)

func (k objectKind) String() string {
	switch k {
	case blobObject:
		return "blob"
	case commitObject:
		return "commit"
	}
	return fmt.Sprintf("objectKind(%d)", uint8(k))
}

// objectRef locates an object: its hash and its blocks in the object area.
type objectRef struct {
	hash   [sha256.Size]byte
	start  uint32
	blocks int
}

func (o objectRef) isZero() bool { return o.hash == [sha256.Size]byte{} }

func (o objectRef) short() string { return hex.EncodeToString(o.hash[:4]) }

func encodeObjectRef(dst []byte, o objectRef) {
	copy(dst[0:sha256.Size], o.hash[:])
	binary.LittleEndian.PutUint32(dst[32:], o.start)
	binary.LittleEndian.PutUint16(dst[36:], uint16(o.blocks))
}

func decodeObjectRef(src []byte) objectRef {
	var o objectRef
	copy(o.hash[:], src[0:sha256.Size])
	o.start = binary.LittleEndian.Uint32(src[32:])
	o.blocks = int(binary.LittleEndian.Uint16(src[36:]))
	return o
}

// object is an object built in memory before it is written.
type object struct {
	kind    objectKind
	content []byte
	ref     objectRef
}

type repository struct {
	layout RepositoryLayout
	h      *history
	rng    *rand.Rand

	tips []objectRef // per layout.Refs
	head uint32      // the next free block of the object area

	// misorderPush writes the refs block before the objects, a bug the
	// invariant must catch; tests only.
	misorderPush bool
	hashing      []byte // scratch for an object's kind and content
}

func newRepository(workload, volume string, layout RepositoryLayout, rng *rand.Rand) *repository {
	layout.validate()
	return &repository{
		layout: layout,
		h:      newHistory(workload, volume, uint64(1+layout.ObjectBlocks), rng),
		rng:    rng,
		tips:   make([]objectRef, len(layout.Refs)),
	}
}

func (g *repository) spec() VolumeSpec {
	return VolumeSpec{Name: g.h.volumeName, SizeBytes: roundUpToMiB(g.h.sizeBlocks), Files: true}
}

func (g *repository) hist() *history { return g.h }

func (g *repository) objectBlock(start uint32, part int) uint64 {
	return 1 + uint64(start) + uint64(part)
}

// push adds a commit with new blobs on one ref.
func (g *repository) push(now time.Time, dev backend.Device) (string, error) {
	ref := g.rng.IntN(len(g.tips))
	blobs := make([]object, 1+g.rng.IntN(maxBlobsPerCommit))
	total := 1
	for i := range blobs {
		blobs[i] = object{kind: blobObject, ref: objectRef{blocks: 1 + g.rng.IntN(maxBlobBlocks)}}
		total += blobs[i].ref.blocks
	}
	if int(g.head)+total > g.layout.ObjectBlocks {
		return "push " + g.layout.Refs[ref], fmt.Errorf("%w: repository %s has %d free object blocks, a push needs %d",
			ErrVolumeFull, g.h.volumeName, g.layout.ObjectBlocks-int(g.head), total)
	}
	for i := range blobs {
		g.buildBlob(&blobs[i])
	}
	commit := g.buildCommit(now, ref, blobs)
	operation := fmt.Sprintf("push %s: commit %s (%d blobs, %d blocks)", g.layout.Refs[ref], commit.ref.short(), len(blobs), total)
	var err error
	if g.misorderPush {
		err = g.updateRef(now, dev, ref, commit.ref)
	}
	for i := 0; err == nil && i < len(blobs); i++ {
		err = g.writeObject(now, dev, blobs[i])
	}
	if err == nil {
		err = g.writeObject(now, dev, commit)
	}
	if err == nil {
		err = g.h.sync(dev)
	}
	if err == nil && !g.misorderPush {
		err = g.updateRef(now, dev, ref, commit.ref)
	}
	return operation, err
}

// allocate places an object of ref.blocks blocks at the head.
func (g *repository) allocate(o *object) {
	if int(g.head)+o.ref.blocks > g.layout.ObjectBlocks {
		panic("workload: object allocated past the checked free space")
	}
	o.ref.start = g.head
	g.head += uint32(o.ref.blocks)
}

func (g *repository) buildBlob(o *object) {
	length := (o.ref.blocks-1)*objectContentBytes + 1 + g.rng.IntN(objectContentBytes)
	o.content = make([]byte, length)
	fillRandom(o.content, g.rng.Uint64())
	g.allocate(o)
	o.ref.hash = g.hash(o.kind, o.content)
}

func (g *repository) buildCommit(now time.Time, ref int, blobs []object) object {
	o := object{kind: commitObject, content: make([]byte, commitSize), ref: objectRef{blocks: 1}}
	encodeObjectRef(o.content[commitParent:], g.tips[ref])
	copy(o.content[commitRef:commitRef+refNameSizeBytes], g.layout.Refs[ref])
	binary.LittleEndian.PutUint64(o.content[commitTime:], uint64(now.UnixNano()))
	binary.LittleEndian.PutUint16(o.content[commitBlobs:], uint16(len(blobs)))
	for i, blob := range blobs {
		encodeObjectRef(o.content[commitBlobs+8+i*objectRefSize:], blob.ref)
	}
	fillRandom(o.content[commitMessage:], g.rng.Uint64())
	g.allocate(&o)
	o.ref.hash = g.hash(o.kind, o.content)
	return o
}

// hash is the object's content address.
func (g *repository) hash(kind objectKind, content []byte) [sha256.Size]byte {
	g.hashing = append(append(g.hashing[:0], byte(kind)), content...)
	return sha256.Sum256(g.hashing)
}

// writeObject writes an object's blocks, each carrying its hash.
func (g *repository) writeObject(now time.Time, dev backend.Device, o object) error {
	for part := range o.ref.blocks {
		chunk := o.content[part*objectContentBytes : min(len(o.content), (part+1)*objectContentBytes)]
		p := g.h.payload()
		copy(p[0:sha256.Size], o.ref.hash[:])
		p[32] = byte(o.kind)
		binary.LittleEndian.PutUint16(p[34:], uint16(part))
		binary.LittleEndian.PutUint16(p[36:], uint16(o.ref.blocks))
		binary.LittleEndian.PutUint16(p[38:], uint16(len(chunk)))
		copy(p[objectHeader:], chunk)
		if _, err := g.h.write(dev, now, g.objectBlock(o.ref.start, part), KindObject); err != nil {
			return err
		}
	}
	return nil
}

// updateRef points a ref at a commit, writes the refs block, and Syncs.
func (g *repository) updateRef(now time.Time, dev backend.Device, ref int, commit objectRef) error {
	g.tips[ref] = commit
	p := g.h.payload()
	binary.LittleEndian.PutUint16(p[0:], uint16(len(g.tips)))
	for i, tip := range g.tips {
		entry := p[refsHeader+i*refEntrySize:]
		copy(entry[0:refNameSizeBytes], g.layout.Refs[i])
		encodeObjectRef(entry[refNameSizeBytes:], tip)
	}
	if _, err := g.h.write(dev, now, 0, KindRefs); err != nil {
		return err
	}
	return g.h.sync(dev)
}
