package workload

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// twoClients is a spec with a plain client and an open-loop accumulating
// session client sharing nothing.
const twoClients = `aggregate_rate: 20
num_requests: 300
seed: 5
clients:
  - id: a
    rate_fraction: 3
    prefix_group: sys
    prefix_length: 16
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: gaussian, params: {mean: 40, std_dev: 10, min: 1, max: 100}}
    output_distribution: {type: exponential, params: {mean: 20}}
  - id: b
    rate_fraction: 1
    closed_loop: false
    arrival: {process: poisson}
    input_distribution: {type: uniform, params: {min: 5, max: 9}}
    output_distribution: {type: constant, params: {value: 4}}
    reasoning:
      reason_ratio_distribution: {type: uniform, params: {min: 0, max: 100}}
      multi_turn: {max_rounds: 3, think_time_us: 100000, context_growth: accumulate}
`

func TestSameSeedSameStreamOtherSeedDiffers(t *testing.T) {
	a := drain(mustDecode(t, twoClients))
	b := drain(mustDecode(t, twoClients))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two sources of the same spec and seed differ")
	}
	c := drain(mustDecode(t, strings.Replace(twoClients, "seed: 5", "seed: 6", 1)))
	same := 0
	for i := range min(len(a), len(c)) {
		if a[i].ArrivalUs == c[i].ArrivalUs && a[i].InputTokens == c[i].InputTokens {
			same++
		}
	}
	if same > len(a)/10 {
		t.Errorf("seed 6 repeats %d of %d requests of seed 5, want a different stream", same, len(a))
	}
	// And a fresh source of the same workload restarts the stream.
	w := mustDecode(t, twoClients)
	if !reflect.DeepEqual(drain(w), drain(w)) {
		t.Error("two sources of one Workload differ")
	}
}

// byClient strips numbering (which depends on the merge) from one client's requests.
func byClient(reqs []*Request, id string) []Request {
	var out []Request
	for _, r := range reqs {
		if r.ClientID == id {
			c := *r
			c.ID, c.SessionID, c.Client = 0, "", 0
			out = append(out, c)
		}
	}
	return out
}

func TestAddingAClientLeavesOthersUnchanged(t *testing.T) {
	const extra = `  - id: c
    rate_fraction: 2
    arrival: {process: weibull, cv: 0.5}
    input_distribution: {type: constant, params: {value: 3}}
    output_distribution: {type: constant, params: {value: 3}}
`
	// With a horizon (not num_requests) bounding the stream, every client's
	// requests must be unchanged, not only the ones before the cut.
	spec := strings.Replace(twoClients, "num_requests: 300", "horizon: 10000000", 1)
	before := drain(mustDecode(t, spec))
	// Rates are shares of aggregate_rate, so adding c (fraction 2 of 6) keeps
	// a's and b's rates only if aggregate_rate grows with it: 20 · 6/4 = 30.
	after := drain(mustDecode(t, strings.Replace(spec, "aggregate_rate: 20", "aggregate_rate: 30", 1)+extra))
	for _, id := range []string{"a", "b"} {
		got, want := byClient(after, id), byClient(before, id)
		if len(want) < 50 || !reflect.DeepEqual(got, want) {
			t.Errorf("client %s: %d requests after adding c, %d before; want identical streams", id, len(got), len(want))
		}
	}
	if len(byClient(after, "c")) == 0 {
		t.Error("client c generated nothing")
	}
}

func TestMergeOrderNumberingAndTruncation(t *testing.T) {
	reqs := drain(mustDecode(t, twoClients))
	if len(reqs) != 300 {
		t.Fatalf("requests = %d, want num_requests 300", len(reqs))
	}
	for i, r := range reqs {
		if r.ID != int64(i) {
			t.Fatalf("request %d has id %d", i, r.ID)
		}
		if i > 0 {
			p := reqs[i-1]
			if r.ArrivalUs < p.ArrivalUs || r.ArrivalUs == p.ArrivalUs && r.Client < p.Client {
				t.Fatalf("requests %d and %d out of (arrival, client) order: %d/%d then %d/%d", i-1, i, p.ArrivalUs, p.Client, r.ArrivalUs, r.Client)
			}
		}
		if r.InputTokens != len(r.PromptIDs)-r.PrefixLength || r.MaxOutputLen != r.OutputTokens || r.OutputTokens < 1 {
			t.Fatalf("request %d: inconsistent lengths %+v", i, r)
		}
		for _, id := range r.PromptIDs {
			if id < 0 || id >= VocabSize {
				t.Fatalf("token id %d out of [0, %d)", id, VocabSize)
			}
		}
	}
}

func TestEqualArrivalsTieBySpecOrder(t *testing.T) {
	// Two constant clients at the same rate arrive at the same instants.
	spec := `aggregate_rate: 10
num_requests: 10
clients:
  - {id: x, rate_fraction: 1, arrival: {process: constant}, input_distribution: {type: constant, params: {value: 1}}, output_distribution: {type: constant, params: {value: 1}}}
  - {id: y, rate_fraction: 1, arrival: {process: constant}, input_distribution: {type: constant, params: {value: 1}}, output_distribution: {type: constant, params: {value: 1}}}
`
	var got []string
	for _, r := range drain(mustDecode(t, spec)) {
		got = append(got, fmt.Sprintf("%s@%d", r.ClientID, r.ArrivalUs))
	}
	want := []string{"x@199999", "y@199999", "x@399998", "y@399998", "x@599997", "y@599997", "x@799996", "y@799996", "x@999995", "y@999995"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestHorizonBoundsArrivals(t *testing.T) {
	// Constant 5/s: arrivals at 199999·k. Horizon exactly at the third one keeps it.
	w := mustResolve(t, Options{Rate: ptr(5.0), NumRequests: ptr(int64(0)), Horizon: ptr(599997 * time.Microsecond)})
	reqs := drain(w)
	if len(reqs) != 3 || reqs[2].ArrivalUs != 599997 {
		t.Errorf("got %d requests (last %v), want 3 ending at the horizon 599997", len(reqs), reqs[len(reqs)-1].ArrivalUs)
	}
}

func TestOpenSessionsAccumulateContext(t *testing.T) {
	reqs := drain(mustDecode(t, twoClients))
	bySession := map[string][]*Request{}
	for _, r := range reqs {
		if r.ClientID == "b" {
			if r.SessionID == "" || r.ThinkTimeUs != 100000 || r.DeadlineUs != r.ArrivalUs+DefaultTimeoutUs {
				t.Fatalf("session request %+v: want a session id, think time and the 300 s default timeout", r)
			}
			bySession[r.SessionID] = append(bySession[r.SessionID], r)
		} else if r.SessionID != "" || r.DeadlineUs != 0 {
			t.Fatalf("plain request %+v has a session or deadline", r)
		}
	}
	if len(bySession) < 10 {
		t.Fatalf("%d sessions, want at least 10", len(bySession))
	}
	for id, rounds := range bySession {
		if want := fmt.Sprintf("sess_%d", rounds[0].ID); id != want {
			t.Errorf("session id %s, want %s (id of round 0)", id, want)
		}
		for k, r := range rounds {
			if r.RoundIndex != k {
				t.Fatalf("%s: round %d has index %d", id, k, r.RoundIndex)
			}
			if r.ReasonRatio < 0.01 || r.ReasonRatio > 1 {
				t.Errorf("reason ratio %g out of [0.01, 1]", r.ReasonRatio)
			}
			if k == 0 {
				continue
			}
			p := rounds[k-1]
			if r.ArrivalUs != p.ArrivalUs+100000 {
				t.Errorf("%s round %d at %d, want previous + think = %d", id, k, r.ArrivalUs, p.ArrivalUs+100000)
			}
			// prompt(k) = prompt(k−1) + O(k−1) output ids + new input (5..9).
			grow := len(r.PromptIDs) - len(p.PromptIDs) - p.OutputTokens
			n := len(p.PromptIDs)
			if !slices.Equal(r.PromptIDs[:n], p.PromptIDs) || grow < 5 || grow > 9 ||
				!slices.Equal(r.PromptIDs[n:n+p.OutputTokens], p.OutputIDs(p.OutputTokens)) {
				t.Errorf("%s round %d: prompt %d tokens after %d + %d output, want the previous prompt as prefix and 5..9 new",
					id, k, len(r.PromptIDs), len(p.PromptIDs), p.OutputTokens)
			}
		}
	}
}

func TestOutputIDsRebuildFromTokenSeed(t *testing.T) {
	// The ids that accumulate after round k's input are the continuation of
	// round k's token stream (doc.go), whatever the count.
	var ts tokenStream
	ts.reset(99)
	all := make([]int32, 17)
	ts.fill(all)
	for _, in := range []int{0, 1, 4, 7} {
		ts.reset(99)
		ts.skip(in)
		got := make([]int32, 17-in)
		ts.fill(got[:3])
		ts.fill(got[3:])
		if !slices.Equal(got, all[in:]) {
			t.Errorf("skip %d: %v, want %v", in, got, all[in:])
		}
	}
}

// randomSpec builds a valid spec exercising every generator kind.
func randomSpec(r *rand.Rand) Spec {
	dists := []Distribution{
		{Type: DistGaussian, Params: map[string]float64{"mean": 50, "std_dev": 30, "min": 1, "max": 200}},
		{Type: DistExponential, Params: map[string]float64{"mean": 20}},
		{Type: DistUniform, Params: map[string]float64{"min": 1, "max": 60}},
		{Type: DistEmpirical, Params: map[string]float64{"3": 1, "30": 2}},
		{Type: DistLognormal, Params: map[string]float64{"mu": 3, "sigma": 1, "max": 500}},
	}
	arrivals := []Arrival{{Process: "poisson"}, {Process: "constant"}, {Process: "gamma", CV: 3}, {Process: "weibull", CV: 0.5}}
	s := Spec{Version: "2", Seed: r.Int64N(1000), AggregateRate: 1 + r.Float64()*50}
	if r.IntN(2) == 0 {
		s.NumRequests = 1 + r.Int64N(400)
	} else {
		s.HorizonUs = 1 + r.Int64N(20_000_000)
	}
	users := r.IntN(4) == 0
	for i := range 1 + r.IntN(4) {
		c := Client{ID: fmt.Sprintf("c%d", i), RateFraction: 0.5 + r.Float64(), Arrival: arrivals[r.IntN(len(arrivals))],
			Input: dists[r.IntN(len(dists))], Output: dists[r.IntN(len(dists))], TimeoutUs: r.Int64N(2) * 1_000_000}
		if r.IntN(3) == 0 {
			c.PrefixGroup, c.PrefixLength = fmt.Sprintf("g%d", r.IntN(2)), r.IntN(40)
		}
		switch k := r.IntN(4); {
		case users && k == 0:
			c.RateFraction, c.Arrival, c.Concurrency, c.ThinkTimeUs = 0, Arrival{}, 1+r.IntN(20), r.Int64N(3_000_000)
		case !users && k == 1:
			c.MultiTurn = &MultiTurn{MaxRounds: 1 + r.IntN(5), ThinkTimeUs: r.Int64N(500_000), SingleSession: r.IntN(5) == 0}
			if r.IntN(2) == 0 {
				c.MultiTurn.ContextGrowth = ContextAccumulate
			}
			c.ClosedLoop = r.IntN(2) == 0
		case k == 2:
			c.ReasonRatio = &dists[2]
		}
		s.Clients = append(s.Clients, c)
	}
	return s
}

func TestLazyEqualsEager(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 150 {
		spec := randomSpec(r)
		w, err := New(spec)
		if err != nil {
			t.Fatalf("spec %d: %v", i, err)
		}
		lazy, eager := drain(w), w.Eager()
		if !reflect.DeepEqual(lazy, eager) {
			for j := range min(len(lazy), len(eager)) {
				if !reflect.DeepEqual(lazy[j], eager[j]) {
					t.Fatalf("spec %d (%+v): request %d differs:\n lazy %+v\neager %+v", i, spec, j, lazy[j], eager[j])
				}
			}
			t.Fatalf("spec %d: lazy gives %d requests, eager %d", i, len(lazy), len(eager))
		}
		if src := w.NewSource(); src.Pregenerated() != int64(len(lazy)) {
			t.Fatalf("spec %d: Pregenerated = %d, want %d", i, src.Pregenerated(), len(lazy))
		}
	}
}

func TestNextAllocationsDoNotGrow(t *testing.T) {
	w := mustResolve(t, Options{Preset: "chatbot", Rate: ptr(100.0), NumRequests: ptr(int64(0)), Horizon: ptr(time.Duration(1 << 60))})
	src := w.NewSource()
	allocs := testing.AllocsPerRun(20000, func() { src.Next() })
	if allocs > 2 {
		t.Errorf("allocations per request = %g, want <= 2 (request and prompt)", allocs)
	}
	if len(src.heap) != 1 || len(src.live) != 0 {
		t.Errorf("state after 20000 requests: heap %d, live %d; want 1, 0", len(src.heap), len(src.live))
	}
}
