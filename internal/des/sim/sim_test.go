package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"servesim/internal/testkit/destest"
	"strings"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/metrics"
	"servesim/internal/testkit/fake"
)

func smallConfig() Config {
	return Config{Instance: instance.Config{KV: kvcache.Config{Blocks: 256, BlockSize: 16}, MaxNumSeqs: 16,
		MaxNumBatchedTokens: 512, MaxModelLen: 4096,
		Latency: &fake.Linear{Base: 1000, PerPrefillToken: 2, PerDecode: 10, ATok: 5, AEnd: 9}}}
}

func prompt(n int, base int32) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = base + int32(i)
	}
	return p
}

func TestRunStreamsEveryResultOnce(t *testing.T) {
	var reqs []*instance.Request
	for i := 0; i < 50; i++ {
		reqs = append(reqs, &instance.Request{ID: int64(i), ArrivalUs: int64(i) * 3000, Prompt: prompt(100+i, int32(i)<<12),
			OutputLen: 20, MaxOutputLen: 20})
	}
	agg, _ := metrics.NewAggregator(nil)
	seen := map[int64]int{}
	s, err := New(smallConfig(), &SliceSource{Reqs: reqs}, SinkFunc(func(res *instance.Result, r *instance.Request) {
		seen[res.ID]++
		agg.Add(res)
	}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	sum := agg.Summary(out.Info)
	if out.Injected != 50 || len(seen) != 50 || sum.CompletedRequests != 50 {
		t.Errorf("injected %d, distinct results %d, completed %d; want 50 each", out.Injected, len(seen), sum.CompletedRequests)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("request %d: %d results", id, n)
		}
	}
	if out.EndUs != s.Instance().LastLeftUs() {
		t.Errorf("end %d, want the last completion %d", out.EndUs, s.Instance().LastLeftUs())
	}
}

// TestSessionInjection: a completion callback injects the next round at the
// client-visible completion plus think time (INV-10 with nothing in between).
func TestSessionInjection(t *testing.T) {
	var s *Simulator
	const think = 5000
	var arrivals, e2es []int64
	cfg := smallConfig()
	cfg.OnDone = func(res *instance.Result, r *instance.Request) {
		arrivals = append(arrivals, res.ArrivalUs)
		e2es = append(e2es, res.E2EUs)
		if r.Round < 3 {
			next := &instance.Request{ID: r.ID + 1, ArrivalUs: res.ArrivalUs + res.E2EUs + think, Prompt: prompt(64, int32(r.Round+1)<<12),
				OutputLen: 8, MaxOutputLen: 8, SessionID: "s", Round: r.Round + 1}
			if err := s.Inject(next); err != nil {
				t.Fatal(err)
			}
		}
	}
	var err error
	s, err = New(cfg, &SliceSource{Reqs: []*instance.Request{{ID: 1, Prompt: prompt(64, 0), OutputLen: 8, MaxOutputLen: 8, SessionID: "s"}}},
		SinkFunc(func(*instance.Result, *instance.Request) {}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	if out.Injected != 4 || len(arrivals) != 4 {
		t.Fatalf("injected %d, done %d; want 4 rounds", out.Injected, len(arrivals))
	}
	for k := 1; k < 4; k++ {
		if arrivals[k] != arrivals[k-1]+e2es[k-1]+think {
			t.Errorf("round %d arrives at %d, want %d", k, arrivals[k], arrivals[k-1]+e2es[k-1]+think)
		}
	}
}

func TestHorizonLeavesLiveRequests(t *testing.T) {
	cfg := smallConfig()
	cfg.HorizonUs = 20000
	var statuses []instance.Status
	src := &destest.Source{Rng: rand.New(rand.NewPCG(1, 1)), N: 100, MeanGapUs: 500,
		Lengths: func(*rand.Rand) (int, int) { return 200, 50 }}
	s, err := New(cfg, src, SinkFunc(func(res *instance.Result, r *instance.Request) { statuses = append(statuses, res.Status) }))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, st := range statuses {
		if !st.Terminal() {
			live++
		}
	}
	if int64(len(statuses)) != out.Injected || live == 0 || out.EndUs > 20000 {
		t.Errorf("results %d for %d injected, %d live, end %d", len(statuses), out.Injected, live, out.EndUs)
	}
}

func TestSourceErrors(t *testing.T) {
	bad := &SliceSource{Reqs: []*instance.Request{{ID: 1, ArrivalUs: 10, Prompt: prompt(4, 0), OutputLen: 1},
		{ID: 2, ArrivalUs: 5, Prompt: prompt(4, 0), OutputLen: 1}}}
	s, _ := New(smallConfig(), bad, SinkFunc(func(*instance.Result, *instance.Request) {}))
	if _, err := s.Run(); err == nil {
		t.Error("out-of-order source: no error")
	}
	boom := errors.New("boom")
	s, _ = New(smallConfig(), errSource{boom}, SinkFunc(func(*instance.Result, *instance.Request) {}))
	if _, err := s.Run(); !errors.Is(err, boom) {
		t.Errorf("source error: got %v, want it wrapped", err)
	}
}

type errSource struct{ err error }

func (e errSource) Next() (*instance.Request, error) { return nil, e.err }

// TestMD1 checks the simulator against queueing theory: one request in
// service at a time (max-num-seqs 1), every request one prefill step of a
// constant 1 ms and one output token, Poisson arrivals at ρ = 0.5. The mean
// wait (scheduling delay, Q = 0) must be within 3% of ρ / (2μ(1 − ρ)).
func TestMD1(t *testing.T) {
	const (
		n       = 100000
		service = 1000.0 // µs
		rho     = 0.5
	)
	cfg := Config{Instance: instance.Config{KV: kvcache.Config{Blocks: 64, BlockSize: 16}, MaxNumSeqs: 1,
		MaxNumBatchedTokens: 2048, MaxModelLen: 1024, FastForward: true,
		Latency: &fake.Linear{Base: service}}}
	src := &destest.Source{Rng: rand.New(rand.NewPCG(2024, 1)), N: n, MeanGapUs: service / rho,
		Lengths: func(*rand.Rand) (int, int) { return 32, 1 }}
	var sum float64
	var count int
	s, err := New(cfg, src, SinkFunc(func(res *instance.Result, r *instance.Request) {
		if res.Status == instance.StatusCompleted {
			sum += float64(res.SchedulingDelayUs)
			count++
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(); err != nil {
		t.Fatal(err)
	}
	got := sum / float64(count)
	mu := 1 / service
	want := rho / (2 * mu * (1 - rho))
	t.Logf("M/D/1 over %d requests: mean wait %.1f µs, theory %.1f µs (%.2f%%)", count, got, want, 100*(got-want)/want)
	if count != n || math.Abs(got-want)/want > 0.03 {
		t.Errorf("mean wait %.1f µs over %d requests, want %.1f ± 3%%", got, count, want)
	}
}

// TestHorizonFastForwardEquivalence: with a horizon cutting through busy
// periods, fast-forward on and off give identical results and summaries.
func TestHorizonFastForwardEquivalence(t *testing.T) {
	for _, horizon := range []int64{0, 30000, 200000, 1000000} {
		var outs [2]string
		for k, ff := range []bool{false, true} {
			cfg := smallConfig()
			cfg.HorizonUs = horizon
			cfg.Instance.FastForward = ff
			agg, _ := metrics.NewAggregator(nil)
			var lines []string
			src := &destest.Source{Rng: rand.New(rand.NewPCG(7, 1)), N: 300, MeanGapUs: 3000,
				Lengths: func(r *rand.Rand) (int, int) { return 1 + r.IntN(300), r.IntN(80) }}
			s, err := New(cfg, src, SinkFunc(func(res *instance.Result, r *instance.Request) {
				agg.Add(res)
				lines = append(lines, fmt.Sprintf("%+v", *res))
			}))
			if err != nil {
				t.Fatal(err)
			}
			out, err := s.Run()
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(agg.Summary(out.Info))
			outs[k] = strings.Join(lines, "\n") + string(js) + fmt.Sprint(out.EndUs, out.Injected)
		}
		if outs[0] != outs[1] {
			a, b := strings.Split(outs[0], "\n"), strings.Split(outs[1], "\n")
			for i := range a {
				if i < len(b) && a[i] != b[i] {
					t.Errorf("horizon %d: fast-forward changes the output at line %d:\n%s\n%s", horizon, i, a[i], b[i])
					break
				}
			}
		}
	}
}
