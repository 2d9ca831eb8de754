package instance

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"servesim/internal/des"
	"servesim/internal/des/kvcache"
	"servesim/internal/testkit/fake"
)

// randomConfig draws a small deployment; tiny KV caches force preemption.
func randomConfig(rng *rand.Rand) Config {
	bs := []int{1, 2, 4, 8, 16}[rng.IntN(5)]
	t := 2 + rng.IntN(40)
	if rng.IntN(4) == 0 {
		t = 200
	}
	m := min(t*bs, 8+rng.IntN(120))
	m = max(m, 2)
	cfg := Config{
		KV:                  kvcache.Config{Blocks: t, BlockSize: bs},
		MaxNumSeqs:          1 + rng.IntN(12),
		MaxNumBatchedTokens: []int{1 + rng.IntN(16), 32, 64, 2048}[rng.IntN(4)],
		MaxModelLen:         m,
		Scheduler:           []Scheduler{SchedFCFS, SchedPriorityFCFS, SchedSJF}[rng.IntN(3)],
		Preemption:          []PreemptionPolicy{PreemptFCFS, PreemptPriority}[rng.IntN(2)],
		PreemptMode:         []PreemptMode{ModeRecompute, ModeReset}[rng.IntN(2)],
		Priority:            []PriorityPolicy{PrioritySLOClass, PriorityConstant, PrioritySLOAging}[rng.IntN(3)],
		AgeWeight:           rng.Float64() * 2,
	}
	if rng.IntN(3) == 0 {
		cfg.LongPrefillThreshold = 1 + rng.IntN(32)
	}
	cfg.AsyncScheduling = rng.IntN(2) == 0
	if rng.IntN(6) == 0 {
		cfg.KV.CPUBlocks = 1 + rng.IntN(32)
		cfg.KV.CPUBaseLatencyUs = rng.Int64N(50)
	}
	cfg.Latency = &fake.Linear{Base: 50 + rng.Int64N(450), PerPrefillToken: rng.Int64N(5), PerDecode: rng.Int64N(20),
		PerKiloContext: rng.Int64N(100), Queue: rng.Int64N(100), ATok: rng.Int64N(20), AEnd: rng.Int64N(50)}
	return cfg
}

type wreq struct {
	id            int64
	at            int64
	prompt        []int32
	out, maxOut   int
	deadline      int64
	class, tenant string
	kind          int   // 0 normal, 1 P/D prefill part, 2 P/D decode part
	delay         int64 // transfer time for kinds 1 and 2
	privateFrom   int   // its tokens are its own from here on (Request.Private); -1 = not declared
}

// randomWorkload draws requests with shared prefixes, zero outputs,
// undeclared budgets, over-long prompts and deadlines.
func randomWorkload(rng *rand.Rand, m int) []wreq {
	n := 3 + rng.IntN(25)
	prefixes := [][]int32{nil, tokens(rng.IntN(24), 5000), tokens(rng.IntN(40), 7000)}
	gap := []int64{0, 200, 2000, 20000}[rng.IntN(4)]
	var out []wreq
	var t int64
	for i := 0; i < n; i++ {
		if gap > 0 {
			t += rng.Int64N(gap)
		}
		p := append([]int32(nil), prefixes[rng.IntN(3)]...)
		private := len(p) // the tail is the request's own: ids 100·i onwards
		p = append(p, tokens(1+rng.IntN(40), int32(100*i))...)
		if rng.IntN(20) == 0 {
			p = tokens(m+rng.IntN(4), 9000)
			private = -1
		}
		o := rng.IntN(30)
		if rng.IntN(10) == 0 {
			o = 0
		}
		mo := []int{0, o, o + rng.IntN(5)}[rng.IntN(3)]
		w := wreq{id: int64(i + 1), at: t, prompt: p, out: o, maxOut: mo, privateFrom: private,
			class: []string{"", "critical", "batch", "sheddable"}[rng.IntN(4)], tenant: []string{"a", "b"}[rng.IntN(2)]}
		if rng.IntN(5) == 0 {
			w.deadline = t + 1 + rng.Int64N(30000)
		}
		if k := rng.IntN(8); k < 2 {
			w.kind = k + 1
			w.delay = rng.Int64N(3000)
		}
		out = append(out, w)
	}
	return out
}

type runOut struct {
	results    map[int64]Result
	counters   Counters
	kv         kvcache.Stats
	itl        []ValueCount
	violations []string
	end        int64
}

// simulate runs a workload on a fresh instance, checking INV-2..5, 8, 12
// and work conservation after every event.
func simulate(cfg Config, ws []wreq, ff bool) runOut {
	var out runOut
	out.results = map[int64]Result{}
	eng := des.New()
	cfg.FastForward = ff
	var in *Instance
	cfg.OnDone = func(res *Result, r *Request) {
		if _, dup := out.results[res.ID]; dup {
			out.violations = append(out.violations, fmt.Sprintf("request %d finished twice", res.ID))
		}
		out.results[res.ID] = *res
		if res.Status == StatusPrefilled {
			// The transfer ends later; the prefill part holds its blocks.
			eng.Schedule(res.DoneUs+ws[res.ID-1].delay, des.PrioTransferDone, func(int64, any) {
				if err := in.ReleaseKV(r); err != nil {
					out.violations = append(out.violations, err.Error())
				}
			}, nil)
		}
	}
	in, err := New(eng, cfg)
	if err != nil {
		out.violations = append(out.violations, err.Error())
		return out
	}
	in.verify = func(v string) { out.violations = append(out.violations, v) }
	for _, w := range ws {
		r := &Request{ID: w.id, ArrivalUs: w.at, Prompt: w.prompt, OutputLen: w.out, MaxOutputLen: w.maxOut,
			DeadlineUs: w.deadline, SLOClass: w.class, Tenant: w.tenant, PrefillOnly: w.kind == 1,
			Private: w.privateFrom >= 0, PrivateFrom: max(w.privateFrom, 0)}
		if w.kind == 2 && len(w.prompt) < cfg.MaxModelLen {
			// A decode part: blocks reserved at arrival, enqueued when its
			// transfer ends (unless its deadline passed meanwhile).
			eng.Schedule(w.at, des.PrioRouting, func(now int64, _ any) {
				ok, err := in.ReserveDecode(r)
				if err != nil {
					out.violations = append(out.violations, err.Error())
				}
				if !ok {
					out.results[r.ID] = Result{ID: r.ID, Status: StatusDropped}
					return
				}
				eng.Schedule(now+w.delay, des.PrioTransferDone, func(int64, any) {
					if r.Status() == StatusPending {
						if err := in.SubmitDecode(r); err != nil {
							out.violations = append(out.violations, err.Error())
						}
					}
				}, nil)
			}, nil)
			continue
		}
		eng.Schedule(w.at, des.PrioInstanceArrival, func(int64, any) {
			if err := in.Submit(r); err != nil {
				out.violations = append(out.violations, err.Error())
			}
		}, nil)
	}
	last := int64(-1)
	eng.SetObserver(func(at int64, _ int) {
		if at < last {
			out.violations = append(out.violations, fmt.Sprintf("INV-3: clock %d after %d", at, last))
		}
		last = at
		if err := in.CheckKV(); err != nil {
			out.violations = append(out.violations, "INV-4: "+err.Error())
		}
		if (in.QueueDepth() > 0 || len(in.running) > 0) && !in.StepPending() {
			out.violations = append(out.violations, fmt.Sprintf("INV-8/work-conserving at %d: %d waiting, %d running, no step", at, in.QueueDepth(), len(in.running)))
		}
	})
	out.end = max(eng.Run(des.NoHorizon), in.LastLeftUs(), in.LastStepUs())
	if err := in.CheckKV(); err != nil {
		out.violations = append(out.violations, "INV-4 at end: "+err.Error())
	}
	in.Unfinished(func(res *Result, r *Request) { out.results[res.ID] = *res })
	out.counters = in.Counters()
	out.counters.FastSteps, out.counters.LazySteps = 0, 0
	out.kv = in.KV().Stats()
	out.itl = in.ITLHistogram()
	// INV-1 and INV-5.
	if len(out.results) != len(ws) {
		out.violations = append(out.violations, fmt.Sprintf("INV-1: %d results for %d requests", len(out.results), len(ws)))
	}
	for _, res := range out.results {
		if !res.Status.Terminal() {
			out.violations = append(out.violations, fmt.Sprintf("request %d live at the end of an unbounded run: %s", res.ID, res.Status))
		}
		if res.Status == StatusCompleted {
			if !(res.ArrivalUs <= res.EnqueueUs && res.EnqueueUs <= res.FirstScheduledUs &&
				res.FirstScheduledUs <= res.FirstTokenUs && res.FirstTokenUs <= res.DoneUs) {
				out.violations = append(out.violations, fmt.Sprintf("INV-5: request %d times %+v", res.ID, res))
			}
			if res.OutputTokens > 0 && res.ITLCount != res.OutputTokens-1 && cfg.PreemptMode != ModeReset {
				out.violations = append(out.violations, fmt.Sprintf("request %d: %d ITL samples for %d tokens", res.ID, res.ITLCount, res.OutputTokens))
			}
		}
	}
	return out
}

const propSeeds = 1000

// TestInvariantsAndFastForwardEquivalence runs ≥1,000 random configurations
// and workloads step by step and with fast-forward: every invariant holds in
// both, and every per-request result, counter and ITL sample is identical.
func TestInvariantsAndFastForwardEquivalence(t *testing.T) {
	var fast, steps, preempts int64
	for seed := uint64(0); seed < propSeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		cfg := randomConfig(rng)
		ws := randomWorkload(rng, cfg.MaxModelLen)
		slow := simulate(cfg, ws, false)
		quick := simulate(cfg, ws, true)
		for _, v := range append(slow.violations, quick.violations...) {
			t.Fatalf("seed %d (%+v): %s", seed, cfg, v)
		}
		if !reflect.DeepEqual(slow.results, quick.results) {
			for id, a := range slow.results {
				if b := quick.results[id]; a != b {
					t.Fatalf("seed %d: request %d differs\n step-by-step %+v\n fast-forward %+v", seed, id, a, b)
				}
			}
		}
		if slow.counters != quick.counters || slow.kv != quick.kv || !reflect.DeepEqual(slow.itl, quick.itl) || slow.end != quick.end {
			t.Fatalf("seed %d: totals differ\n%+v %+v\n%+v %+v\nitl %v\n    %v\nend %d %d", seed, slow.counters, slow.kv, quick.counters, quick.kv, slow.itl, quick.itl, slow.end, quick.end)
		}
		c := simulateCounters(cfg, ws)
		fast += c.LazySteps
		steps += c.Steps
		preempts += slow.counters.Preemptions
	}
	t.Logf("%d seeds: %d steps, %d fast-forwarded (%.0f%%), %d preemptions", propSeeds, steps, fast, 100*float64(fast)/float64(steps), preempts)
	if fast == 0 || preempts == 0 {
		t.Errorf("the random configurations never fast-forward (%d) or never preempt (%d)", fast, preempts)
	}
}

// TestPrivateDeclarationChangesNothing: declaring the requests' own tails
// private (the KV cache then tags those blocks instead of hashing and
// indexing them) gives the same per-request results, counters, ITL samples
// and KV statistics as hashing every block, on ≥1,000 random
// configurations and workloads, preemption-heavy ones included, step by
// step and fast-forwarded.
func TestPrivateDeclarationChangesNothing(t *testing.T) {
	var hits, preempts int64
	for seed := uint64(0); seed < propSeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 98))
		cfg := randomConfig(rng)
		ws := randomWorkload(rng, cfg.MaxModelLen)
		hashed := append([]wreq(nil), ws...)
		for i := range hashed {
			hashed[i].privateFrom = -1
		}
		ff := seed%2 == 0
		a, b := simulate(cfg, hashed, ff), simulate(cfg, ws, ff)
		for _, v := range append(a.violations, b.violations...) {
			t.Fatalf("seed %d (%+v): %s", seed, cfg, v)
		}
		for id, x := range a.results {
			if y := b.results[id]; x != y {
				t.Fatalf("seed %d: request %d differs\n all hashed %+v\n private   %+v", seed, id, x, y)
			}
		}
		if a.counters != b.counters || a.kv != b.kv || !reflect.DeepEqual(a.itl, b.itl) || a.end != b.end {
			t.Fatalf("seed %d: totals differ\n%+v %+v\n%+v %+v", seed, a.counters, a.kv, b.counters, b.kv)
		}
		hits += a.kv.Hits
		preempts += a.counters.Preemptions
	}
	t.Logf("%d seeds: %d prefix-cache hits, %d preemptions", propSeeds, hits, preempts)
	if hits == 0 || preempts == 0 {
		t.Errorf("the random runs never hit the prefix cache (%d) or never preempt (%d)", hits, preempts)
	}
}

func simulateCounters(cfg Config, ws []wreq) Counters {
	eng := des.New()
	cfg.FastForward = true
	in, _ := New(eng, cfg)
	for _, w := range ws {
		r := &Request{ID: w.id, ArrivalUs: w.at, Prompt: w.prompt, OutputLen: w.out, MaxOutputLen: w.maxOut, DeadlineUs: w.deadline, SLOClass: w.class}
		eng.Schedule(w.at, des.PrioInstanceArrival, func(int64, any) { in.Submit(r) }, nil)
	}
	eng.Run(des.NoHorizon)
	return in.Counters()
}

// TestDeterminism: equal inputs give identical results (INV-6).
func TestDeterminism(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := randomConfig(rng)
		ws := randomWorkload(rng, cfg.MaxModelLen)
		a, b := simulate(cfg, ws, true), simulate(cfg, ws, true)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
	}
}

// TestOracleBoundary: guards never read O (INV-9): changing every output
// length leaves every drop decision unchanged.
func TestOracleBoundary(t *testing.T) {
	for seed := uint64(0); seed < propSeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		cfg := randomConfig(rng)
		ws := randomWorkload(rng, cfg.MaxModelLen)
		ws2 := append([]wreq(nil), ws...)
		for i := range ws2 {
			ws2[i].out = rng.IntN(3 * cfg.MaxModelLen)
			ws2[i].deadline = 0
		}
		for i := range ws {
			ws[i].deadline = 0
			ws[i].kind, ws2[i].kind = 0, 0 // P/D reservations depend on KV state, not guards
		}
		a, b := simulate(cfg, ws, true), simulate(cfg, ws2, true)
		for id, ra := range a.results {
			if da, db := ra.Status == StatusDropped, b.results[id].Status == StatusDropped; da != db {
				t.Fatalf("seed %d request %d: dropped %v with O=%d, %v with O=%d", seed, id, da, ws[id-1].out, db, ws2[id-1].out)
			}
		}
	}
}
