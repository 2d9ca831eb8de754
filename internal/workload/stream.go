package workload

import (
	"hash/fnv"
	"math/rand/v2"
)

// pcgIncrement is XORed into the stream seed to form PCG's second seed word,
// so the two words differ even for a zero seed.
const pcgIncrement = 0xda3e39cb94b95bdb

// StreamSeed is the seed of the named random stream (docs/simulator.md §1):
// seed XOR FNV-1a-64(name).
func StreamSeed(seed int64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name)) // never fails
	return uint64(seed) ^ h.Sum64()
}

// NewStream returns the named stream: PCG(s, s XOR 0xda3e39cb94b95bdb) with
// s = StreamSeed(seed, name). Other packages use it for their own streams
// (router, instance_<i>, token-ids) so every stream is derived the same way.
func NewStream(seed int64, name string) *rand.Rand {
	return newRand(StreamSeed(seed, name))
}

// newRand returns a generator seeded from one 64-bit word.
func newRand(s uint64) *rand.Rand {
	return rand.New(rand.NewPCG(s, s^pcgIncrement))
}

// VocabSize is the size of the synthetic vocabulary: token ids are uniform in
// [0, VocabSize).
const VocabSize = 128000

// tokenStream yields the token ids of one request (or session round) from a
// dedicated PCG seeded by a single draw of its owner's stream, so materialising
// ids never disturbs any other draw. Each 64-bit output gives two ids: its low
// 32 bits, then its high 32 bits, each mapped to [0, VocabSize) by the
// multiply-shift x·VocabSize >> 32 (bias below 3e-5, irrelevant here).
//
// Round k's stream first yields its newly sampled input ids, then, for
// accumulating sessions, the ids of its output: output id j of round k is id
// number in_k + j of the stream seeded by that round's token seed. Anyone who
// knows (token seed, in_k) can rebuild the output ids, whatever the count.
type tokenStream struct {
	pcg     rand.PCG
	half    uint32
	hasHalf bool
}

func (t *tokenStream) reset(seed uint64) {
	t.pcg.Seed(seed, seed^pcgIncrement)
	t.hasHalf = false
}

func (t *tokenStream) next() int32 {
	if t.hasHalf {
		t.hasHalf = false
		return int32(uint64(t.half) * VocabSize >> 32)
	}
	x := t.pcg.Uint64()
	t.half = uint32(x >> 32)
	t.hasHalf = true
	return int32(uint64(uint32(x)) * VocabSize >> 32)
}

// fill writes len(dst) ids.
func (t *tokenStream) fill(dst []int32) {
	i := 0
	if t.hasHalf && len(dst) > 0 {
		dst[0] = t.next()
		i = 1
	}
	for ; i+1 < len(dst); i += 2 {
		x := t.pcg.Uint64()
		dst[i] = int32(uint64(uint32(x)) * VocabSize >> 32)
		dst[i+1] = int32(uint64(uint32(x>>32)) * VocabSize >> 32)
	}
	if i < len(dst) {
		dst[i] = t.next()
	}
}

// skip discards n ids.
func (t *tokenStream) skip(n int) {
	if n <= 0 {
		return
	}
	if t.hasHalf {
		t.hasHalf = false
		n--
	}
	for ; n >= 2; n -= 2 {
		t.pcg.Uint64()
	}
	if n == 1 {
		t.next()
	}
}
