package cluster

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
)

// signals are one instance's snapshot signals (docs/simulator.md §10, signal freshness).
type signals struct {
	queue, batch int
	kvUtil       float64
	hitRate      float64
}

// Pools name the candidate sets of a routing decision.
const (
	poolAll     = 0 // every instance (no P/D)
	poolPrefill = 1
	poolDecode  = 2
)

var poolNames = [...]string{"all", "prefill", "decode"}

// router makes routing decisions. Per decision it costs O(candidates) plus
// O(matched blocks) per prefix scorer; nothing is quadratic in instances.
type router struct {
	policy  RoutingPolicy
	scorers []Scorer // weights normalised to sum 1
	rng     *rand.Rand
	cursor  [3]int
	insts   []*instance.Instance
	load    []int // in-flight per instance (live, owned by the cluster)
	b       int   // block size of the prefix scorers

	refresh int64 // snapshot refresh interval; 0 = live
	snap    []signals
	snapAt  int64
	snapOK  bool

	prefix []*lru       // prefix-affinity: router-side index per instance
	first  *firstFilter // first blocks held by any of them
	fresh  bool         // the current request's first block is held nowhere

	precise bool // the scorers read the instances' prefix indexes (precise-prefix-cache, no-hit-lru)
	// noHit: the no-hit-lru scorer is on; coldAt[i] is the number of the
	// last cold request routed to instance i (0 = none yet), coldN the
	// cold requests routed so far, order a scratch for ranking.
	noHit  bool
	coldAt []uint64
	coldN  uint64
	order  []int
	delay  int64 // precise-prefix-cache refresh interval; 0 = live
	views  []map[kvcache.Hash]struct{}
	viewAt int64
	viewOK bool

	hashes []kvcache.Hash // the current request's full prompt blocks
	own    []kvcache.Hash // the whole list with stand-ins, when a match needs it (all)
	n      int            // the request's full prompt blocks: rt.hashes, then stand-ins
	shared int            // len(rt.hashes)
	stamp  uint64         // the stand-ins' RoutingStamp
	// newStamp: the stamp is new, so no index holds the request's stand-ins
	// (a first block that is a stand-in is not counted by the first-block
	// filter: the request's own picks are the only ones that can match it)
	newStamp bool
	stamps   uint64        // requests numbered for stand-ins (instance.Request.RoutingStamp)
	pool     *kvcache.Pool // the instances' buffers: the request's hash list comes from it
	cands    []cand
	parts    [][]float64 // per scorer, per candidate
	total    []float64
	ties     []int
	dec      *decisionLog
	cf       *counterfactual // nil unless CounterfactualK > 0
}

// PrefixIndexBlocks is the capacity of the router-side prefix-affinity
// index of each instance (docs/simulator.md §10).
const PrefixIndexBlocks = 10000

func newRouter(cfg *Config, insts []*instance.Instance, load []int, rng *rand.Rand, dec *decisionLog) *router {
	rt := &router{policy: cfg.routing(), rng: rng, insts: insts, load: load, refresh: cfg.SnapshotRefreshUs,
		delay: cfg.CacheSignalDelayUs, snap: make([]signals, len(insts)), dec: dec,
		cf: newCounterfactual(cfg.CounterfactualK)}
	if len(insts) > 0 {
		rt.b = insts[0].KV().BlockSize()
		rt.pool = insts[0].KV().Pool()
	}
	if rt.policy == Weighted {
		sc := cfg.Scorers
		if len(sc) == 0 {
			sc, _ = ParseScorers(DefaultScorers)
		}
		var sum float64
		for _, s := range sc {
			sum += s.Weight
		}
		for _, s := range sc {
			rt.scorers = append(rt.scorers, Scorer{Name: s.Name, Weight: s.Weight / sum})
			switch s.Name {
			case ScorerPrefixAffinity:
				rt.prefix = make([]*lru, len(insts))
				rt.first = newFirstFilter()
				for i := range rt.prefix {
					rt.prefix[i] = newLRU(PrefixIndexBlocks, rt.first)
				}
			case ScorerPrecisePrefixCache:
				rt.precise = true
			case ScorerNoHitLRU:
				rt.precise, rt.noHit = true, true
				rt.coldAt = make([]uint64, len(insts))
			}
		}
		rt.parts = make([][]float64, len(rt.scorers))
	}
	if rt.precise && rt.delay > 0 {
		rt.views = make([]map[kvcache.Hash]struct{}, len(insts))
		for i, in := range insts {
			in.KV().EnableJournal()
			rt.views[i] = map[kvcache.Hash]struct{}{}
		}
	}
	return rt
}

// read fills the snapshot signals of the candidates: live when the refresh
// interval is 0, else all instances at once when the snapshot is older than
// the interval (INV-7).
func (rt *router) read(now int64, pool []int) {
	if rt.refresh == 0 {
		for _, i := range pool {
			rt.snap[i] = rt.live(i)
		}
		return
	}
	if rt.snapOK && now-rt.snapAt <= rt.refresh {
		return
	}
	for i := range rt.insts {
		rt.snap[i] = rt.live(i)
	}
	rt.snapAt, rt.snapOK = now, true
}

// snapshotAge is the age of the snapshot signals a decision at now read:
// 0 when they are read live.
func (rt *router) snapshotAge(now int64) int64 {
	if rt.refresh == 0 || !rt.snapOK {
		return 0
	}
	return now - rt.snapAt
}

func (rt *router) live(i int) signals {
	in := rt.insts[i]
	kv := in.KV()
	return signals{queue: in.QueueDepth(), batch: in.BatchSize(), kvUtil: kv.Utilization(), hitRate: kv.HitRate()}
}

// effLoad is queue depth + batch size (snapshot) + in-flight (live).
func (rt *router) effLoad(i int) int { return rt.snap[i].queue + rt.snap[i].batch + rt.load[i] }

// needHashes reports whether decisions read the request's block hashes.
func (rt *router) needHashes() bool { return rt.prefix != nil || rt.precise }

// prepare sets rt.hashes to the hashes of r's full prompt blocks up to its
// private ones (instance.Request.Private). Those, rt.n − rt.shared of them,
// stand in the prefix indexes as values unique to the request (standIn of
// its RoutingStamp; a block hash equals one with negligible probability),
// so that, like their hashes, they match nothing but the same request's,
// while they fill the indexes exactly as the hashes would. Decisions are
// the same as with every block hashed (replay's
// TestPrivatePromptsChangeNothing), without hashing blocks that only the
// request itself will ever hold. The stand-ins are made only when a match
// needs them (all).
func (rt *router) prepare(r *instance.Request) {
	r.PrepareHashes(rt.pool)
	rt.n, rt.shared = r.PromptBlocks(rt.b), r.SharedPromptBlocks(rt.b)
	rt.hashes = r.PromptHashes(rt.shared, rt.b) // r's own list: the router only reads it, and record copies it
	rt.stamp, rt.newStamp = 0, false
	if rt.shared < rt.n {
		rt.stamp, rt.newStamp = r.RoutingStamp(&rt.stamps)
	}
}

// all is the request's whole list for matching: its hashes, then the
// stand-ins of its private blocks.
func (rt *router) all() []kvcache.Hash {
	if rt.shared == rt.n {
		return rt.hashes
	}
	rt.own = withStandIns(rt.own[:0], rt.hashes, rt.n, rt.stamp)
	return rt.own
}

// withStandIns appends to dst the n blocks of a request whose first
// len(hs) are hashed: hs, then the stand-ins of the others (stamp).
func withStandIns(dst, hs []kvcache.Hash, n int, stamp uint64) []kvcache.Hash {
	dst = append(dst, hs...)
	for k := len(hs); k < n; k++ {
		dst = append(dst, standIn(stamp, k))
	}
	return dst
}

// standIn is the stand-in for block k of the request with the given
// RoutingStamp (prepare). Both halves are mixed like a hash's: the indexes
// probe from the low word and tag slots with the high one, and stamps and
// block numbers are small consecutive integers. Lo is one-to-one in k for
// a stamp; stand-ins of different requests, like hashes, collide with
// negligible probability.
func standIn(stamp uint64, k int) kvcache.Hash {
	lo := mix64(stamp ^ mix64(uint64(k)+0x9E3779B97F4A7C15))
	return kvcache.Hash{Lo: lo, Hi: mix64(lo + stamp*0xC2B2AE3D27D4EB4F)}
}

// mix64 is a bijective 64-bit finaliser (SplitMix64's).
func mix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// pick chooses an instance of pool for r at now.
func (rt *router) pick(now int64, r *instance.Request, pool []int, poolID int) int {
	logging := rt.dec != nil
	if logging || rt.cf != nil || rt.policy == LeastLoaded || rt.policy == AlwaysBusiest || rt.policy == Weighted {
		rt.read(now, pool)
	}
	rt.total = rt.total[:0]
	var chosen int
	switch rt.policy {
	case RoundRobin:
		chosen = pool[rt.cursor[poolID]%len(pool)]
		rt.cursor[poolID]++
		rt.ties = append(rt.ties[:0], chosen)
	case Random:
		chosen = pool[rt.rng.IntN(len(pool))]
		rt.ties = append(rt.ties[:0], chosen)
	case LeastLoaded, LeastOutstanding, AlwaysBusiest:
		for _, i := range pool {
			v := float64(rt.load[i])
			if rt.policy != LeastOutstanding {
				v = float64(rt.effLoad(i))
			}
			if rt.policy != AlwaysBusiest {
				v = -v
			}
			rt.total = append(rt.total, v)
		}
		chosen = rt.argmax(pool)
	case Weighted:
		if rt.needHashes() {
			rt.prepare(r)
		}
		rt.weighted(now, pool)
		chosen = rt.argmax(pool)
		if rt.noHit && rt.cold() {
			rt.coldN++
			rt.coldAt[chosen] = rt.coldN
		}
	}
	if rt.cf != nil {
		rt.cf.decide(rt, pool, poolID, chosen)
	}
	if rt.prefix != nil {
		// Stand-ins are recorded as the stamp alone (pendRec).
		rt.prefix[chosen].record(rt.hashes, rt.n, rt.stamp, rt.fresh)
	}
	if logging {
		rt.dec.decision(rt, now, r, pool, poolID, chosen)
	}
	return chosen
}

// argmax returns the candidate with the largest rt.total, ties broken
// uniformly with the router stream (drawn only when there is a tie).
func (rt *router) argmax(pool []int) int {
	best, at, n := rt.total[0], 0, 1
	for k, v := range rt.total[1:] {
		switch {
		case v > best:
			best, at, n = v, k+1, 1
		case v == best:
			n++
		}
	}
	rt.ties = rt.ties[:0]
	if n == 1 {
		rt.ties = append(rt.ties, pool[at])
		return pool[at]
	}
	for k, v := range rt.total[at:] {
		if v == best {
			rt.ties = append(rt.ties, pool[at+k])
		}
	}
	return rt.ties[rt.rng.IntN(len(rt.ties))]
}

// cand is what the weighted scorers see of one candidate instance.
type cand struct {
	queue, batch int     // snapshot
	inFlight     int     // live
	kvUtil       float64 // snapshot
	affinity     int     // leading request blocks in the router-side index (prefix-affinity)
	cached       int     // leading request blocks in the instance's prefix index, maybe delayed (precise-prefix-cache)
	coldRank     int     // no-hit-lru: place in the order of cold routing, least recent (or never) first
}

// cold reports whether the current request is cold: no candidate holds
// its first block (what no-hit-lru reads, as precise-prefix-cache sees it).
func (rt *router) cold() bool {
	for _, c := range rt.cands {
		if c.cached > 0 {
			return false
		}
	}
	return true
}

// rankCold sets the candidates' coldRank: ordered by the number of the
// last cold request routed to them, instances that never received one
// first, ties (only among those) by their order in the pool.
func (rt *router) rankCold(pool []int) {
	rt.order = rt.order[:0]
	for k := range pool {
		rt.order = append(rt.order, k)
	}
	slices.SortStableFunc(rt.order, func(a, b int) int { return cmp.Compare(rt.coldAt[pool[a]], rt.coldAt[pool[b]]) })
	for r, k := range rt.order {
		rt.cands[k].coldRank = r
	}
}

// weighted fills rt.parts (each scorer's score per candidate) and rt.total
// = Σ clamp(score, 0, 1)·w.
func (rt *router) weighted(now int64, pool []int) {
	if cap(rt.cands) < len(pool) {
		rt.cands = make([]cand, len(pool))
	}
	rt.cands = rt.cands[:len(pool)]
	for k, i := range pool {
		s := &rt.snap[i]
		rt.cands[k] = cand{queue: s.queue, batch: s.batch, inFlight: rt.load[i], kvUtil: s.kvUtil}
	}
	// Without its first block no index can match a prompt: one filter
	// probe instead of one per candidate.
	switch {
	case rt.prefix == nil || rt.n == 0:
		rt.fresh = false
	case rt.shared == 0:
		rt.fresh = rt.newStamp
	default:
		rt.fresh = !rt.first.mayHold(rt.hashes[0])
	}
	if rt.prefix != nil && rt.n > 0 && !rt.fresh {
		hs := rt.all()
		for k, i := range pool {
			rt.cands[k].affinity = rt.prefix[i].match(hs)
		}
	}
	if rt.precise {
		if rt.delay > 0 {
			rt.refreshViews(now)
		}
		for k, i := range pool {
			rt.cands[k].cached = rt.cached(i)
		}
	}
	if rt.noHit {
		rt.rankCold(pool)
	}
	for len(rt.total) < len(pool) {
		rt.total = append(rt.total, 0)
	}
	scoreWeighted(rt.scorers, rt.cands, rt.n, rt.parts, rt.total)
}

// scoreWeighted is the weighted policy on candidates (docs/simulator.md §10 table):
// parts[s][k] is scorer s's score of candidate k and total[k] = Σ_s
// clamp(parts[s][k], 0, 1)·w_s, with weights summing to 1. blocks is the
// request's number of full prompt blocks.
func scoreWeighted(scorers []Scorer, cs []cand, blocks int, parts [][]float64, total []float64) {
	for k := range cs {
		total[k] = 0
	}
	for s, sc := range scorers {
		p := parts[s][:0]
		switch sc.Name {
		case ScorerPrefixAffinity:
			for _, c := range cs {
				v := 0.0
				if c.affinity > 0 {
					v = float64(c.affinity) / float64(blocks)
				}
				p = append(p, v)
			}
		case ScorerPrecisePrefixCache:
			for _, c := range cs {
				p = append(p, float64(c.cached))
			}
			minMax(p, false)
		case ScorerQueueDepth:
			for _, c := range cs {
				p = append(p, float64(c.queue))
			}
			minMax(p, true)
		case ScorerKVUtilization:
			for _, c := range cs {
				p = append(p, 1-c.kvUtil)
			}
		case ScorerLoadBalance:
			for _, c := range cs {
				p = append(p, 1/(1+float64(c.queue+c.batch+c.inFlight)))
			}
		case ScorerNoHitLRU:
			p = noHitLRU(cs, p)
		}
		for k, v := range p {
			// clamp(v, 0, 1) by comparisons: scores are never NaN, and
			// the builtin min and max pay for NaN and signed zeros.
			if v < 0 {
				v = 0
			} else if v > 1 {
				v = 1
			}
			total[k] += v * sc.Weight
		}
		parts[s] = p
	}
}

// noHitLRU appends the no-hit-lru scores of cs to p: a warm request (some
// candidate holds its first block) scores 0.5 everywhere, neutral; a cold
// one scores 1 − rank/(n − 1) by the candidate's coldRank, so the instance
// that waited longest for a cold request (or never had one) scores 1 and
// cold traffic spreads in turn instead of piling on one instance; a lone
// candidate scores 1.
func noHitLRU(cs []cand, p []float64) []float64 {
	warm := false
	for _, c := range cs {
		warm = warm || c.cached > 0
	}
	for _, c := range cs {
		switch {
		case warm:
			p = append(p, 0.5)
		case len(cs) == 1:
			p = append(p, 1)
		default:
			p = append(p, 1-float64(c.coldRank)/float64(len(cs)-1))
		}
	}
	return p
}

// minMax normalises p to (x − min)/(max − min), or (max − x)/(max − min)
// when inverted; all 1 when every value is equal.
func minMax(p []float64, invert bool) {
	lo, hi := p[0], p[0]
	for _, v := range p {
		// Comparisons, not the builtins, which pay for NaN and signed
		// zeros: the values are counts.
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	for k, v := range p {
		switch {
		case hi == lo:
			p[k] = 1
		case invert:
			p[k] = (hi - v) / (hi - lo)
		default:
			p[k] = (v - lo) / (hi - lo)
		}
	}
}

// cached is the number of leading blocks of the current request found in
// instance i's prefix index: live, or as of the last refresh. Private
// blocks are never in an index, so the count stops before them.
func (rt *router) cached(i int) int {
	k := 0
	if rt.delay == 0 {
		kv := rt.insts[i].KV()
		for k < len(rt.hashes) && kv.Contains(rt.hashes[k]) {
			k++
		}
		return k
	}
	v := rt.views[i]
	for k < len(rt.hashes) {
		if _, ok := v[rt.hashes[k]]; !ok {
			break
		}
		k++
	}
	return k
}

// refreshViews brings the delayed copies of the instances' prefix indexes
// up to date when they are older than the cache signal delay.
func (rt *router) refreshViews(now int64) {
	if rt.viewOK && now-rt.viewAt <= rt.delay {
		return
	}
	for i, in := range rt.insts {
		v := rt.views[i]
		in.KV().DrainJournal(func(ch kvcache.IndexChange) {
			if ch.Added {
				v[ch.Hash] = struct{}{}
			} else {
				delete(v, ch.Hash)
			}
		})
	}
	rt.viewAt, rt.viewOK = now, true
}

// cachedTokensLive is the prefix-cached prompt tokens of r on instance i
// now (the prefix-threshold decider), by the vLLM rule: at least one token
// is always computed.
func cachedTokensLive(in *instance.Instance, r *instance.Request) int {
	kv := in.KV()
	b := kv.BlockSize()
	n := r.PromptBlocks(b)
	k := 0
	for k < n && kv.Contains(r.BlockHash(k, b)) {
		k++
	}
	if p := len(r.Prompt); p > 0 {
		k = min(k, (p-1)/b)
	}
	return k * b
}
