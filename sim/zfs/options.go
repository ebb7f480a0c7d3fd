package zfs

import (
	"fmt"
	"hash/fnv"
)

// DefaultBlockSizeBytes is the default volblocksize of ZFS 2.1 zvols.
const DefaultBlockSizeBytes = 8 << 10

// The block sizes ZFS accepts for a zvol without the large_blocks feature.
const (
	minBlockSizeBytes = 512
	maxBlockSizeBytes = 128 << 10
)

// Options configure a simulated pool.
type Options struct {
	// Name is the pool's name as zfs prints it in messages ("tank").
	Name string
	// SizeBytes is the capacity that blocks and reservations may use.
	SizeBytes uint64
	// BlockSizeBytes is the volblocksize of volumes the pool creates: a power of
	// two from 512 to 128 KiB; zero means DefaultBlockSizeBytes.
	BlockSizeBytes uint64
	// Seed makes snapshot GUIDs deterministic. Pools that exchange streams must
	// not draw the same GUIDs: give each pool its own seed (the pool name is
	// mixed in, but every node's pool is usually called "tank").
	Seed uint64
	// GUIDs, when set, draws snapshot GUIDs instead of the seeded generator.
	// It must return nonzero values; a value already in the pool is drawn again.
	GUIDs func() uint64
}

// withDefaults fills the zero values and panics on options no pool can have:
// a misconfigured simulation is a programmer's error, not an operating one.
func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "tank"
	}
	if o.BlockSizeBytes == 0 {
		o.BlockSizeBytes = DefaultBlockSizeBytes
	}
	if !validBlockSize(o.BlockSizeBytes) {
		panic(fmt.Sprintf("zfs: block size %d is not a power of two from %d to %d",
			o.BlockSizeBytes, minBlockSizeBytes, maxBlockSizeBytes))
	}
	if why, ok := checkComponent(o.Name); !ok {
		panic(fmt.Sprintf("zfs: pool name %q: %s", o.Name, why))
	}
	if o.GUIDs == nil {
		o.GUIDs = seededGUIDs(o.Seed, o.Name)
	}
	return o
}

func validBlockSize(sizeBytes uint64) bool {
	return sizeBytes >= minBlockSizeBytes && sizeBytes <= maxBlockSizeBytes && sizeBytes&(sizeBytes-1) == 0
}

// seededGUIDs is a splitmix64 sequence: small, fast, and every seed gives a
// full-period stream of well-mixed 64-bit values.
func seededGUIDs(seed uint64, name string) func() uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	state := seed ^ h.Sum64()
	return func() uint64 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
}
