package replay

import "servesim/internal/des/kvcache"

// chains computes the KV cache's block hashes of hash-id prompts (Mooncake's
// hash_ids) once per shared piece instead of once per request. A hash id's
// region stands for tokens that depend on the hash id alone
// (tokens.hashBlocks), so its blocks are named by it: block j's hash chains
// the hash before it with (seed, hash id, j) (kvcache.HashNamed) instead of
// hashing the region's drawn ids, which nothing then draws. Only equality
// of hashes matters to the KV cache and its routers, and equal names stand
// for equal ids: the matching is that of the ids' own hashes (a session
// round that resends such a prompt takes its predecessor's pieces:
// tokens.prompt). A region's hashes depend on the hash before it too, so
// (that hash, hash id) names a piece, which every row that holds the same
// leading hash ids shares: a conversation's rounds resend their
// predecessors' hash ids.
//
// Pieces are kept in two generations of at most limit entries each (the
// older one dropped when the newer fills), so memory stays bounded however
// long the trace; a piece dropped while requests hold it lives on in them.
type chains struct {
	block, per int // KV block size; blocks per region (hashTokens / block)
	cur, old   map[chainKey][]kvcache.Hash
	limit      int
	seed       uint64 // tokens' hash-block stream seed
}

type chainKey struct {
	prev kvcache.Hash
	id   int64
}

// chainLimit is the number of pieces in a generation (512 B each at the
// usual 32 blocks of 16 tokens per 512-token region: 2 × 8 MB at most). On
// Mooncake's conversation trace it computes 10% more pieces than the
// distinct ones (8192: 22%; 32768: 2%, for twice the memory).
const chainLimit = 16384

// newChains returns the cache for KV blocks of block tokens and regions of
// hashTokens, or nil when a block would straddle two regions.
func newChains(t *tokens, block int) *chains {
	if block <= 0 || t.hashTokens%block != 0 {
		return nil
	}
	return &chains{block: block, per: t.hashTokens / block, cur: map[chainKey][]kvcache.Hash{},
		limit: chainLimit, seed: t.hashSeed}
}

// piece returns the chained hashes of the full blocks of hash id's region
// when the hash before it is prev (the zero Hash for the first region).
func (c *chains) piece(prev kvcache.Hash, id int64) []kvcache.Hash {
	k := chainKey{prev, id}
	if p, ok := c.cur[k]; ok {
		return p
	}
	p, ok := c.old[k]
	if !ok {
		p = make([]kvcache.Hash, c.per)
		h, name := prev, c.seed^uint64(id)
		for j := range p {
			h = kvcache.HashNamed(h, name, j)
			p[j] = h
		}
	}
	if len(c.cur) >= c.limit {
		c.old, c.cur = c.cur, make(map[chainKey][]kvcache.Hash, c.limit)
	}
	c.cur[k] = p
	return p
}

// known appends to dst the pieces of the full blocks the first n prompt
// tokens of a row with these hash ids hold (tokens.hashBlocks' layout),
// and returns them with the number of blocks they cover.
func (c *chains) known(dst [][]kvcache.Hash, hashes []int64, n, hashTokens int) ([][]kvcache.Hash, int) {
	var prev kvcache.Hash
	blocks := 0
	for i, h := range hashes {
		lo := i * hashTokens
		if lo >= n {
			break
		}
		m := min(c.per, (n-lo)/c.block) // full blocks of the region inside the prompt
		if m == 0 {
			break
		}
		p := c.piece(prev, h)
		dst = append(dst, p[:m])
		blocks += m
		if m < c.per {
			break
		}
		prev = p[m-1]
	}
	return dst, blocks
}
