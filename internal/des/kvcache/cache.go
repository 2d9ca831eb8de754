package kvcache

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Config sizes a cache. Blocks and BlockSize must be positive.
type Config struct {
	Blocks    int // T: GPU blocks
	BlockSize int // b: tokens per block

	CPUBlocks            int     // C: CPU tier capacity in blocks; 0 = tier off
	CPUBandwidthTokensUs float64 // reload bandwidth in tokens/µs; 0 = default 100
	CPUBaseLatencyUs     int64   // fixed reload cost per block in µs
	// CPUOffloadThreshold is the GPU utilisation (used / T) above which
	// full blocks are copied to the CPU tier after a step (BLIS's
	// --kv-offload-threshold); 0 copies after every step, as vLLM's
	// offload connector does.
	CPUOffloadThreshold float64

	// NoPrefixCaching turns prefix caching off (vLLM's
	// --no-enable-prefix-caching): Match finds nothing, so every
	// admission computes its whole prompt, and Contains is false.
	NoPrefixCaching bool

	Pool *Pool // buffers shared with other caches; nil = the cache's own
}

// block is the state of a block that is not private (private blocks keep
// theirs in the free ring and their sequence's block table).
type block struct {
	ref     int32
	fpos    uint32 // ring position of its live free-list entry (free.go)
	inFree  bool
	hashed  bool
	indexed bool // its hash's index entry points at it
	inMemo  bool // in the match memo (memo.go), at memoPos
}

// Stats are the cache's counters since creation.
type Stats struct {
	Hits          int64 // matched blocks used by admissions (GPU or CPU tier)
	Misses        int64 // blocks filled by computation
	AllocFailures int64 // allocations refused for lack of blocks
	Evictions     int64 // hashed free blocks reused (their hash dropped)
	CPUMirrored   int64 // blocks newly copied to the CPU tier
	CPUEvictions  int64 // CPU tier entries evicted
	CPUReloads    int64 // blocks reloaded from the CPU tier
	// CPUThrashing counts reloads of a block within ThrashWindowUs of
	// its copy to the CPU tier: memory too tight to keep what it offloads.
	CPUThrashing int64
	CPUReloadUs  int64 // Σ reload cost of the reloaded blocks (µs)
}

// ThrashWindowUs is the window within which a block's reload after its
// offload counts as thrashing (Stats.CPUThrashing).
const ThrashWindowUs = 1000

// Cache is a paged KV cache. It is not safe for concurrent use.
type Cache struct {
	b, t   int
	shift  int // log2(b) when b is a power of two, else -1
	blocks []block
	hashes []Hash // hashes[i]: block i's hash while blocks[i].hashed; apart, so the
	// per-block state that every release and eviction touches is 12 bytes
	serial     uint64   // blocks released so far (free.go)
	popped     uint64   // serial of the last entry taken from the free head
	taken      uint64   // ring position of the private entry taken last (takePrivate)
	privHeld   int      // private blocks held by sequences
	ring       freeRing // free list: its head is evicted first
	free       int
	index      hashIndex
	stats      Stats
	cpu        *cpuTier
	reloadCost int64 // µs per reloaded block
	offloadAt  float64
	now        int64 // time of the current operation (SetNow), for the CPU tier
	noPrefix   bool  // Config.NoPrefixCaching

	pool *Pool // block tables and hash lists of finished sequences (Recycle)

	sink int32 // keeps prefetch loads alive

	journalOn bool
	journal   []IndexChange

	memo       matchMemo // memo.go
	memoSerial uint64
	memoPos    []int32 // place of a memo block in memo.found
}

// IndexChange is one change of the prefix index's membership: Hash became
// findable (Added) or stopped being findable.
type IndexChange struct {
	Hash  Hash
	Added bool
}

// EnableJournal starts recording every change of the prefix index's
// membership, for a router that keeps a delayed copy of it (DrainJournal).
func (c *Cache) EnableJournal() { c.journalOn = true }

// DrainJournal hands out the changes recorded since the last call, in
// order, and forgets them. Applied in order to a set of hashes that held
// the index's members at the previous call, they leave exactly the hashes
// Contains reports now.
func (c *Cache) DrainJournal(fn func(IndexChange)) {
	for _, ch := range c.journal {
		fn(ch)
	}
	c.journal = c.journal[:0]
}

// Recycle hands a released sequence's buffers back to the pool for reuse
// by later sequences and clears s. s must hold no blocks.
func (c *Cache) Recycle(s *Seq) {
	if len(s.blocks) != 0 {
		panic("kvcache: Recycle of a sequence that holds blocks")
	}
	c.pool.put(s)
}

// New validates cfg and returns an empty cache with every block free.
func New(cfg Config) (*Cache, error) {
	if cfg.Blocks <= 0 || cfg.Blocks > maxBlocks {
		return nil, fmt.Errorf("kvcache: total blocks %d must be in 1..%d", cfg.Blocks, maxBlocks)
	}
	if cfg.BlockSize <= 0 {
		return nil, fmt.Errorf("kvcache: block size %d must be positive", cfg.BlockSize)
	}
	if cfg.CPUBlocks < 0 || cfg.CPUBandwidthTokensUs < 0 || cfg.CPUBaseLatencyUs < 0 {
		return nil, errors.New("kvcache: CPU tier blocks, bandwidth and base latency must not be negative")
	}
	if !(cfg.CPUOffloadThreshold >= 0 && cfg.CPUOffloadThreshold <= 1) {
		return nil, fmt.Errorf("kvcache: CPU offload threshold %g outside [0, 1]", cfg.CPUOffloadThreshold)
	}
	c := &Cache{b: cfg.BlockSize, t: cfg.Blocks, blocks: make([]block, cfg.Blocks), hashes: make([]Hash, cfg.Blocks),
		ring: newFreeRing(cfg.Blocks), index: newHashIndex(cfg.Blocks), shift: -1, noPrefix: cfg.NoPrefixCaching,
		memoPos: make([]int32, cfg.Blocks)}
	if c.pool = cfg.Pool; c.pool == nil {
		c.pool = NewPool()
	}
	if b := cfg.BlockSize; b&(b-1) == 0 {
		c.shift = bits.TrailingZeros(uint(b))
	}
	for i := range c.blocks {
		c.pushTail(int32(i), 0)
	}
	if cfg.CPUBlocks > 0 {
		bw := cfg.CPUBandwidthTokensUs
		if bw == 0 {
			bw = 100
		}
		c.cpu = newCPUTier(cfg.CPUBlocks)
		c.offloadAt = cfg.CPUOffloadThreshold
		c.reloadCost = cfg.CPUBaseLatencyUs + int64(math.Ceil(float64(cfg.BlockSize)/bw))
	}
	return c, nil
}

// div is n / b for n ≥ 0; a shift for the usual power-of-two block sizes
// (a division by a variable is tens of cycles on the allocation path).
func (c *Cache) div(n int) int {
	if c.shift >= 0 {
		return n >> c.shift
	}
	return n / c.b
}

// blocksFor is ⌈n / b⌉ for n ≥ 0.
func (c *Cache) blocksFor(n int) int { return c.div(n + c.b - 1) }

// Pool is the pool the cache recycles sequences' buffers into.
func (c *Cache) Pool() *Pool { return c.pool }

// BlockSize is b.
func (c *Cache) BlockSize() int { return c.b }

// TotalBlocks is T.
func (c *Cache) TotalBlocks() int { return c.t }

// FreeBlocks is the number of blocks with reference count 0.
func (c *Cache) FreeBlocks() int { return c.free }

// UsedBlocks is T − free.
func (c *Cache) UsedBlocks() int { return c.t - c.free }

// Utilization is (T − free) / T.
func (c *Cache) Utilization() float64 { return float64(c.t-c.free) / float64(c.t) }

// Stats returns the counters.
func (c *Cache) Stats() Stats { return c.stats }

// HitRate is hits / (hits + misses), 0 before any block was counted.
func (c *Cache) HitRate() float64 {
	d := c.stats.Hits + c.stats.Misses
	if d == 0 {
		return 0
	}
	return float64(c.stats.Hits) / float64(d)
}

// CPUEnabled reports whether the CPU tier is on.
func (c *Cache) CPUEnabled() bool { return c.cpu != nil }

// Contains reports whether a block with hash h is in the GPU prefix index.
func (c *Cache) Contains(h Hash) bool {
	if c.noPrefix {
		return false
	}
	_, ok := c.lookup(h)
	return ok
}

// setFull records that block k of s, in block i, is full: hash and index it
// (register) unless it is private; count a miss when it was computed.
func (c *Cache) setFull(s *Seq, k int, i int32, computed bool) {
	if computed {
		c.stats.Misses++
	}
	if k >= c.privateBlock(s) {
		return // its release will say it is full (Release)
	}
	bl := &c.blocks[i]
	bl.hashed, bl.indexed = true, false
	h := s.BlockHash(k, c.b)
	c.hashes[i] = h
	c.register(h, i)
}

// Match counts the leading full blocks of s's first target tokens that are
// cached: gpu in the GPU index, then cpu consecutive ones in the CPU tier.
// It changes nothing (hashes of s are computed and kept in s).
func (c *Cache) Match(s *Seq, target int) (gpu, cpu int) {
	c.pool.Prepare(s)
	if c.noPrefix {
		return 0, 0
	}
	full := c.div(target)
	k := 0
	if shared := min(full, c.privateBlock(s)); shared > 0 {
		c.memoFor(s)
		c.memoExtend(shared)
		k = min(len(c.memo.found), shared)
	}
	if k < full && k >= c.privateBlock(s) {
		k += c.privateRun(s, k, full)
	}
	gpu = k
	if c.cpu != nil {
		for k < full && c.cpu.has(s.BlockHash(k, c.b)) {
			k++
		}
	}
	return gpu, k - gpu
}

// Admit allocates for a request entering the running batch with no blocks:
// its first c tokens (a multiple of b, at most b × (gpu+cpu) of Match) come
// from the prefix cache (GPU blocks pinned, CPU blocks reloaded into fresh GPU
// blocks), then n new tokens [c, c+n) get blocks. All or nothing: on failure
// nothing changes and ok is false. reloadUs is the CPU reload cost to add to
// the step time.
func (c *Cache) Admit(s *Seq, cached, n int) (reloadUs int64, ok bool) {
	if len(s.blocks) != 0 || s.nTok != 0 {
		panic("kvcache: Admit on a sequence that holds blocks")
	}
	if cached%c.b != 0 || cached < 0 || n < 0 {
		panic(fmt.Sprintf("kvcache: Admit cached %d (block size %d), n %d", cached, c.b, n))
	}
	m := c.div(cached)
	pb := c.privateBlock(s)
	onFree, gpuUsed := 0, 0
	var memo []int32 // s's memo (memo.go), when it has one: its blocks need no lookup
	if c.memoOf(s) {
		c.memoExtend(min(m, pb))
		memo = c.memo.found
		gpuUsed, onFree = min(m, len(memo)), c.memo.free
		for _, i := range memo[gpuUsed:] {
			if c.blocks[i].ref == 0 {
				onFree--
			}
		}
	}
	for gpuUsed < min(m, pb) {
		i, hit := c.lookup(s.BlockHash(gpuUsed, c.b))
		if !hit {
			break
		}
		if c.blocks[i].ref == 0 {
			onFree++
		}
		gpuUsed++
	}
	if gpuUsed >= pb && gpuUsed < m {
		run := c.privateRun(s, gpuUsed, m)
		onFree += run // a private block found again is always free
		gpuUsed += run
	}
	cpuUsed := m - gpuUsed
	if cpuUsed > 0 && c.cpu == nil {
		panic("kvcache: Admit with more cached blocks than the GPU index holds")
	}
	need := cpuUsed + c.blocksFor(n)
	if need+onFree > c.free {
		c.stats.AllocFailures++
		return 0, false
	}
	c.pool.Prepare(s)
	s.held = 0 // its block table is rewritten below
	if want := c.blocksFor(s.ExpectedTokens); cap(s.blocks) < want {
		s.blocks = make([]int32, 0, want)
	}
	if memo != nil {
		c.dropMemo() // s runs: its cached blocks are pinned below (memo keeps their ids)
	}
	for k := 0; k < gpuUsed; k++ {
		var i int32
		if k < len(memo) {
			i = memo[k]
		} else {
			i, _ = c.find(s, k, pb)
		}
		if k >= pb {
			c.takePrivate(s.notes[k].serial)
		} else if bl := &c.blocks[i]; bl.ref == 0 {
			if bl.inMemo {
				c.memo.free--
			}
			c.unlink(i)
			bl.ref = 1
		} else {
			bl.ref++
		}
		s.blocks = append(s.blocks, i)
	}
	for k := gpuUsed; k < m; k++ {
		i := c.popFree(false) // the CPU tier is on: nothing is private
		c.setFull(s, k, i, false)
		s.blocks = append(s.blocks, i)
		c.stats.CPUReloads++
		if at, ok := c.cpu.offloadedAt(s.BlockHash(k, c.b)); ok && c.now-at < ThrashWindowUs {
			c.stats.CPUThrashing++
		}
		reloadUs += c.reloadCost
	}
	c.stats.Hits += int64(m)
	c.stats.CPUReloadUs += reloadUs
	s.nTok = cached
	c.grow(s, n)
	return reloadUs, true
}

// Reserve gives an empty sequence blocks for its first n tokens of which
// n − 1 count as present (their full blocks are hashed): a P/D decode part
// whose last prompt token will be recomputed in a slot already held. All or
// nothing.
func (c *Cache) Reserve(s *Seq, n int) bool {
	if len(s.blocks) != 0 || n <= 0 {
		panic(fmt.Sprintf("kvcache: Reserve %d tokens on a sequence with %d blocks", n, len(s.blocks)))
	}
	if c.blocksFor(n) > c.free {
		c.stats.AllocFailures++
		return false
	}
	c.pool.Prepare(s)
	s.held = 0
	c.grow(s, n-1)
	if c.newBlocksFor(s, 1) > 0 {
		s.blocks = append(s.blocks, c.popFree(len(s.blocks) >= c.privateBlock(s)))
	}
	return true
}

// NewBlocksFor is the number of fresh blocks Grow(s, n) would take.
func (c *Cache) NewBlocksFor(s *Seq, n int) int { return c.newBlocksFor(s, n) }

// newBlocksFor is the number of fresh blocks s needs for n more tokens.
func (c *Cache) newBlocksFor(s *Seq, n int) int {
	room := len(s.blocks)*c.b - s.nTok
	if n <= room {
		return 0
	}
	return c.blocksFor(n - room)
}

// Grow gives a running sequence n more tokens [Tokens(), Tokens()+n): first
// the room in its last block, then fresh blocks from the free head. All or
// nothing; ok is false (and nothing changes) when blocks are short.
func (c *Cache) Grow(s *Seq, n int) bool {
	if c.newBlocksFor(s, n) > c.free {
		c.stats.AllocFailures++
		return false
	}
	c.grow(s, n)
	return true
}

func (c *Cache) grow(s *Seq, n int) {
	pb := c.privateBlock(s)
	if first, last := c.div(s.nTok), min(c.div(s.nTok+n), pb); last-first > 1 {
		c.prefetch(s, first, last)
	}
	for n > 0 {
		room := len(s.blocks)*c.b - s.nTok
		if room == 0 {
			s.blocks = append(s.blocks, c.popFree(len(s.blocks) >= pb))
			room = c.b
		}
		step := min(room, n)
		s.nTok += step
		n -= step
		if step == room {
			if k := len(s.blocks) - 1; k < pb {
				c.setFull(s, k, s.blocks[k], true)
			} else {
				c.stats.Misses++ // private: nothing to record until its release
			}
		}
	}
}

// prefetch hashes full blocks [first, last) of s and touches their index
// slots before any is registered: the loads are independent, so their cache
// misses overlap instead of being paid one after another by register.
func (c *Cache) prefetch(s *Seq, first, last int) {
	s.BlockHash(last-1, c.b)
	var acc int32
	for k := first; k < last; k++ {
		acc += c.index.slots[s.hashes[k].Lo&c.index.mask].v1
	}
	c.sink += acc
}

// Release drops s's references in reverse block order; blocks reaching zero
// join the free tail with their hashes kept, so a prefix outlives its tail.
// s will not come back: its private blocks cannot be hit again (Preempt
// keeps them findable).
func (c *Cache) Release(s *Seq) { c.release(s, false) }

// Preempt is Release for a sequence that will be admitted again: it can
// then find its private blocks again (private.go).
func (c *Cache) Preempt(s *Seq) { c.release(s, true) }

func (c *Cache) release(s *Seq, again bool) {
	full := c.div(s.nTok)
	pb := c.privateBlock(s)
	for k := len(s.blocks) - 1; k >= 0; k-- {
		i := s.blocks[k]
		if k >= pb {
			c.privHeld--
			switch {
			case k >= full:
				c.pushTail(i, freePrivate)
			case again:
				s.noteRelease(k, i, c.pushTail(i, freePrivate|freeFull))
			default:
				c.pushTail(i, freePrivate|freeFull)
			}
			continue
		}
		bl := &c.blocks[i]
		bl.ref--
		if bl.ref == 0 {
			if bl.inMemo {
				c.memo.free++
			}
			var flags uint32
			if bl.hashed {
				flags = freeFull
			}
			c.pushTail(i, flags)
		}
	}
	if again {
		s.held = len(s.blocks)
	}
	s.blocks = s.blocks[:0]
	s.nTok = 0
}

// NeedsBlock reports whether the next token of s needs a fresh block.
func (c *Cache) NeedsBlock(s *Seq) bool { return s.nTok == len(s.blocks)*c.b }

// SetTokens moves s's token count forward to n without crossing into a new
// block or completing one (the fast-forward path uses it to catch a sequence
// up between block events). It panics if that promise is broken.
func (c *Cache) SetTokens(s *Seq, n int) {
	if n == s.nTok {
		return
	}
	if n < s.nTok || n >= len(s.blocks)*c.b {
		panic(fmt.Sprintf("kvcache: SetTokens %d from %d with %d slots", n, s.nTok, len(s.blocks)*c.b))
	}
	s.nTok = n
}

// SetNow tells the cache the time of the operations that follow (µs): the
// CPU tier stamps its copies with it and Admit measures thrashing by it.
func (c *Cache) SetNow(now int64) { c.now = now }

// MirrorToCPU copies every full block of s to the CPU tier (a copy already
// there is refreshed to most recent) while the GPU utilisation is above the
// offload threshold. No-op when the tier is off.
func (c *Cache) MirrorToCPU(s *Seq) {
	if c.cpu == nil || float64(c.t-c.free) <= c.offloadAt*float64(c.t) {
		return
	}
	full := c.div(s.nTok)
	for k := 0; k < full; k++ {
		added, evicted := c.cpu.touch(s.BlockHash(k, c.b), c.now)
		if added {
			c.stats.CPUMirrored++
		}
		if evicted {
			c.stats.CPUEvictions++
		}
	}
}

// Check verifies block conservation (INV-4): allocated + free = T, the free
// list holds exactly the blocks with reference count 0, counts are ≥ 0, and
// the index points only at hashed blocks with that hash.
func (c *Cache) Check() error {
	listed, err := c.checkFree()
	if err != nil {
		return err
	}
	used, inFree := 0, 0
	for i := range c.blocks {
		bl := &c.blocks[i]
		switch {
		case bl.ref < 0:
			return fmt.Errorf("kvcache: block %d has ref %d", i, bl.ref)
		case bl.ref > 0 && bl.inFree:
			return fmt.Errorf("kvcache: block %d has ref %d but is on the free list", i, bl.ref)
		case bl.ref > 0:
			used++
		case bl.inFree:
			inFree++
		}
	}
	if inFree != listed {
		return fmt.Errorf("kvcache: %d blocks marked free, %d listed", inFree, listed)
	}
	if c.privHeld < 0 || used+c.privHeld+c.free != c.t {
		return fmt.Errorf("kvcache: %d blocks held, %d private ones held and %d free make %d, not %d",
			used, c.privHeld, c.free, used+c.privHeld+c.free, c.t)
	}
	n := 0
	for _, sl := range c.index.slots {
		if sl.v1 != 0 {
			n++
		}
	}
	if n != c.index.n {
		return fmt.Errorf("kvcache: index holds %d entries, counter %d", n, c.index.n)
	}
	if err := c.checkMemo(); err != nil {
		return err
	}
	for i := range c.blocks {
		bl := &c.blocks[i]
		if bl.indexed && !bl.hashed {
			return fmt.Errorf("kvcache: block %d indexed without a hash", i)
		}
		if bl.indexed {
			if j, ok := c.lookup(c.hashes[i]); !ok || j != int32(i) {
				return fmt.Errorf("kvcache: indexed block %d is not found by its hash", i)
			}
		}
	}
	return nil
}
