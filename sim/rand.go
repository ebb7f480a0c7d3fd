package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// Rand returns the random stream of the given name: a PCG generator seeded from
// SHA-256(domain, seed, name). Streams are independent, so a component that
// starts drawing from its own stream never shifts the numbers of another, and a
// replay stays a replay when consumers are added. Repeated calls with one name
// return the same generator, which continues where it left off.
func (w *World) Rand(stream string) *rand.Rand {
	if r, ok := w.streams[stream]; ok {
		return r
	}
	if stream == "" {
		panic("sim: a random stream needs a name")
	}
	r := rand.New(rand.NewPCG(streamSeeds(w.seed, stream)))
	w.streams[stream] = r
	return r
}

// streamSeeds derives PCG's two seed words from the world's seed and a stream's
// name. The domain prefix keeps these digests distinct from any other SHA-256
// of the same bytes.
func streamSeeds(seed uint64, stream string) (uint64, uint64) {
	input := make([]byte, 0, 32+len(stream))
	input = append(input, "baton/sim/rand\x00"...)
	input = binary.BigEndian.AppendUint64(input, seed)
	input = append(input, stream...)
	sum := sha256.Sum256(input)
	return binary.BigEndian.Uint64(sum[0:8]), binary.BigEndian.Uint64(sum[8:16])
}
