package kvcache

import "slices"

// Seq is one request's token sequence and block table in a Cache. The caller
// owns it (one per request) and fills Prompt, Output and Seed; the cache
// maintains the rest.
type Seq struct {
	Prompt []int32 // prompt token ids, shared prefix first
	Output []int32 // ids of generated tokens when known; may be shorter than the output
	Seed   uint64  // seeds SyntheticToken for generated tokens beyond Output

	// ExpectedTokens, if set, sizes the block table and hash list once (a
	// capacity hint, e.g. prompt + declared output budget).
	ExpectedTokens int

	// Known, if set, names the first full blocks (at the cache's block
	// size) in consecutive regions whose tokens a name fixes (a trace's
	// hash ids): their hashes come from the names, and those blocks' ids
	// in Prompt are never read. The cache writes the hashes into its hash
	// list when it first needs a hash, and drops Known.
	Known []Region

	// Private declares that the tokens from position PrivateFrom on (prompt
	// and generated alike) follow this sequence's prefix in no other
	// sequence the cache will see: the block holding that position, and
	// every later block (their hashes chain through it), can be hit by
	// this sequence alone, after a preemption. The cache then neither
	// hashes nor indexes them, keeps no shared state for them, and after
	// Preempt finds them again through notes kept in the sequence
	// (private.go). The caller must only declare what is true: a wrong
	// declaration loses prefix hits another sequence would have had.
	Private     bool
	PrivateFrom int

	blocks []int32 // block table: block i holds tokens [i·b, (i+1)·b)
	nTok   int     // tokens with a slot in blocks
	hashes []Hash  // chained hashes of full blocks, computed lazily; kept across preemption

	notes []note // notes[k]: where private block k went at the latest Preempt that held it full (private.go)
	memo  uint64 // the id of its match memo in a cache (memo.go); 0 = none
	// held is the number of blocks it held at its latest Preempt, whose ids
	// are still in blocks' array until it is admitted again: where each of
	// its hashes probably is (memoExtend checks before it believes).
	held int
}

// Token is the id at position i of the sequence (prompt, then generated).
func (s *Seq) Token(i int) int32 {
	if i < len(s.Prompt) {
		return s.Prompt[i]
	}
	j := i - len(s.Prompt)
	if j < len(s.Output) {
		return s.Output[j]
	}
	return SyntheticToken(s.Seed, j)
}

// Tokens is the number of tokens holding a KV slot.
func (s *Seq) Tokens() int { return s.nTok }

// Blocks is the number of blocks held.
func (s *Seq) Blocks() int { return len(s.blocks) }

// BlockHash returns the chained hash of full block i (tokens [i·b, (i+1)·b)),
// computing missing hashes of earlier blocks on the way. The caller must make
// sure those tokens are known (prompt or already generated).
func (s *Seq) BlockHash(i, blockSize int) Hash {
	if i < len(s.hashes) {
		return s.hashes[i]
	}
	return s.hashTo(i, blockSize)
}

// BlockHashes returns the chained hashes of full blocks [0, n), computing
// the missing ones. The slice is the sequence's own: read it before the
// sequence changes, and do not modify it.
func (s *Seq) BlockHashes(n, blockSize int) []Hash {
	if n > len(s.hashes) {
		s.hashTo(n-1, blockSize)
	}
	return s.hashes[:n]
}

// hashTo extends the hash list through block i.
func (s *Seq) hashTo(i, blockSize int) Hash {
	if want := s.ExpectedTokens / blockSize; cap(s.hashes) < want && i < want {
		s.hashes = append(make([]Hash, 0, want), s.hashes...)
	}
	if len(s.Known) > 0 {
		if len(s.hashes) == 0 {
			for _, r := range s.Known {
				s.hashes = r.Append(s.hashes)
			}
		}
		s.Known = nil
		if i < len(s.hashes) {
			return s.hashes[i]
		}
	}
	var prev Hash
	if k := len(s.hashes); k > 0 {
		prev = s.hashes[k-1]
	}
	for k := len(s.hashes); k <= i; k++ {
		lo := k * blockSize
		if lo+blockSize <= len(s.Prompt) {
			prev = HashBlock(prev, s.Prompt[lo:lo+blockSize])
		} else {
			prev = s.hashGenerated(prev, lo, blockSize)
		}
		s.hashes = append(s.hashes, prev)
	}
	return prev
}

// hashGenerated hashes the block of tokens [lo, lo+blockSize) that reaches
// past the prompt.
func (s *Seq) hashGenerated(prev Hash, lo, blockSize int) Hash {
	j0 := lo - len(s.Prompt)
	if j0 >= len(s.Output) {
		return hashSynthetic(prev, s.Seed, j0, blockSize)
	}
	var buf [64]int32
	var toks []int32
	if blockSize <= len(buf) {
		toks = buf[:blockSize]
	} else {
		toks = make([]int32, blockSize)
	}
	for t := range toks {
		toks[t] = s.Token(lo + t)
	}
	return HashBlock(prev, toks)
}

// Region names the hashes of a run of full blocks whose tokens a name
// fixes: block j's is HashNamed(Prev, Name, j), Prev being the hash of the
// block before the run (the zero Hash at the start). It stands for those
// hashes in 32 bytes, however long the run. The blocks' hashes are chained
// through Prev, not one to the next (equal (Prev, Name, j) still stand for
// equal tokens up to block j's end): they are computed independently, so
// the processor overlaps them instead of waiting on each one's multiplies.
type Region struct {
	Prev   Hash
	Name   uint64
	Blocks int
}

// Append appends the region's hashes to dst.
func (r Region) Append(dst []Hash) []Hash {
	n := len(dst)
	dst = slices.Grow(dst, r.Blocks)[:n+r.Blocks]
	out := dst[n:]
	for j := range out {
		out[j] = HashNamed(r.Prev, r.Name, j)
	}
	return dst
}

// Last is the hash of the region's last block (Prev when it has none).
func (r Region) Last() Hash {
	if r.Blocks == 0 {
		return r.Prev
	}
	return HashNamed(r.Prev, r.Name, r.Blocks-1)
}
