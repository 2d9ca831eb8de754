package cluster

import (
	"bufio"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/des"
	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

var update = flag.Bool("update", false, "rewrite golden files")

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestScorersGolden: each scorer, and the default mix, on hand-built
// candidate signals, against hand-computed scores and totals.
func TestScorersGolden(t *testing.T) {
	tests := []struct {
		name    string
		scorers string
		blocks  int
		cands   []cand
		parts   [][]float64
		total   []float64
	}{
		{"prefix-affinity: matched run / full blocks", "prefix-affinity:1", 4,
			[]cand{{affinity: 0}, {affinity: 4}, {affinity: 2}},
			[][]float64{{0, 1, 0.5}}, []float64{0, 1, 0.5}},
		{"prefix-affinity: no full block", "prefix-affinity:1", 0,
			[]cand{{}, {}}, [][]float64{{0, 0}}, []float64{0, 0}},
		{"precise-prefix-cache: min-max", "precise-prefix-cache:5", 8,
			[]cand{{cached: 2}, {cached: 6}, {cached: 4}},
			[][]float64{{0, 1, 0.5}}, []float64{0, 1, 0.5}},
		{"precise-prefix-cache: all equal", "precise-prefix-cache:1", 8,
			[]cand{{cached: 3}, {cached: 3}}, [][]float64{{1, 1}}, []float64{1, 1}},
		{"queue-depth: (max − q)/(max − min)", "queue-depth:2", 1,
			[]cand{{queue: 5}, {queue: 1}, {queue: 3}},
			[][]float64{{0, 1, 0.5}}, []float64{0, 1, 0.5}},
		{"queue-depth: all equal", "queue-depth:1", 1,
			[]cand{{queue: 2}, {queue: 2}}, [][]float64{{1, 1}}, []float64{1, 1}},
		{"kv-utilization: 1 − use", "kv-utilization:1", 1,
			[]cand{{kvUtil: 0.2}, {kvUtil: 0.9}}, [][]float64{{0.8, 0.09999999999999998}}, []float64{0.8, 0.09999999999999998}},
		{"load-balance: 1/(1 + queue + batch + in-flight)", "load-balance:1", 1,
			[]cand{{}, {queue: 1, batch: 1, inFlight: 1}}, [][]float64{{1, 0.25}}, []float64{1, 0.25}},
		{
			// Weights 3:2:2 → 3/7, 2/7, 2/7.
			"default mix", DefaultScorers, 4,
			[]cand{{affinity: 4, queue: 4, kvUtil: 0.5}, {affinity: 0, queue: 0, kvUtil: 0}},
			[][]float64{{1, 0}, {0, 1}, {0.5, 1}},
			[]float64{3.0/7 + 2.0/7*0.5, 2.0/7 + 2.0/7},
		},
	}
	for _, tc := range tests {
		sc, err := ParseScorers(tc.scorers)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, s := range sc {
			sum += s.Weight
		}
		for i := range sc {
			sc[i].Weight /= sum
		}
		parts := make([][]float64, len(sc))
		total := make([]float64, len(tc.cands))
		scoreWeighted(sc, tc.cands, tc.blocks, parts, total)
		for s := range parts {
			for k := range parts[s] {
				if !near(parts[s][k], tc.parts[s][k]) {
					t.Errorf("%s: scorer %s candidate %d: got %g, want %g", tc.name, sc[s].Name, k, parts[s][k], tc.parts[s][k])
				}
			}
		}
		for k := range total {
			if !near(total[k], tc.total[k]) {
				t.Errorf("%s: total of candidate %d: got %g, want %g", tc.name, k, total[k], tc.total[k])
			}
		}
	}
}

func TestParseScorers(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"prefix-affinity:3,queue-depth:2", ""},
		{"queue-depth", "want name:weight"},
		{"foo:1", "unknown scorer"},
		{"queue-depth:0", "must be a positive number"},
		{"queue-depth:1,queue-depth:2", "given twice"},
	} {
		_, err := ParseScorers(tc.in)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseScorers(%q): err %v, want %q", tc.in, err, tc.err)
		}
	}
}

// testRouter is a router over n idle instances whose snapshot signals and
// in-flight counts the test sets by hand (the snapshot stays fresh).
func testRouter(t *testing.T, n int, policy RoutingPolicy, scorers string) (*router, []*instance.Instance, *des.Engine) {
	t.Helper()
	eng := des.New()
	var insts []*instance.Instance
	for i := 0; i < n; i++ {
		in, err := instance.New(eng, instance.Config{ID: i, KV: kvcache.Config{Blocks: 64, BlockSize: 4}, MaxNumSeqs: 4,
			MaxNumBatchedTokens: 64, MaxModelLen: 64, Latency: &fake.Linear{Base: 10}})
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, in)
	}
	cfg := Config{Routing: policy, SnapshotRefreshUs: 1 << 40}
	if scorers != "" {
		cfg.Scorers, _ = ParseScorers(scorers)
	}
	rt := newRouter(&cfg, insts, make([]int, n), rand.New(rand.NewPCG(1, 2)), nil)
	rt.snapOK = true
	return rt, insts, eng
}

// TestPoliciesGolden: every routing policy on a hand-built state.
func TestPoliciesGolden(t *testing.T) {
	// queue, batch, in-flight: effective loads 9, 3, 6, 3.
	state := []struct{ q, b, f int }{{4, 4, 1}, {0, 2, 1}, {1, 1, 4}, {1, 1, 1}}
	req := &instance.Request{ID: 1, Prompt: tokens(9, 1)}
	tests := []struct {
		policy RoutingPolicy
		want   []int // successive picks on the same state
	}{
		{RoundRobin, []int{0, 1, 2, 3, 0}},
		{LeastLoaded, nil},      // 1 and 3 tie at 3: either
		{LeastOutstanding, nil}, // 0, 1 and 3 tie at 1
		{AlwaysBusiest, []int{0, 0}},
	}
	for _, tc := range tests {
		rt, _, _ := testRouter(t, len(state), tc.policy, "")
		for i, s := range state {
			rt.snap[i] = signals{queue: s.q, batch: s.b}
			rt.load[i] = s.f
		}
		pool := []int{0, 1, 2, 3}
		if tc.want != nil {
			for k, w := range tc.want {
				if got := rt.pick(0, req, pool, poolAll); got != w {
					t.Errorf("%s pick %d: got %d, want %d", tc.policy, k, got, w)
				}
			}
			continue
		}
		allowed := map[RoutingPolicy][]int{LeastLoaded: {1, 3}, LeastOutstanding: {0, 1, 3}}[tc.policy]
		seen := map[int]bool{}
		for k := 0; k < 60; k++ {
			got := rt.pick(0, req, pool, poolAll)
			if !containsInt(allowed, got) {
				t.Fatalf("%s: picked %d, want one of %v", tc.policy, got, allowed)
			}
			seen[got] = true
		}
		if len(seen) != len(allowed) {
			t.Errorf("%s: ties broken to %v only, want all of %v", tc.policy, seen, allowed)
		}
	}
	// Random spreads over every instance.
	rt, _, _ := testRouter(t, 4, Random, "")
	seen := map[int]bool{}
	for k := 0; k < 100; k++ {
		seen[rt.pick(0, req, []int{0, 1, 2, 3}, poolAll)] = true
	}
	if len(seen) != 4 {
		t.Errorf("random reached %v", seen)
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestPrefixAffinityFollowsRouting: the router-side index learns where a
// prefix went; the next request sharing it goes there although another
// instance is less loaded, and its matched run is partial when only the
// prefix matches.
func TestPrefixAffinityFollowsRouting(t *testing.T) {
	rt, _, _ := testRouter(t, 3, Weighted, "prefix-affinity:3,queue-depth:1")
	pool := []int{0, 1, 2}
	shared := tokens(8, 500)
	a := &instance.Request{ID: 1, Prompt: append(append([]int32(nil), shared...), tokens(8, 1)...)}
	rt.snap[1].queue = 0
	rt.snap[0].queue, rt.snap[2].queue = 2, 2
	if got := rt.pick(0, a, pool, poolAll); got != 1 {
		t.Fatalf("first request: got instance %d, want the empty queue 1", got)
	}
	rt.snap[1].queue = 3 // instance 1 is now the busiest
	b := &instance.Request{ID: 2, Prompt: append(append([]int32(nil), shared...), tokens(8, 900)...)}
	got := rt.pick(0, b, pool, poolAll)
	// Instance 1: affinity 2/4 = 0.5, queue 0 → 3/4·0.5 = 0.375;
	// instances 0 and 2: affinity 0, queue (3−2)/(3−2) = 1 → 1/4.
	if got != 1 || !near(rt.total[1], 0.375) || !near(rt.total[0], 0.25) {
		t.Errorf("second request: got %d with totals %v, want 1 with 0.375 against 0.25", got, rt.total)
	}
	if rt.prefix[1].len() != 6 || rt.prefix[0].len() != 0 {
		t.Errorf("index sizes %d, %d: want 6 blocks on instance 1, none on 0", rt.prefix[1].len(), rt.prefix[0].len())
	}
}

// TestLRUEvictsOldest: the router-side index keeps the most recent blocks,
// a prefix's first block last.
func TestLRUEvictsOldest(t *testing.T) {
	l := newLRU(3, nil)
	h := func(i uint64) kvcache.Hash { return kvcache.Hash{Lo: i} }
	l.record([]kvcache.Hash{h(1), h(2)}, 2, 0, false)
	l.record([]kvcache.Hash{h(3), h(4)}, 2, 0, false) // evicts 2: block 1 of the first prefix was recorded after it
	if got := l.match([]kvcache.Hash{h(1), h(2)}); got != 1 {
		t.Errorf("prefix 1,2 after an eviction: matched %d, want 1 (its tail went first)", got)
	}
	if got := l.match([]kvcache.Hash{h(3), h(4)}); got != 2 || l.len() != 3 {
		t.Errorf("match 3,4: got %d (size %d), want 2 (3)", got, l.len())
	}
}

// TestStalenessDirection: instance 1 was idle and instance 0 busy when the
// snapshot was taken; now 1 holds a batch and a queue and 0 is idle. A
// decision within the refresh interval trusts the snapshot and picks 1; a
// live one (interval 0) picks 0. Snapshot ages never exceed the interval
// (INV-7).
func TestStalenessDirection(t *testing.T) {
	rt, insts, eng := testRouter(t, 2, Weighted, "queue-depth:1")
	for k := 0; k < 6; k++ {
		if err := insts[1].Submit(&instance.Request{ID: int64(10 + k), Prompt: tokens(8, int32(100*k)), OutputLen: 5}); err != nil {
			t.Fatal(err)
		}
	}
	for eng.Step(0) {
	}
	if q, b := insts[1].QueueDepth(), insts[1].BatchSize(); q == 0 || b == 0 {
		t.Fatalf("instance 1: queue %d, batch %d; want both busy", q, b)
	}
	rt.snap[0], rt.snap[1] = signals{queue: 5}, signals{queue: 0}
	rt.snapAt, rt.refresh = 0, 50_000
	r := &instance.Request{ID: 1, Prompt: tokens(4, 1)}
	if got := rt.pick(40_000, r, []int{0, 1}, poolAll); got != 1 || rt.snapshotAge(40_000) != 40_000 {
		t.Errorf("within the interval: got instance %d (snapshot age %d), want the stale choice 1", got, rt.snapshotAge(40_000))
	}
	if got := rt.pick(90_000, r, []int{0, 1}, poolAll); got != 0 || rt.snapshotAge(90_000) != 0 {
		t.Errorf("past the interval: got instance %d (age %d), want a refresh and instance 0", got, rt.snapshotAge(90_000))
	}
	rt.snap[0], rt.snap[1] = signals{queue: 5}, signals{queue: 0}
	rt.refresh = 0
	if got := rt.pick(90_001, r, []int{0, 1}, poolAll); got != 0 || rt.snapshotAge(90_001) != 0 {
		t.Errorf("live: got instance %d, want 0", got)
	}
}

// TestStalenessImbalance drives a cluster: two instances serving one
// request at a time, routed by queue depth alone. Live signals keep the
// queues even; a snapshot refreshed every 10 s (taken when both were
// empty) sees no difference, so decisions fall to the tie-break and the
// queues drift apart: the worst queueing delay grows.
func TestStalenessImbalance(t *testing.T) {
	run := func(refresh int64) (spread int64, ttftMax int64) {
		var ics []instance.Config
		for i := 0; i < 2; i++ {
			ics = append(ics, instance.Config{KV: kvcache.Config{Blocks: 256, BlockSize: 4}, MaxNumSeqs: 1,
				MaxNumBatchedTokens: 256, MaxModelLen: 256, Latency: &fake.Linear{Base: 1000, PerDecode: 10}, FastForward: true})
		}
		var reqs []*instance.Request
		for i := 0; i < 200; i++ {
			reqs = append(reqs, &instance.Request{ID: int64(i + 1), ArrivalUs: int64(i) * 1200, Prompt: tokens(8, int32(i*10)), OutputLen: 2, MaxOutputLen: 2})
		}
		var maxTTFT int64
		c, err := New(Config{Instances: ics, Routing: Weighted, Scorers: []Scorer{{ScorerQueueDepth, 1}}, SnapshotRefreshUs: refresh, Seed: 3},
			&sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { maxTTFT = max(maxTTFT, res.TTFTUs) }))
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		r := out.Info.PerInstance
		return abs64(r[0].Routed - r[1].Routed), maxTTFT
	}
	liveSpread, liveTTFT := run(0)
	staleSpread, staleTTFT := run(10_000_000)
	t.Logf("live: routed spread %d, max TTFT %d µs; stale: spread %d, max TTFT %d µs", liveSpread, liveTTFT, staleSpread, staleTTFT)
	if !(staleSpread > liveSpread && staleTTFT > liveTTFT) {
		t.Errorf("staleness did not worsen balance: live spread %d TTFT %d, stale spread %d TTFT %d", liveSpread, liveTTFT, staleSpread, staleTTFT)
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestSnapshotAgeNeverExceedsInterval: INV-7 over random clusters, read
// from the decisions log.
func TestSnapshotAgeNeverExceedsInterval(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 8))
		cfg := randomCluster(rng)
		ws := randomWorkload(rng, cfg.Instances[0].MaxModelLen)
		o := simulate(cfg, ws, true, 0)
		sc := bufio.NewScanner(strings.NewReader(o.decisions))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var d struct {
				T   int64  `json:"t_us"`
				Age *int64 `json:"snapshot_age_us"`
			}
			if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
				t.Fatalf("seed %d: decision line %q: %v", seed, sc.Text(), err)
			}
			if d.Age != nil && *d.Age > cfg.SnapshotRefreshUs {
				t.Fatalf("seed %d: INV-7: snapshot age %d µs > interval %d µs", seed, *d.Age, cfg.SnapshotRefreshUs)
			}
		}
	}
}

// TestDecisionsGolden: the decisions log of a small weighted cluster with
// a shared prefix (testdata/decisions.golden; -update rewrites it).
func TestDecisionsGolden(t *testing.T) {
	var ics []instance.Config
	for i := 0; i < 3; i++ {
		ics = append(ics, instance.Config{KV: kvcache.Config{Blocks: 64, BlockSize: 4}, MaxNumSeqs: 2,
			MaxNumBatchedTokens: 64, MaxModelLen: 128, Latency: &fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2}, FastForward: true})
	}
	sys := tokens(12, 7000)
	var reqs []*instance.Request
	for i := 0; i < 6; i++ {
		p := append(append([]int32(nil), sys...), tokens(5, int32(100*i))...)
		reqs = append(reqs, &instance.Request{ID: int64(i + 1), ArrivalUs: int64(i) * 40, Prompt: p, OutputLen: 4, MaxOutputLen: 4})
	}
	var dec strings.Builder
	c, err := New(Config{Instances: ics, Routing: Weighted, Scorers: []Scorer{{ScorerPrefixAffinity, 3}, {ScorerPrecisePrefixCache, 1},
		{ScorerQueueDepth, 2}, {ScorerKVUtilization, 2}, {ScorerLoadBalance, 1}}, SnapshotRefreshUs: 50, Seed: 42, Decisions: &dec},
		&sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "decisions.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(dec.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if dec.String() != string(want) {
		t.Errorf("decisions differ from %s:\n got %s\nwant %s", path, dec.String(), want)
	}
}

// TestLRUAgainstModel: random touches and matches agree with a plain model
// (a recency list) at capacities that force evictions and probe-run shifts.
func TestLRUAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for round := 0; round < 50; round++ {
		capacity := 1 + rng.IntN(40)
		l := newLRU(capacity, nil)
		var order []kvcache.Hash // most recent first
		for op := 0; op < 2000; op++ {
			// Few distinct low words: long probe runs and collisions.
			h := kvcache.Hash{Lo: uint64(rng.IntN(64)) << uint(rng.IntN(2)*40), Hi: uint64(rng.IntN(3))}
			if rng.IntN(3) == 0 {
				want := 0
				for _, x := range order {
					if x == h {
						want = 1
					}
				}
				if got := l.match([]kvcache.Hash{h}); got != want {
					t.Fatalf("round %d op %d: match %v = %d, model %d", round, op, h, got, want)
				}
				continue
			}
			l.touch(h, false)
			for i, x := range order {
				if x == h {
					order = append(order[:i], order[i+1:]...)
					break
				}
			}
			order = append([]kvcache.Hash{h}, order...)
			if len(order) > capacity {
				order = order[:capacity]
			}
			if l.len() != len(order) {
				t.Fatalf("round %d op %d: size %d, model %d", round, op, l.len(), len(order))
			}
		}
	}
}

// TestFirstFilterAgainstModel: several indexes share a first-block filter;
// after random records of chained block hashes (prompts of few distinct
// blocks, so prefixes repeat) the filter's counts equal the flagged first
// blocks the indexes hold, and it holds every first block an index holds.
func TestFirstFilterAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for round := 0; round < 30; round++ {
		f := newFirstFilter()
		ls := []*lru{newLRU(1+rng.IntN(30), f), newLRU(1+rng.IntN(30), f), newLRU(1+rng.IntN(30), f)}
		firsts := map[kvcache.Hash]bool{}
		for op := 0; op < 400; op++ {
			hs := make([]kvcache.Hash, rng.IntN(5))
			var prev kvcache.Hash
			for k := range hs {
				prev = kvcache.HashBlock(prev, []int32{int32(rng.IntN(3))})
				hs[k] = prev
			}
			if len(hs) > 0 {
				firsts[hs[0]] = true
			}
			ls[rng.IntN(len(ls))].apply(hs, true)
			want := map[uint64]int32{}
			for _, l := range ls {
				for _, nd := range l.nodes {
					if nd.first {
						want[nd.hash.Lo]++
					}
				}
			}
			if !reflect.DeepEqual(f.count, want) {
				t.Fatalf("round %d op %d: filter counts %v, flagged nodes %v", round, op, f.count, want)
			}
			for h := range firsts {
				for _, l := range ls {
					if l.match([]kvcache.Hash{h}) == 1 && !f.mayHold(h) {
						t.Fatalf("round %d op %d: an index holds first block %v, the filter says none does", round, op, h)
					}
				}
			}
		}
	}
}

// TestPendingMatchesEager: indexes that defer their records (and drop
// superseded ones) answer every read as indexes that apply each record at
// once, when driven as the router drives them: a match only where the
// first-block filter may hold the prompt's first block, which must be
// never where the eager indexes hold it. Prompts mix first blocks seen
// before (shared prefixes) and new ones (disjoint records), over small
// capacities so that records are dropped, applied early and evicted; some
// records have a private tail, kept as the request's stamp alone.
func TestPendingMatchesEager(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var dropped int
	for round := 0; round < 40; round++ {
		fe, fl := newFirstFilter(), newFirstFilter()
		var eager, lazy []*lru
		for i := 0; i < 3; i++ {
			c := 1 + rng.IntN(40)
			eager, lazy = append(eager, newLRU(c, fe)), append(lazy, newLRU(c, fl))
		}
		fresh := int32(1000)
		var stamps uint64
		var last []kvcache.Hash
		var lastShared int
		var lastStamp uint64
		for op := 0; op < 600; op++ {
			hs := make([]kvcache.Hash, 1+rng.IntN(8))
			var prev kvcache.Hash
			for k := range hs {
				tok := int32(rng.IntN(3))
				if k == 0 && rng.IntN(2) == 0 {
					fresh++
					tok = fresh
				}
				prev = kvcache.HashBlock(prev, []int32{tok})
				hs[k] = prev
			}
			// A private tail (stand-ins of a new request), or the last
			// request picked again. As the router does, a first block that
			// is a stand-in may be held only if its request was picked
			// before.
			shared, stamp, picked := len(hs), uint64(0), false
			switch rng.IntN(4) {
			case 0:
				stamps++
				shared, stamp = rng.IntN(len(hs)+1), stamps
				for k := shared; k < len(hs); k++ {
					hs[k] = standIn(stamp, k)
				}
			case 1:
				if last != nil {
					hs, shared, stamp, picked = last, lastShared, lastStamp, true
				}
			}
			last, lastShared, lastStamp = hs, shared, stamp
			may := fl.mayHold(hs[0])
			if shared == 0 {
				may = picked
			}
			for i := range eager {
				want := eager[i].match(hs)
				if !may && want != 0 {
					t.Fatalf("round %d op %d: the filter holds %v nowhere, eager index %d matches %d", round, op, hs[0], i, want)
				}
				if may {
					if got := lazy[i].match(hs); got != want {
						t.Fatalf("round %d op %d index %d: lazy match %d, eager %d", round, op, i, got, want)
					}
				}
			}
			i := rng.IntN(len(eager))
			eager[i].apply(hs, shared > 0)
			before := len(lazy[i].recs) - lazy[i].recAt + 1
			lazy[i].record(hs[:shared], len(hs), stamp, !may)
			if after := len(lazy[i].recs) - lazy[i].recAt; after < before {
				dropped += before - after
			}
			if op%97 == 0 {
				for k := range eager {
					if eager[k].len() != lazy[k].len() {
						t.Fatalf("round %d op %d index %d: lazy holds %d, eager %d", round, op, k, lazy[k].len(), eager[k].len())
					}
					for _, nd := range eager[k].nodes {
						if lazy[k].find(nd.hash) < 0 {
							t.Fatalf("round %d op %d index %d: lazy lacks %v", round, op, k, nd.hash)
						}
					}
				}
			}
		}
	}
	if dropped == 0 {
		t.Error("no record was ever dropped or applied early")
	}
}

// TestStandInsSpread: stand-ins of consecutive requests and blocks spread
// over an index's home slots and tags like hashes do (the router's indexes
// probe linearly from Lo and tag slots with Hi's top bits; stand-ins that
// shared Lo made a replay with shared prefixes 100× slower), and are
// distinct.
func TestStandInsSpread(t *testing.T) {
	const mask = 1<<15 - 1
	homes, tags, all := map[uint64]bool{}, map[uint32]bool{}, map[kvcache.Hash]bool{}
	n := 0
	for stamp := uint64(1); stamp <= 1000; stamp++ {
		for k := 0; k < 32; k++ {
			h := standIn(stamp, k)
			homes[h.Lo&mask], tags[slotTag(h)], all[h] = true, true, true
			n++
		}
	}
	// 32,000 values in 32,768 slots: a uniform spread fills about 63%.
	if len(homes) < 19000 || len(tags) < 24000 || len(all) != n {
		t.Errorf("%d stand-ins: %d home slots of %d, %d tags, %d distinct", n, len(homes), mask+1, len(tags), len(all))
	}
}

// len is the number of hashes held.
func (l *lru) len() int {
	l.flush()
	return len(l.nodes)
}
