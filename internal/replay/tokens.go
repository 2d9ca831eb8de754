package replay

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"servesim/internal/des/kvcache"
	"servesim/internal/tracev2"
)

// vocab is the size of the synthetic vocabulary (docs/workload.md §9).
const vocab = 128000

// DefaultHashBlockTokens is the number of prompt tokens one ext_hash_ids
// entry stands for: Mooncake's 512-token prefix blocks.
const DefaultHashBlockTokens = tracev2.DefaultHashBlockTokens

// streamSeed derives a stream's seed from the run seed and a name
// (docs/simulator.md §1: seed XOR FNV-1a-64(name)).
func streamSeed(seed int64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return uint64(seed) ^ h.Sum64()
}

// tokens synthesises prompt and output token ids. Ids depend only on (seed,
// prefix group), (seed, hash id) or (seed, request id), never on the order
// in which rows are met, so a trace replays identically however it was
// produced. Only the sharing structure matters to the KV cache: rows of one
// prefix group share their prefix, rows with equal leading hash ids share
// those blocks, an accumulating session round begins with its predecessor's
// prompt and output, and everything else is fresh (a 16-token block of
// uniform ids over 128000 values never collides by chance).
type tokens struct {
	seed       int64
	hashTokens int           // tokens per hash id
	shared     *prefixCounts // the trace's hash-id prefixes counted (prefixes.go), or nil
	prefixes   map[string][]int32
	// sessions holds, per accumulating session, the ids of the latest
	// round's prompt followed by its output: the next round's prompt starts
	// with them.
	sessions map[string]sessionContext
	// pcg is reseeded for every sequence of fresh ids; the seeds of the
	// per-request and hash-block streams are computed once.
	pcg                              *rand.PCG
	promptSeed, outputSeed, hashSeed uint64
	warnings                         []string
	short                            int    // session rounds shorter than their context
	rows                             idRows // rows met per request id, for private prompts
	// blank backs the prompts of which no id is ever read (all private,
	// lazy): zeros, never written, shared; it only grows (a new array).
	blank []int32
	// chains gives hash-id prompts their blocks' hashes (nil: not used).
	chains *chains
	// unique: no two rows share a request id (Config.UniqueIDs).
	unique bool
}

// promptBuf is a request's reusable prompt storage: ids and the regions
// naming its known blocks.
type promptBuf struct {
	ids   []int32
	known []kvcache.Region
}

// sessionContext is an accumulating session's context after round `round`:
// its ids, and the regions naming their leading blocks (the first round's
// hash ids: their hashes are named, not hashed from the ids, so a round
// that resends them must take them).
type sessionContext struct {
	round int
	ids   []int32
	known []kvcache.Region
}

func newTokens(seed int64, hashTokens int) *tokens {
	if hashTokens <= 0 {
		hashTokens = DefaultHashBlockTokens
	}
	return &tokens{seed: seed, hashTokens: hashTokens, prefixes: map[string][]int32{},
		sessions: map[string]sessionContext{}, pcg: rand.NewPCG(0, 0),
		promptSeed: streamSeed(seed, "token-ids/prompt"), outputSeed: streamSeed(seed, "token-ids/output"),
		hashSeed: streamSeed(seed, "token-ids/hash-block")}
}

// fill writes ids uniform over the vocabulary from r, three per 64-bit
// draw: each 21-bit slice x maps to ⌊x·vocab / 2²¹⌋, whose bias (at most
// one part in 16) is irrelevant here — only equality of ids matters to the
// KV cache, and a 16-token block of such ids never collides by chance.
// Token synthesis is a fifth of a replay's CPU time with one draw per id.
func fill(dst []int32, r *rand.PCG) {
	const bits, mask = 21, 1<<21 - 1
	i := 0
	for ; i+3 <= len(dst); i += 3 {
		x := r.Uint64()
		dst[i] = int32((x & mask) * vocab >> bits)
		dst[i+1] = int32((x >> bits & mask) * vocab >> bits)
		dst[i+2] = int32((x >> (2 * bits) & mask) * vocab >> bits)
	}
	if i < len(dst) {
		x := r.Uint64()
		for ; i < len(dst); i++ {
			dst[i] = int32((x & mask) * vocab >> bits)
			x >>= bits
		}
	}
}

// fresh returns the generator of request id's fresh ids of one kind
// (seed = the stream's seed for "prompt" or "output").
func (t *tokens) fresh(seed uint64, id int64) *rand.PCG {
	t.pcg.Seed(seed, uint64(id))
	return t.pcg
}

// prefix returns the first n ids of group g's prefix.
func (t *tokens) prefix(g string, n int) []int32 {
	p := t.prefixes[g]
	if len(p) < n {
		// The group's ids are one deterministic sequence; a longer request
		// extends it, so every member shares the common part.
		p = make([]int32, n)
		fill(p, rand.NewPCG(streamSeed(t.seed, "prefix/"+g), 0))
		t.prefixes[g] = p
	}
	return p[:n]
}

// hashBlocks fills the head of ids with the blocks named by hashes: block i
// holds the first tokens of hash id hashes[i]'s deterministic sequence, so
// rows whose leading hash ids agree share those tokens (and so their KV
// blocks, whatever the simulator's block size). It returns how many ids it
// filled; a row with more hash ids than its prompt covers uses the ones that
// fit, one with fewer leaves the rest to the caller.
func (t *tokens) hashBlocks(ids []int32, hashes []int64) int {
	n := 0
	for _, h := range hashes {
		if n >= len(ids) {
			break
		}
		end := min(n+t.hashTokens, len(ids))
		t.pcg.Seed(t.hashSeed, uint64(h))
		fill(ids[n:end], t.pcg)
		n = end
	}
	return n
}

// prompt builds the prompt of a row: its ids, in b.ids (replaced by a
// larger buffer when too small) or in the shared blank ids; where its own
// ids begin (own); and the regions naming its leading hash-id blocks
// (known, when chains is on, in b.known).
//
// own is where the row's own fresh ids begin when no other row can share
// them (instance.Request.Private), or −1: an accumulating session's rounds
// are resent by the next round, rows whose ids are not tracked (idRows)
// might be repeated later, and so might a prompt with no fresh ids (all
// prefix or hash-id blocks) — unless request ids are unique, in which
// case its generated tokens are its own (own = the prompt's length).
//
// pre, if set, is the hash-id prefix computed ahead (the same as
// chains.known's). An unread row (driver.unread) gets blank ids and no
// hashes.
//
// With lazy (the KV caches honour the privacy declaration:
// driver.lazy), ids nothing reads are not written: a row's own ids, and
// the ids of blocks whose hashes are known. A prompt of which no id is
// read takes no buffer at all (blank), which matters for the requests
// waiting in a long queue.
func (t *tokens) prompt(b *promptBuf, rec *tracev2.Record, accumulate, lazy bool, pre *hashedPrefix, unread bool) (ids []int32, own int, known []kvcache.Region) {
	n := rec.ResendPromptTokens()
	if unread {
		// Nothing reads its ids (driver.unread); the id is still counted.
		t.rows.add(rec.RequestID)
		return t.blankIDs(n), -1, nil
	}
	var prev []int32 // the session's context, first
	start := 0       // ids before it are shared with other rows
	hashed := false
	if accumulate && rec.SessionID != "" && rec.RoundIndex > 0 {
		c := t.sessions[rec.SessionID]
		if len(c.ids) <= n {
			prev, start, known = c.ids, len(c.ids), c.known
		} else {
			t.shortRound(rec, n, len(c.ids))
		}
	}
	if start == 0 && len(rec.HashIDs) > 0 {
		start, hashed = min(n, len(rec.HashIDs)*t.hashTokens), true
	}
	if start == 0 && rec.PrefixGroup != "" && rec.PrefixLength > 0 {
		start = min(rec.PrefixLength, n)
	}
	seed, own := t.promptSeed, start
	repeats, tracked := t.rows.add(rec.RequestID)
	if repeats > 0 {
		// A repeated id (a defect of the trace) gets fresh ids of its own:
		// sharing them with the earlier row would be an artifact.
		seed += uint64(repeats) * 0x9E3779B97F4A7C15
	}
	switch {
	case !tracked || (accumulate && rec.SessionID != ""):
		own = -1
	case start == n && t.unique && repeats == 0 && n > 0:
		// Its generated tokens (drawn from its request id) are its own.
		own = n
	case start == n:
		// They are its own only if no other row repeats the id and the
		// prompt, which is not known yet.
		own = -1
	}
	if hashed && own > 0 && t.shared != nil && t.chains != nil {
		// Past a prefix no other row has, the prompt is its own
		// (prefixes.go). Only where hash-id regions are whole KV blocks
		// (chains): else the block holding the region's first token would
		// hold the shared region's last tokens too, and another row whose
		// region begins with the same drawn token could hit it.
		from := -1
		if pre != nil {
			from = pre.private
		} else {
			from = t.shared.privateFrom(rec.HashIDs, n, t.hashTokens)
		}
		if from >= 0 {
			own = min(own, from*t.hashTokens)
		}
	}
	knownBlocks := 0
	switch {
	case !hashed || t.chains == nil:
	case pre != nil:
		known, knownBlocks = pre.regions, pre.blocks
	default:
		b.known, knownBlocks = t.chains.known(b.known[:0], rec.HashIDs, n, t.hashTokens)
		known = b.known
	}
	if keep := own / t.hashTokens; own >= 0 && own < start && keep < len(known) {
		// Regions of private blocks are never hashed: leave them out
		// (those before are full: only the last region may be short).
		known, knownBlocks = known[:keep], keep*t.chains.per
	}
	if lazy && own >= 0 && (start == 0 || (hashed && knownBlocks == min(start, own)/t.chainBlock())) {
		// No id is read: those before the first private block are hashed
		// already, the rest are private.
		return t.blankIDs(n), own, known
	}
	if cap(b.ids) < n {
		b.ids = make([]int32, n)
	}
	ids = b.ids[:n]
	switch {
	case len(prev) > 0:
		copy(ids, prev)
	case hashed:
		t.hashBlocks(ids, rec.HashIDs)
	case start > 0:
		copy(ids, t.prefix(rec.PrefixGroup, start))
	}
	if own < 0 || !lazy {
		fill(ids[start:], t.fresh(seed, rec.RequestID))
	}
	return ids, own, known
}

// blankIDs returns n ids of the shared blank prompt.
func (t *tokens) blankIDs(n int) []int32 {
	if len(t.blank) < n {
		t.blank = make([]int32, max(n, 2*len(t.blank)))
	}
	return t.blank[:n]
}

// chainBlock is the KV block size of chains (1 without: only a start of 0
// takes the blank path then).
func (t *tokens) chainBlock() int {
	if t.chains == nil {
		return 1
	}
	return t.chains.block
}

// maxTokenWarnings bounds the session rounds warned about one by one.
const maxTokenWarnings = 20

// shortRound warns of a session round whose prompt cannot begin with its
// predecessor's context; past maxTokenWarnings it only counts, and the
// last warning says how many more there were.
func (t *tokens) shortRound(rec *tracev2.Record, n, prev int) {
	t.short++
	switch {
	case t.short <= maxTokenWarnings:
		t.warnings = append(t.warnings, fmt.Sprintf("request %d: session %s round %d: prompt of %d tokens is shorter "+
			"than the previous round's prompt and output (%d); using fresh tokens", rec.RequestID, tracev2.QuoteName(rec.SessionID), rec.RoundIndex, n, prev))
	case t.short == maxTokenWarnings+1:
		t.warnings = append(t.warnings, "")
		fallthrough
	default:
		t.warnings[len(t.warnings)-1] = fmt.Sprintf("%d more session rounds shorter than their previous round; fresh tokens used", t.short-maxTokenWarnings)
	}
}

// output returns the ids a request generates, or nil when nobody will ever
// look at them (the simulator then synthesises its own).
func (t *tokens) output(rec *tracev2.Record, accumulate bool) []int32 {
	if !accumulate || rec.SessionID == "" {
		return nil
	}
	ids := make([]int32, rec.OutputTokens)
	fill(ids, t.fresh(t.outputSeed, rec.RequestID))
	return ids
}

// remember records a session round's context — its prompt, the first
// `generated` ids of its output and the regions naming the prompt's blocks
// (tokens.prompt's) — so the next round can extend it. A round
// older than the one already remembered is ignored: with pre-scheduled
// rounds (a replayed trace, open-loop sessions) round k may complete after
// round k + 1 was built.
func (t *tokens) remember(session string, round int, prompt, output []int32, generated int, known []kvcache.Region) {
	if session == "" {
		return
	}
	if old, ok := t.sessions[session]; ok && old.round > round {
		return
	}
	ctx := make([]int32, 0, len(prompt)+generated)
	ctx = append(ctx, prompt...)
	ctx = append(ctx, output[:min(generated, len(output))]...)
	// known may be a reused buffer (promptBuf.known).
	t.sessions[session] = sessionContext{round: round, ids: ctx, known: slices.Clone(known)}
}

// idRows counts the rows met per request id, for ids in [0, 2²⁶): a bit per
// id (at most 8 MB, as far as the largest id met) and a map for the ids met
// more than once. Other ids are not tracked, and such rows never have
// private prompts: keeping every id would make memory grow with the trace.
type idRows struct {
	seen  []uint64
	extra map[int64]int // rows met beyond the first, by id
}

const maxTrackedID = 1 << 26

// add records a row with the given id and returns how many rows had it
// before, and whether the id is tracked.
func (r *idRows) add(id int64) (before int, tracked bool) {
	if id < 0 || id >= maxTrackedID {
		return 0, false
	}
	w, bit := int(id>>6), uint64(1)<<(id&63)
	if w >= len(r.seen) {
		r.seen = append(r.seen, make([]uint64, w+1-len(r.seen))...)
	}
	if r.seen[w]&bit == 0 {
		r.seen[w] |= bit
		return 0, true
	}
	if r.extra == nil {
		r.extra = map[int64]int{}
	}
	r.extra[id]++
	return r.extra[id], true
}
