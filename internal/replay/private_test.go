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
		if _, own := tok.prompt(tt.rec, tt.accumulate); own != tt.want {
			t.Errorf("%s: own ids from %d, want %d", tt.name, own, tt.want)
		}
	}
	first, _ := newTokens(3, 16).prompt(rec(9, nil), false)
	again := newTokens(3, 16)
	again.prompt(rec(9, nil), false)
	second, _ := again.prompt(rec(9, nil), false)
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
// own ids declared private gives the same trace rows, results and summary
// as hashing every block — on one instance, on a cluster whose router
// reads the instances' prefix caches and on a disaggregated one routed on
// prefix affinity, with KV caches small enough to preempt.
func TestPrivatePromptsChangeNothing(t *testing.T) {
	var hits float64
	var preempts int64
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		recs := randomTrace(rng)
		cfg := deploy.Default()
		cfg.TotalKVBlocks = 40 + rng.IntN(100)
		cfg.MaxNumSeqs = 4 + rng.IntN(16)
		switch seed % 3 {
		case 1:
			cfg.Instances = 3
			cfg.Cluster.RoutingPolicy = "weighted"
			cfg.Cluster.RoutingScorers = "precise-prefix-cache:2,prefix-affinity:1,queue-depth:1"
		case 2: // disaggregated: both pools routed on prefix affinity
			cfg.Cluster.PrefillInstances, cfg.Cluster.DecodeInstances = 2, 2
			cfg.Cluster.PDDecider = []string{"always", "prefix-threshold"}[rng.IntN(2)]
			cfg.Cluster.RoutingPolicy = "weighted"
			cfg.Cluster.RoutingScorers = "prefix-affinity:3,queue-depth:1"
		}
		dep, err := deploy.Resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		growth := []string{"", "accumulate"}[rng.IntN(2)]
		run := func(hashAll bool) ([]string, Outcome) {
			var rows []string
			sink := func(rec *tracev2.Record, res *tracev2.SimResult) error {
				rows = append(rows, fmt.Sprintf("%+v %+v", *rec, res))
				return nil
			}
			tr, err := NewTrace(RecordRows(recs), TraceOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := Simulate(context.Background(), Config{Deploy: dep, Seed: 9, ContextGrowth: growth, hashAll: hashAll}, tr, nil, sink)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(rows)
			return rows, out
		}
		a, sa := run(true)
		b, sb := run(false)
		if !slices.Equal(a, b) {
			for i := range a {
				if i >= len(b) || a[i] != b[i] {
					t.Fatalf("seed %d: row %d differs\n all hashed %s\n private    %s", seed, i, a[i], b[min(i, len(b)-1)])
				}
			}
			t.Fatalf("seed %d: %d rows, %d rows", seed, len(a), len(b))
		}
		if !reflect.DeepEqual(sa, sb) {
			t.Fatalf("seed %d: summaries differ\n all hashed %+v\n private    %+v", seed, sa.Summary, sb.Summary)
		}
		hits += sa.Summary.CacheHitRate
		preempts += sa.Summary.PreemptionCount
	}
	t.Logf("100 traces: mean cache hit rate %.2f, %d preemptions", hits/100, preempts)
	if hits == 0 || preempts == 0 {
		t.Errorf("the traces never hit the prefix cache (%g) or never preempt (%d)", hits, preempts)
	}
}
