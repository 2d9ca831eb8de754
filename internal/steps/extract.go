package steps

import (
	"fmt"
	"slices"
)

// Request is what a trace tells of one request's chunks.
type Request struct {
	ID     int64
	Prompt int // prompt tokens the server computed (its prefix-cache misses)
	Output int // output tokens
	// Chunks are the times (µs) its chunks arrived, ascending: every chunk
	// when the trace has ITL data, else the first and the last.
	Chunks []int64
}

// Options set the extraction.
type Options struct {
	// WindowUs is the widest gap between two chunk times of one step end;
	// chunks further apart belong to different steps. It must stay well
	// under the shortest step.
	WindowUs int64
	// Budget is the server's token budget per step (max_num_batched_tokens;
	// 0 = none): a prompt longer than what a step has left after its decodes
	// is split over the steps before its first token.
	Budget int
}

// Prefill is one prompt's share of a step.
type Prefill struct {
	ID        int64
	NewTokens int  // prompt tokens computed in the step
	Context   int  // prompt tokens computed before it
	Target    int  // the whole prompt
	Finishes  bool // the step produced its first token
}

// Step is one engine step whose start and end the chunks tell.
type Step struct {
	StartUs, EndUs int64
	Decodes        int   // requests that produced their next token in it
	DecodeContext  int64 // Σ tokens of KV those requests held before it
	Prefills       []Prefill
}

// DurationUs is the step's real time.
func (s *Step) DurationUs() int64 { return s.EndUs - s.StartUs }

// Extraction is what Extract found.
type Extraction struct {
	Steps    []Step // steps with a known start and end, in time order
	StepEnds int    // step ends seen (clusters of chunk times)
	// Chunks counts the chunk observations (chunks of one request in one
	// step end count once); Explained those of the requests whose chunks
	// fall on steps numbered as their token counts require.
	Chunks, Explained int
	// Requests with chunks, and Consistent ones among them.
	Requests, Consistent int
	// Sparse is the number of requests whose chunks do not cover every
	// token (only their first and last chunk could be placed).
	Sparse int
}

// ExplainedShare is Explained / Chunks (0 without chunks).
func (e *Extraction) ExplainedShare() float64 {
	if e.Chunks == 0 {
		return 0
	}
	return float64(e.Explained) / float64(e.Chunks)
}

// obs is a request's chunk at step end node, as its token index.
type obs struct{ node, token int }

// reqObs is a request's observations.
type reqObs struct {
	req        *Request
	obs        []obs
	consistent bool
}

// Extract finds the steps of reqs' chunk timelines.
func Extract(reqs []Request, opt Options) (*Extraction, error) {
	if opt.WindowUs < 0 {
		return nil, fmt.Errorf("step window %d µs is negative", opt.WindowUs)
	}
	ends, nodeOf := clusterTimes(reqs, opt.WindowUs)
	ex := &Extraction{StepEnds: len(ends)}
	rs := make([]reqObs, 0, len(reqs))
	for i := range reqs {
		r := &reqs[i]
		if len(r.Chunks) == 0 || r.Output < 1 {
			continue
		}
		ro := observe(r, nodeOf)
		if len(ro.obs) != r.Output {
			ex.Sparse++
		}
		rs = append(rs, ro)
	}
	u := newOffsets(len(ends))
	for i := range rs {
		for j := 1; j < len(rs[i].obs); j++ {
			a, b := rs[i].obs[j-1], rs[i].obs[j]
			if !u.relate(a.node, b.node, b.token-a.token) {
				rs[i].consistent = false
			}
		}
	}
	broken := u.breaks(len(ends))
	for i := range rs {
		ex.Requests++
		n := len(rs[i].obs)
		ex.Chunks += n
		for _, o := range rs[i].obs {
			if broken[o.node] {
				rs[i].consistent = false
			}
		}
		if rs[i].consistent {
			ex.Consistent++
			ex.Explained += n
		}
	}
	ex.Steps = resolve(ends, u, broken, rs, opt.Budget)
	return ex, nil
}

// clusterTimes sorts every chunk time and cuts it into step ends where two
// neighbours are more than window apart. It returns each end's time (the
// latest chunk of its cluster) and the node of each time.
func clusterTimes(reqs []Request, window int64) ([]int64, map[int64]int) {
	var ts []int64
	for i := range reqs {
		ts = append(ts, reqs[i].Chunks...)
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	nodeOf := make(map[int64]int, len(ts))
	var ends []int64
	for i, t := range ts {
		if i == 0 || t-ts[i-1] > window {
			ends = append(ends, t)
		}
		ends[len(ends)-1] = t
		nodeOf[t] = len(ends) - 1
	}
	return ends, nodeOf
}

// observe places r's chunks on step ends: chunks in one end count once;
// when the ends are as many as its tokens, the k-th is token k, else only
// the first (token 0) and the last (token Output − 1) are placed.
func observe(r *Request, nodeOf map[int64]int) reqObs {
	var nodes []int
	for _, t := range r.Chunks {
		n := nodeOf[t]
		if len(nodes) == 0 || nodes[len(nodes)-1] != n {
			nodes = append(nodes, n)
		}
	}
	ro := reqObs{req: r, consistent: true}
	if len(nodes) == r.Output {
		for k, n := range nodes {
			ro.obs = append(ro.obs, obs{n, k})
		}
		return ro
	}
	ro.consistent = len(nodes) < r.Output // more step ends than tokens: a step split in two
	ro.obs = append(ro.obs, obs{nodes[0], 0})
	if len(nodes) > 1 && r.Output > 1 {
		ro.obs = append(ro.obs, obs{nodes[len(nodes)-1], r.Output - 1})
	}
	return ro
}

// resolve keeps the steps whose end and the end before it are numbered one
// step apart, with their batches.
func resolve(ends []int64, u *offsets, broken []bool, rs []reqObs, budget int) []Step {
	one := make([]bool, len(ends)) // one[i]: ends i−1 and i are one step apart
	for i := 1; i < len(ends); i++ {
		one[i] = !broken[i] && !broken[i-1] && u.gap(i-1, i) == 1
	}
	b := newBatches(ends, rs)
	var steps []Step
	for i := range ends {
		if one[i] {
			steps = append(steps, b.step(i))
		}
	}
	placePrefills(steps, budget)
	return steps
}

// offsets is a union-find over step ends that keeps, for each, its step
// number relative to its set's root.
type offsets struct {
	parent []int
	delta  []int // step number of i minus that of parent[i]
}

func newOffsets(n int) *offsets {
	u := &offsets{parent: make([]int, n), delta: make([]int, n)}
	for i := range u.parent {
		u.parent[i] = i
	}
	return u
}

// find is i's root and i's step number relative to it.
func (u *offsets) find(i int) (int, int) {
	d := 0
	for u.parent[i] != i {
		d += u.delta[i]
		i = u.parent[i]
	}
	return i, d
}

// relate records that end b is d steps after end a, and reports whether
// that agrees with what is known.
func (u *offsets) relate(a, b, d int) bool {
	ra, da := u.find(a)
	rb, db := u.find(b)
	if ra == rb {
		return db-da == d
	}
	// step(b) = step(a) + d: rb's number relative to ra is da + d − db.
	u.parent[rb], u.delta[rb] = ra, da+d-db
	return true
}

// gap is the number of steps from end a to end b when both are in one set,
// else 0.
func (u *offsets) gap(a, b int) int {
	ra, da := u.find(a)
	rb, db := u.find(b)
	if ra != rb {
		return 0
	}
	return db - da
}

// breaks marks the ends whose step number does not rise with time within
// their set (a contradiction: a request preempted, or a window that merged
// two steps).
func (u *offsets) breaks(n int) []bool {
	broken := make([]bool, n)
	last := map[int]int{} // root → latest end seen
	for i := range n {
		r, _ := u.find(i)
		if p, ok := last[r]; ok && u.gap(p, i) < 1 {
			broken[i], broken[p] = true, true
		}
		last[r] = i
	}
	return broken
}
