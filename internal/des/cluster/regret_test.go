package cluster

import (
	"bufio"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

// TestCounterfactualRegret: regret is the best score minus the chosen
// one's, by the policy's own scores (zero for a score-based policy: BLIS's
// cluster guide, "Counterfactual regret for weighted policies") or by
// −effective load for round-robin, whose regret is what it is for.
func TestCounterfactualRegret(t *testing.T) {
	// queue, batch, in-flight: effective loads 9, 3, 6, 3.
	state := []struct{ q, b, f int }{{4, 4, 1}, {0, 2, 1}, {1, 1, 4}, {1, 1, 1}}
	req := &instance.Request{ID: 1, Prompt: tokens(9, 1)}
	pool := []int{0, 1, 2, 3}
	tests := []struct {
		policy  RoutingPolicy
		scorers string
		regrets []float64 // per successive pick
		top     [][]int   // top 2 instances per pick
	}{
		{RoundRobin, "", []float64{6, 0, 3, 0}, [][]int{{1, 3}, {1, 3}, {1, 3}, {1, 3}}},
		{LeastLoaded, "", []float64{0, 0}, nil},
		{AlwaysBusiest, "", []float64{0, 0}, [][]int{{0, 2}, {0, 2}}},
		{Weighted, "queue-depth:1,load-balance:1", []float64{0, 0}, nil},
	}
	for _, tc := range tests {
		rt, _, _ := testRouter(t, len(state), tc.policy, tc.scorers)
		rt.cf = newCounterfactual(2)
		for i, s := range state {
			rt.snap[i] = signals{queue: s.q, batch: s.b}
			rt.load[i] = s.f
		}
		for k, want := range tc.regrets {
			rt.pick(0, req, pool, poolAll)
			if rt.cf.regret != want {
				t.Errorf("%s pick %d: regret %g, want %g", tc.policy, k, rt.cf.regret, want)
			}
			var top []int
			for _, p := range rt.cf.top {
				top = append(top, pool[p])
			}
			if tc.top != nil && !reflect.DeepEqual(top, tc.top[k]) {
				t.Errorf("%s pick %d: top %v, want %v", tc.policy, k, top, tc.top[k])
			}
		}
	}
	rt, _, _ := testRouter(t, len(state), RoundRobin, "")
	rt.cf = newCounterfactual(2)
	for i, s := range state {
		rt.snap[i] = signals{queue: s.q, batch: s.b}
		rt.load[i] = s.f
	}
	for range 4 {
		rt.pick(0, req, pool, poolAll)
	}
	got := rt.cf.summaries(RoundRobin, false)
	// Regrets 6, 0, 3, 0: p99 of {0, 0, 3, 6} = 3 + 0.97·3.
	if len(got) != 1 || got[0].Decisions != 4 || got[0].Mean != 2.25 || got[0].Max != 6 || got[0].Positive != 2 ||
		math.Abs(got[0].P99-5.91) > 1e-9 || got[0].Policy != "round-robin" || got[0].Pool != "" {
		t.Errorf("summary %+v", got)
	}
}

// TestCounterfactualDecisions: every decision line of a run carries the
// regret its candidates' signals give and its top k, and the outcome's
// summary counts every decision.
func TestCounterfactualDecisions(t *testing.T) {
	var ics []instance.Config
	for i := 0; i < 3; i++ {
		ics = append(ics, instance.Config{KV: kvcache.Config{Blocks: 64, BlockSize: 4}, MaxNumSeqs: 2,
			MaxNumBatchedTokens: 64, MaxModelLen: 128, Latency: &fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2}, FastForward: true})
	}
	var reqs []*instance.Request
	for i := 0; i < 40; i++ {
		reqs = append(reqs, &instance.Request{ID: int64(i + 1), ArrivalUs: int64(i) * 30, Prompt: tokens(5+i%7, int32(100*i)),
			OutputLen: 1 + (i*7)%37, MaxOutputLen: 64})
	}
	run := func() (string, Outcome) {
		var dec strings.Builder
		var rs []*instance.Request
		for _, r := range reqs {
			rs = append(rs, &instance.Request{ID: r.ID, ArrivalUs: r.ArrivalUs, Prompt: r.Prompt, OutputLen: r.OutputLen, MaxOutputLen: r.MaxOutputLen})
		}
		c, err := New(Config{Instances: ics, Routing: RoundRobin, Seed: 3, Decisions: &dec, CounterfactualK: 2},
			&sim.SliceSource{Reqs: rs}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		return dec.String(), out
	}
	dec, out := run()
	if again, _ := run(); again != dec {
		t.Error("the same run twice wrote different decision logs")
	}
	type candidate struct {
		Instance   int
		QueueDepth int `json:"queue_depth"`
		BatchSize  int `json:"batch_size"`
		InFlight   int `json:"in_flight"`
		Score      float64
	}
	var lines, positive int
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(dec))
	for sc.Scan() {
		var d struct {
			Chosen         int
			Regret         float64
			Candidates     []candidate
			Counterfactual []candidate
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		lines++
		best, chosen := math.Inf(-1), 0.0
		for _, c := range d.Candidates {
			s := -float64(c.QueueDepth + c.BatchSize + c.InFlight)
			best = max(best, s)
			if c.Instance == d.Chosen {
				chosen = s
			}
		}
		if d.Regret != best-chosen || len(d.Counterfactual) != 2 || d.Counterfactual[0].Score != best ||
			d.Counterfactual[1].Score > d.Counterfactual[0].Score {
			t.Errorf("line %d: %s", lines, sc.Text())
		}
		if d.Regret > 0 {
			positive++
		}
		sum += d.Regret
	}
	r := out.Info.Regret
	if len(r) != 1 || r[0].Decisions != int64(lines) || lines != 40 || r[0].Positive != int64(positive) || positive == 0 ||
		math.Abs(r[0].Mean-sum/float64(lines)) > 1e-12 {
		t.Errorf("summary %+v over %d lines, %d positive", r, lines, positive)
	}
}

// TestCounterfactualOnlyWatches: a run scored for regret routes, and ends,
// as the same run without.
func TestCounterfactualOnlyWatches(t *testing.T) {
	for _, policy := range []RoutingPolicy{RoundRobin, Random, LeastOutstanding, Weighted} {
		var routes [2][]int
		var outs [2]Outcome
		for j, k := range []int{0, 3} {
			var ics []instance.Config
			for i := 0; i < 3; i++ {
				ics = append(ics, instance.Config{KV: kvcache.Config{Blocks: 64, BlockSize: 4}, MaxNumSeqs: 2,
					MaxNumBatchedTokens: 64, MaxModelLen: 128, Latency: &fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2}, FastForward: true})
			}
			var reqs []*instance.Request
			for i := 0; i < 60; i++ {
				reqs = append(reqs, &instance.Request{ID: int64(i + 1), ArrivalUs: int64(i) * 25, Prompt: tokens(5+i%9, int32(100*(i%4))),
					OutputLen: 1 + (i*7)%37, MaxOutputLen: 64})
			}
			c, err := New(Config{Instances: ics, Routing: policy, Seed: 5, SnapshotRefreshUs: 200, CounterfactualK: k},
				&sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, r *instance.Request) {
					routes[j] = append(routes[j], res.Instance)
				}))
			if err != nil {
				t.Fatal(err)
			}
			if outs[j], err = c.Run(); err != nil {
				t.Fatal(err)
			}
		}
		if len(outs[1].Info.Regret) != 1 {
			t.Errorf("%s: no regret summary", policy)
		}
		outs[1].Info.Regret = nil
		if !reflect.DeepEqual(routes[0], routes[1]) || !reflect.DeepEqual(outs[0], outs[1]) {
			t.Errorf("%s: scoring regret changed the run", policy)
		}
	}
}
