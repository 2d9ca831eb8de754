package replay

import "servesim/internal/des/kvcache"

// chains names the KV cache's blocks of hash-id prompts (Mooncake's
// hash_ids). A hash id's region stands for tokens that depend on the hash
// id alone (tokens.hashBlocks), so its blocks are named by it: block j's
// hash is that of (the hash before the region, seed, hash id, j)
// (kvcache.Region, kvcache.HashNamed) instead of the hash of the region's
// drawn ids, which nothing then draws. Only equality of hashes matters to
// the KV cache and its routers, and equal names stand for equal ids: the
// matching is that of the ids' own hashes (a session round that resends
// such a prompt takes its predecessor's regions: tokens.prompt). A row's
// prefix is a few regions of 32 bytes, whose hashes the KV cache computes
// when it needs them, a few ns a block: no hash list is kept or shared per
// prefix (a cache of them, keyed by the hash before a region and its id,
// cost more in lookups and garbage than computing them).
type chains struct {
	block, per int    // KV block size; blocks per region (hashTokens / block)
	seed       uint64 // tokens' hash-block stream seed
}

// newChains returns the namer for KV blocks of block tokens and regions of
// hashTokens, or nil when a block would straddle two regions.
func newChains(t *tokens, block int) *chains {
	if block <= 0 || t.hashTokens%block != 0 {
		return nil
	}
	return &chains{block: block, per: t.hashTokens / block, seed: t.hashSeed}
}

// known appends to dst the regions of the full blocks the first n prompt
// tokens of a row with these hash ids hold (tokens.hashBlocks' layout),
// and returns them with the number of blocks they cover.
func (c *chains) known(dst []kvcache.Region, hashes []int64, n, hashTokens int) ([]kvcache.Region, int) {
	if dst == nil { // a row's own list (read ahead): no room to spare
		dst = make([]kvcache.Region, 0, min(len(hashes), (n+hashTokens-1)/hashTokens))
	}
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
		r := kvcache.Region{Prev: prev, Name: c.seed ^ uint64(h), Blocks: m}
		dst = append(dst, r)
		blocks += m
		if m < c.per {
			break
		}
		prev = r.Last()
	}
	return dst, blocks
}
