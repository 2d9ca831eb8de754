package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/tracev2"
)

// TestPromptOwnership: a row's own fresh ids start after its shared part
// (group prefix or hash-id blocks); an accumulating session round has none
// (the next round resends it), nor has a row whose id is not tracked or
// whose prompt is all shared; a repeated id gets fresh ids that differ from
// the first row's.
func TestPromptOwnership(t *testing.T) {
	tok := newTokens(3, 16)
	rec := func(id int64, mod func(*tracev2.Record)) *tracev2.Record {
		r := &tracev2.Record{RequestID: id, InputTokens: 100}
		if mod != nil {
			mod(r)
		}
		return r
	}
	tests := []struct {
		name       string
		rec        *tracev2.Record
		accumulate bool
		want       int
	}{
		{"fresh", rec(1, nil), false, 0},
		{"group prefix", rec(2, func(r *tracev2.Record) { r.PrefixGroup, r.PrefixLength = "g", 40 }), false, 40},
		{"hash ids", rec(3, func(r *tracev2.Record) { r.HashIDs = []int64{7, 8} }), false, 32},
		{"hash ids over the whole prompt", rec(6, func(r *tracev2.Record) { r.HashIDs = []int64{1, 2, 3, 4, 5, 6, 7} }), false, -1},
		{"session, not accumulating", rec(4, func(r *tracev2.Record) { r.SessionID = "s" }), false, 0},
		{"accumulating session", rec(5, func(r *tracev2.Record) { r.SessionID = "s" }), true, -1},
		{"id beyond the tracked range", rec(maxTrackedID, nil), false, -1},
		{"negative id", rec(-1, nil), false, -1},
		{"repeated id", rec(1, nil), false, 0},
	}
	for _, tt := range tests {
		if _, own, _ := tok.prompt(new(promptBuf), tt.rec, tt.accumulate, false, nil, false); own != tt.want {
			t.Errorf("%s: own ids from %d, want %d", tt.name, own, tt.want)
		}
	}
	first, _, _ := newTokens(3, 16).prompt(new(promptBuf), rec(9, nil), false, false, nil, false)
	again := newTokens(3, 16)
	again.prompt(new(promptBuf), rec(9, nil), false, false, nil, false)
	second, _, _ := again.prompt(new(promptBuf), rec(9, nil), false, false, nil, false)
	if slices.Equal(first, second) {
		t.Error("a repeated id got the first row's fresh ids")
	}
}

// randomTrace draws rows with prefix groups, hash ids, accumulating
// sessions, repeated and untracked ids, repeated rows, and bursts that fill
// a small KV cache.
func randomTrace(rng *rand.Rand) []tracev2.Record {
	var out []tracev2.Record
	var t int64
	round := map[string]int{}
	for i := 0; i < 60+rng.IntN(60); i++ {
		t += rng.Int64N(40_000)
		r := tracev2.Record{RequestID: int64(i), ArrivalTimeUs: t, InputTokens: 1 + rng.IntN(300),
			OutputTokens: 1 + rng.IntN(80), Status: "ok"}
		switch rng.IntN(6) {
		case 0:
			r.PrefixGroup, r.PrefixLength = fmt.Sprint("g", rng.IntN(2)), 16+rng.IntN(200)
		case 1:
			r.HashIDs = []int64{int64(rng.IntN(3)), int64(rng.IntN(3))}
		case 2:
			s := fmt.Sprint("s", rng.IntN(4))
			r.SessionID, r.RoundIndex = s, round[s]
			round[s]++
			r.InputTokens += 200 * r.RoundIndex
		}
		switch rng.IntN(12) {
		case 0:
			r.RequestID = int64(rng.IntN(i + 1)) // a repeated id
		case 1:
			r.RequestID = maxTrackedID + int64(i) // not tracked
		case 2:
			if i > 0 { // a repeated row (a retry logged twice): same id, same prompt
				r = out[rng.IntN(i)]
				r.ArrivalTimeUs = t
			}
		}
		out = append(out, r)
	}
	return out
}

// TestPrivatePromptsChangeNothing: replaying random traces with the rows'
// own ids declared private (and left unwritten: nothing reads them) gives
// the same trace rows, results and summary as hashing every block — on one
// instance, on a cluster whose router reads the instances' prefix caches,
// on a disaggregated one routed on prefix affinity, and with a CPU tier
// (which hashes every block, so the ids must be written), with KV caches
// small enough to preempt.
func TestPrivatePromptsChangeNothing(t *testing.T) {
	var hits float64
	var preempts int64
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		recs := randomTrace(rng)
		blocks, seqs := 40+rng.IntN(100), 4+rng.IntN(16)
		dep := testDeploy(t, rng, int(seed%4), blocks, seqs)
		growth := []string{"", "accumulate"}[rng.IntN(2)]
		a, sa := replayRows(t, recs, Config{Deploy: dep, Seed: 9, ContextGrowth: growth, hashAll: true})
		b, sb := replayRows(t, recs, Config{Deploy: dep, Seed: 9, ContextGrowth: growth})
		sameRows(t, fmt.Sprintf("seed %d, all hashed / private", seed), a, b, sa, sb)
		hits += sa.Summary.CacheHitRate
		preempts += sa.Summary.PreemptionCount
	}
	t.Logf("100 traces: mean cache hit rate %.2f, %d preemptions", hits/100, preempts)
	if hits == 0 || preempts == 0 {
		t.Errorf("the traces never hit the prefix cache (%g) or never preempt (%d)", hits, preempts)
	}
}

// testDeploy is Qwen3-14B on H100s with blocks KV blocks and seqs
// sequences an instance, small enough to preempt, of a kind: 0 one
// instance, 1 three behind a router that reads their prefix caches, 2 a
// disaggregated pair of pools routed on prefix affinity, 3 one instance
// with a CPU tier.
func testDeploy(t *testing.T, rng *rand.Rand, kind, blocks, seqs int) *deploy.Resolved {
	t.Helper()
	cfg := deploy.Default()
	cfg.TotalKVBlocks, cfg.MaxNumSeqs = blocks, seqs
	switch kind {
	case 1:
		cfg.Instances = 3
		cfg.Cluster.RoutingPolicy = "weighted"
		cfg.Cluster.RoutingScorers = "precise-prefix-cache:2,prefix-affinity:1,queue-depth:1"
	case 2:
		cfg.Cluster.PrefillInstances, cfg.Cluster.DecodeInstances = 2, 2
		cfg.Cluster.PDDecider = []string{"always", "prefix-threshold"}[rng.IntN(2)]
		cfg.Cluster.RoutingPolicy = "weighted"
		cfg.Cluster.RoutingScorers = "prefix-affinity:3,queue-depth:1"
	case 3:
		cfg.KVCPUBlocks = 20 + rng.IntN(60)
	}
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dep
}

// replayRows replays recs with cfg and returns every trace row and
// SimResult the sink saw, sorted, and the outcome.
func replayRows(t *testing.T, recs []tracev2.Record, cfg Config) ([]string, Outcome) {
	t.Helper()
	var rows []string
	sink := func(rec *tracev2.Record, res *tracev2.SimResult) error {
		rows = append(rows, fmt.Sprintf("%+v %+v", *rec, res))
		return nil
	}
	tr, err := NewTrace(RecordRows(recs), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Simulate(context.Background(), cfg, tr, nil, sink)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	return rows, out
}

// sameRows fails the test unless two replays gave the same rows and outcome.
func sameRows(t *testing.T, what string, a, b []string, sa, sb Outcome) {
	t.Helper()
	if !slices.Equal(a, b) {
		for i := range a {
			if i >= len(b) || a[i] != b[i] {
				t.Fatalf("%s: row %d differs\n%s\n%s", what, i, a[i], b[min(i, len(b)-1)])
			}
		}
		t.Fatalf("%s: %d rows, %d rows", what, len(a), len(b))
	}
	if !reflect.DeepEqual(sa, sb) {
		t.Fatalf("%s: summaries differ\n%+v\n%+v", what, sa.Summary, sb.Summary)
	}
}

// TestRecyclingChangesNothing: a one-instance replay that reuses its
// requests and their buffers once they have ended gives the rows, results
// and summary of one that allocates every request afresh, on random traces
// with deadlines (requests that time out while decoding lazily leave stale
// entries behind), preemptions and accumulating sessions.
func TestRecyclingChangesNothing(t *testing.T) {
	var timedOut, preempts int64
	for seed := uint64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 6))
		recs := randomTrace(rng)
		for i := range recs {
			recs[i].OutputTokens += rng.IntN(400) // long decodes run lazily
			if rng.IntN(3) == 0 {
				recs[i].DeadlineUs = recs[i].ArrivalTimeUs + 50_000 + rng.Int64N(8_000_000)
			}
		}
		blocks, seqs := 40+rng.IntN(100), 4+rng.IntN(16)
		dep := testDeploy(t, rng, 0, blocks, seqs)
		growth := []string{"", "accumulate"}[rng.IntN(2)]
		a, sa := replayRows(t, recs, Config{Deploy: dep, Seed: 9, ContextGrowth: growth, noRecycle: true})
		b, sb := replayRows(t, recs, Config{Deploy: dep, Seed: 9, ContextGrowth: growth})
		sameRows(t, fmt.Sprintf("seed %d, fresh / recycled", seed), a, b, sa, sb)
		timedOut += sa.Summary.TimedOutRequests
		preempts += sa.Summary.PreemptionCount
	}
	t.Logf("60 traces: %d timed out, %d preemptions", timedOut, preempts)
	if timedOut == 0 || preempts == 0 {
		t.Errorf("the traces never time out (%d) or never preempt (%d)", timedOut, preempts)
	}
}

// hashTrace draws rows like Mooncake's: unique ids, prompts made of hash-id
// regions (conversations resending their predecessors' hash ids and a
// shared system region, now and then a region met before under another
// prefix), some with a fresh tail, prompt lengths that end anywhere in a
// block, and an eighth of the rows longer than any test deployment's
// context.
func hashTrace(rng *rand.Rand, region int) []tracev2.Record {
	var out []tracev2.Record
	var t int64
	convs := make([][]int64, 6)
	next := int64(100)
	for i := 0; i < 50+rng.IntN(80); i++ {
		t += rng.Int64N(60_000)
		c := rng.IntN(len(convs))
		if len(convs[c]) == 0 || rng.IntN(5) == 0 {
			convs[c] = []int64{int64(rng.IntN(2))} // a new conversation on a system region
		}
		for k := rng.IntN(3); k >= 0; k-- {
			convs[c] = append(convs[c], next)
			next++
		}
		if rng.IntN(6) == 0 { // a region met before under another prefix
			convs[c] = append(convs[c], 100+rng.Int64N(next-100))
		}
		hashes := slices.Clone(convs[c])
		if rng.IntN(8) == 0 { // longer than the test deployments' context: dropped unread
			for k := 0; k < 4000/region; k++ {
				hashes = append(hashes, next)
				next++
			}
		}
		n := (len(hashes)-1)*region + 1 + rng.IntN(region) // ends inside the last region
		if rng.IntN(4) == 0 {
			n += 1 + rng.IntN(2*region) // a fresh tail
		}
		out = append(out, tracev2.Record{RequestID: int64(i), ArrivalTimeUs: t, InputTokens: n,
			OutputTokens: 1 + rng.IntN(60), Status: "ok", HashIDs: hashes})
	}
	return out
}

// TestHashPromptsChangeNothing: replaying hash-id traces with unique ids,
// their blocks' hashes computed once per shared region (chains), no id
// written that nothing reads, and all-shared prompts owning their
// generated tokens, the regions hashed ahead on the reading goroutine and
// the overlong rows one instance drops left unhashed (driver.unread),
// gives the rows, results and summary of the reference (every id drawn,
// every block hashed from its ids) — on one instance, a prefix-aware
// cluster, a disaggregated one, and with a CPU tier.
func TestHashPromptsChangeNothing(t *testing.T) {
	var hits float64
	var dropped int64
	for seed := uint64(0); seed < 80; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		region := []int{16, 32, 48, 40}[seed%4] // 40: blocks straddle regions (no chains)
		recs := hashTrace(rng, region)
		blocks, seqs := 60+rng.IntN(120), 4+rng.IntN(12)
		dep := testDeploy(t, rng, int(seed%4), blocks, seqs)
		a, sa := replayRows(t, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: region, hashAll: true})
		b, sb := replayRows(t, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: region, UniqueIDs: true})
		sameRows(t, fmt.Sprintf("seed %d, reference / shortcuts", seed), a, b, sa, sb)
		hits += sa.Summary.CacheHitRate
		dropped += sa.Summary.DroppedUnservable
	}
	t.Logf("80 traces: mean cache hit rate %.2f, %d requests dropped as too long", hits/80, dropped)
	if hits/80 < 0.2 || dropped == 0 {
		t.Errorf("mean cache hit rate %.2f, %d requests dropped: the traces share too little or fit every context", hits/80, dropped)
	}
}
