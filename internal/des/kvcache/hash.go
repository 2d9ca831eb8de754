package kvcache

import "math/bits"

// Hash is a 128-bit chained block hash.
type Hash struct{ Lo, Hi uint64 }

const (
	c0 = 0x9E3779B97F4A7C15
	c1 = 0xC2B2AE3D27D4EB4F
	c2 = 0x165667B19E3779F9
	c3 = 0xD6E8FEB86659FD93
	c4 = 0xA0761D6478BD642F
)

// mum multiplies to 128 bits and folds the halves: a cheap, well-mixing step.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// HashBlock returns h_i = H(h_{i−1}, tokens of block i); pass the zero Hash
// as prev for the first block. Tokens are consumed four per round as two
// 64-bit words, multiplied against each other after mixing with the two
// 64-bit lanes (one 64×64→128-bit product per 16 bytes); the lanes swap and
// rotate every round, and a final pair of products spreads every input bit
// over all 128 output bits.
func HashBlock(prev Hash, tokens []int32) Hash {
	if len(tokens) == 16 {
		return hash16(prev, (*[16]int32)(tokens))
	}
	a := prev.Lo ^ c0
	b := prev.Hi ^ c1
	i := 0
	for ; i+3 < len(tokens); i += 4 {
		w0 := uint64(uint32(tokens[i])) | uint64(uint32(tokens[i+1]))<<32
		w1 := uint64(uint32(tokens[i+2])) | uint64(uint32(tokens[i+3]))<<32
		x := mum(w0^a^c2, w1^b^c3)
		a, b = b+x, bits.RotateLeft64(a, 29)^x
	}
	if i < len(tokens) {
		var w [2]uint64
		for k := 0; i+k < len(tokens); k++ {
			w[k/2] |= uint64(uint32(tokens[i+k])) << (32 * (k % 2))
		}
		x := mum(w[0]^a^c2, w[1]^b^c3^1)
		a, b = b+x, bits.RotateLeft64(a, 29)^x
	}
	return finish(a, b, uint64(len(tokens)))
}

// hash16 is HashBlock for the usual 16-token block, unrolled: the same
// rounds without the loop's bounds checks and branches.
func hash16(prev Hash, t *[16]int32) Hash {
	a := prev.Lo ^ c0
	b := prev.Hi ^ c1
	round := func(i int) {
		w0 := uint64(uint32(t[i])) | uint64(uint32(t[i+1]))<<32
		w1 := uint64(uint32(t[i+2])) | uint64(uint32(t[i+3]))<<32
		x := mum(w0^a^c2, w1^b^c3)
		a, b = b+x, bits.RotateLeft64(a, 29)^x
	}
	round(0)
	round(4)
	round(8)
	round(12)
	return finish(a, b, 16)
}

// hashSynthetic is HashBlock(prev, tokens) for the n synthetic generated
// tokens j0, j0+1, … of a request with the given seed, without writing them
// out (most generated blocks of a simulation are of this kind).
func hashSynthetic(prev Hash, seed uint64, j0, n int) Hash {
	a := prev.Lo ^ c0
	b := prev.Hi ^ c1
	tok := func(j int) uint64 { return uint64(uint32(SyntheticToken(seed, j))) }
	i := 0
	for ; i+3 < n; i += 4 {
		j := j0 + i
		w0 := tok(j) | tok(j+1)<<32
		w1 := tok(j+2) | tok(j+3)<<32
		x := mum(w0^a^c2, w1^b^c3)
		a, b = b+x, bits.RotateLeft64(a, 29)^x
	}
	if i < n {
		var w [2]uint64
		for k := 0; i+k < n; k++ {
			w[k/2] |= tok(j0+i+k) << (32 * (k % 2))
		}
		x := mum(w[0]^a^c2, w[1]^b^c3^1)
		a, b = b+x, bits.RotateLeft64(a, 29)^x
	}
	return finish(a, b, uint64(n))
}

// namedFinal tells a named block's hash (HashNamed) from any block's of
// tokens, whose finish takes the token count: no block holds 2⁶³ tokens.
const namedFinal = 1 << 63

// HashNamed returns the hash of a block known by a name rather than by its
// tokens: block j of a region whose every token the name fixes (a trace's
// hash id, with the run's seed), after the block whose hash is prev. Such
// blocks are only ever compared for equality, and equal (prev, name, j)
// stand for equal tokens, so it gives the KV cache the matching structure
// of hashing those tokens, in one round instead of four and without
// drawing them. Its final step differs
// from HashBlock's, so the two kinds meet, as two different (prev, name, j)
// do, only by a 128-bit collision.
func HashNamed(prev Hash, name uint64, j int) Hash {
	a := prev.Lo ^ c0
	b := prev.Hi ^ c1
	x := mum(name^a^c2, uint64(j)^b^c3)
	a, b = b+x, bits.RotateLeft64(a, 29)^x
	return finish(a, b, namedFinal)
}

// finish spreads the lanes over all 128 output bits.
func finish(a, b, n uint64) Hash {
	lo := mum(a^n^c1, b^c4)
	hi := mum(b^c0, lo^c3) ^ a
	return Hash{Lo: lo, Hi: hi}
}

// SyntheticToken is the id of generated token j of a request whose output ids
// were not given, derived from the request's seed (deterministic, 31 bits).
func SyntheticToken(seed uint64, j int) int32 {
	return int32(mum(seed^c0, uint64(j)*c2+c3) & 0x7fffffff)
}
