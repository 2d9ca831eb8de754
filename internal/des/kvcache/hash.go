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
// as prev for the first block. Tokens are consumed two per 64-bit word; each
// word feeds both lanes, and each lane also absorbs the other, so every input
// bit reaches all 128 output bits.
func HashBlock(prev Hash, tokens []int32) Hash {
	a := prev.Lo ^ c0
	b := prev.Hi ^ c1
	i := 0
	for ; i+1 < len(tokens); i += 2 {
		w := uint64(uint32(tokens[i])) | uint64(uint32(tokens[i+1]))<<32
		a = mum(a^w, c2) + bits.RotateLeft64(b, 23)
		b = mum(b^w^c4, c3) + bits.RotateLeft64(a, 41)
	}
	if i < len(tokens) {
		w := uint64(uint32(tokens[i])) | 1<<63
		a = mum(a^w, c2) + bits.RotateLeft64(b, 23)
		b = mum(b^w^c4, c3) + bits.RotateLeft64(a, 41)
	}
	n := uint64(len(tokens))
	lo := mum(a^n^c1, c4) ^ b
	hi := mum(b^c0, a^c3) ^ lo
	return Hash{Lo: lo, Hi: hi}
}

// SyntheticToken is the id of generated token j of a request whose output ids
// were not given, derived from the request's seed (deterministic, 31 bits).
func SyntheticToken(seed uint64, j int) int32 {
	return int32(mum(seed^c0, uint64(j)*c2+c3) & 0x7fffffff)
}
