package report

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

func TestGoodput(t *testing.T) {
	r1 := okRec(1, 1000, 51000, 501000, 10, 11) // real ttft 50ms e2e 500ms: good
	r2 := okRec(2, 2000, 0, 0, 10, 11)
	r2.Status = "error"                          // counts against the real side
	r3 := okRec(3, 3000, 153000, 803000, 10, 11) // real ttft 150ms: not good
	other := okRec(4, 4000, 5000, 6000, 10, 11)
	other.SLOClass = "batch" // no targets: not evaluated
	inc := okRec(5, 4000, 5000, 6000, 10, 11)
	inc.Status = "incomplete" // left out of count
	for _, rec := range []*tracev2.Record{&r1, &r2, &r3, &inc} {
		rec.SLOClass = "critical"
	}
	in := Input{
		Header: TraceHeader{GoodputSLOTargets: map[string]SLOTarget{"critical": {TTFTMs: 100, E2EMs: 1000}}},
		Trace:  []tracev2.Record{r1, r2, r3, other, inc},
		Sim: []tracev2.SimResult{
			simOf(1, 120000, 400000, 10, 11), // sim ttft 120ms: not good
			simOf(2, 50000, 400000, 10, 11),  // good
			simOf(3, 50000, 400000, 10, 11),  // good
			simOf(4, 1, 2, 10, 11), simOf(5, 1, 2, 10, 11),
		},
	}
	r := build(t, in, nil)
	if r.Goodput == nil || len(r.Goodput.PerClass) != 1 {
		t.Fatalf("goodput = %+v, want one class", r.Goodput)
	}
	g := r.Goodput.PerClass["critical"]
	// runtime = latest last 803000 - earliest send 1000 over every non-warm-up row with a sim.
	rt := 0.802
	checks := []struct {
		name      string
		got, want float64
	}{
		{"count", float64(g.Count), 3},
		{"real attainment", g.RealSLOAttainment, 1.0 / 3}, {"sim attainment", g.SimSLOAttainment, 2.0 / 3},
		{"real rps", g.RealGoodputRPS, 1 / rt}, {"sim rps", g.SimGoodputRPS, 2 / rt},
		{"real ttft dim", g.RealAttainmentByDim["ttft"], 1.0 / 3}, {"real e2e dim", g.RealAttainmentByDim["e2e"], 2.0 / 3},
		{"sim ttft dim", g.SimAttainmentByDim["ttft"], 2.0 / 3}, {"sim e2e dim", g.SimAttainmentByDim["e2e"], 1},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, ok := g.RealAttainmentByDim["itl"]; ok || g.SkippedITL {
		t.Errorf("itl not gated, yet by_dim %v skipped %v", g.RealAttainmentByDim, g.SkippedITL)
	}
}

func TestGoodputITLFallbackAndSkip(t *testing.T) {
	a := okRec(1, 1, 1001, 11001, 10, 11) // tpot 1000 us
	b := okRec(2, 1, 1001, 2001, 10, 1)   // output 1: ITL cannot be evaluated
	s1 := simOf(1, 1000, 11000, 10, 11)
	s1.ITLMeanUs = 3000 // sim misses a 2 ms ITL target
	in := Input{Trace: []tracev2.Record{a, b}, Sim: []tracev2.SimResult{s1, simOf(2, 1000, 2000, 10, 1)}}
	r := build(t, in, func(c *Config) { c.SLOOverrides = map[string]SLOTarget{"default": {ITLMs: 2}} })
	g := r.Goodput.PerClass["default"]
	if g == nil || !g.SkippedITL || g.RealAttainmentByDim["itl"] != 1 || g.SimAttainmentByDim["itl"] != 0 {
		t.Fatalf("default class = %+v, want skipped_itl, real itl 1, sim itl 0", g)
	}
	// The request whose ITL was skipped is still good on the other (absent) dims.
	if g.RealSLOAttainment != 1 || g.SimSLOAttainment != 0.5 {
		t.Errorf("attainment real %v sim %v, want 1 and 0.5", g.RealSLOAttainment, g.SimSLOAttainment)
	}
}

func TestSLOOverrideMerge(t *testing.T) {
	got := mergeTargets(
		map[string]SLOTarget{"critical": {TTFTMs: 250, E2EMs: 2000}, "": {TTFTMs: 9}, "gone": {}},
		map[string]SLOTarget{"critical": {TTFTMs: 100}, "standard": {E2EMs: 1000}},
	)
	want := map[string]SLOTarget{"critical": {TTFTMs: 100, E2EMs: 2000}, "default": {TTFTMs: 9}, "standard": {E2EMs: 1000}}
	if len(got) != len(want) {
		t.Fatalf("merge = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("class %s = %+v, want %+v", k, got[k], v)
		}
	}
}

func TestParseSLOTargets(t *testing.T) {
	got, err := ParseSLOTargets("critical=250ms,standard=1s", "", "critical=2s")
	if err != nil {
		t.Fatal(err)
	}
	if got["critical"] != (SLOTarget{TTFTMs: 250, E2EMs: 2000}) || got["standard"] != (SLOTarget{TTFTMs: 1000}) {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"critical", "=1s", "critical=fast", "critical=-1s"} {
		_, err := ParseSLOTargets(bad, "", "")
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("ParseSLOTargets(%q): err = %v, want InputError", bad, err)
		}
	}
}

func TestHitRateAndConfigMatch(t *testing.T) {
	base := Input{Trace: []tracev2.Record{okRec(1, 1, 100, 1000, 1, 1)}, Sim: []tracev2.SimResult{simOf(1, 90, 900, 1, 1)}}
	hr := 0.387
	in := base
	in.Header = TraceHeader{
		ObservedKV: &ObservedKV{Source: "gpu-prefix-cache-fallback", HitRate: 0.412},
		Deployment: map[string]any{"model": "Meta/Llama", "tensor_parallel": 1, "block_size": 16, "gpu_memory_utilization": 0.9},
		Sources:    map[string]string{"block_size": "measured", "max_num_seqs": "absent"},
	}
	// JSON numbers are float64: they compare by value with the header's ints.
	in.SimMetrics = &SimMetrics{CacheHitRate: &hr, Deployment: map[string]any{"model": "meta/llama", "tensor_parallel": 1.0,
		"block_size": 32.0, "max_num_seqs": 1.0, "gpu": "H100"}}
	r := build(t, in, nil)
	h := r.HitRate
	if h == nil || !near(h.AbsErrorPP, 2.5) || !h.Within || h.Source != "gpu-prefix-cache-fallback" || h.TolerancePP != 5 {
		t.Errorf("hit rate = %+v, want 2.5 pp within 5", h)
	}
	// exactly at tolerance is within (1e-9 slack)
	r2 := build(t, in, func(c *Config) { c.HitRateTolerancePP = 2.5 })
	if !r2.HitRate.Within {
		t.Errorf("abs error 2.5 pp at tolerance 2.5 should be within")
	}
	cm := r.ConfigMatch
	if join(cm.Matched) != "model,tensor_parallel" || join(cm.Mismatched) != "block_size" ||
		join(cm.Defaulted) != "gpu,latency_model,max_model_len,max_num_batched_tokens,max_num_seqs,num_instances,total_kv_blocks" ||
		cm.Match == nil || *cm.Match {
		t.Errorf("config match = %+v", cm)
	}
	wantKeys := map[string]ConfigKey{
		"block_size":             {Key: "block_size", Trace: 16, Source: "measured", Sim: 32.0, Status: KeyMismatched},
		"max_num_seqs":           {Key: "max_num_seqs", Source: "absent", Sim: 1.0, Status: KeyDefaulted},
		"gpu_memory_utilization": {Key: "gpu_memory_utilization", Trace: 0.9, Source: "declared", Status: KeyUnchecked},
		"model":                  {Key: "model", Trace: "Meta/Llama", Source: "declared", Sim: "meta/llama", Status: KeyMatched},
	}
	for _, k := range cm.Keys {
		if w, ok := wantKeys[k.Key]; ok && !reflect.DeepEqual(k, w) {
			t.Errorf("key %s: got %+v, want %+v", k.Key, k, w)
		}
	}
	if len(cm.Keys) != 11 {
		t.Errorf("%d keys compared, want the 11 core keys (the 4 stated and the absent one among them)", len(cm.Keys))
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "config mismatch: block_size is 16 in the trace but 32 in the simulation") {
		t.Errorf("no mismatch warning: %q", r.Warnings)
	}
	if got := r.configHeadline(); got != "config: MISMATCH block_size 16 (trace) vs 32 (sim)" {
		t.Errorf("headline %q", got)
	}
	// A model compared by the caller's rule.
	in.SameModel = func(a, b string) bool { return false }
	if r := build(t, in, nil); join(r.ConfigMatch.Mismatched) != "block_size,model" {
		t.Errorf("with SameModel: mismatched %v", r.ConfigMatch.Mismatched)
	}
	in.SameModel = nil
	// Only one side: omitted with a warning; the config not checked.
	in.SimMetrics = nil
	r = build(t, in, nil)
	if r.HitRate != nil || len(r.Warnings) == 0 {
		t.Errorf("one-sided hit rate: block %v warnings %v", r.HitRate, r.Warnings)
	}
	if r.ConfigMatch.Match != nil || r.ConfigMatch.Keys != nil || !strings.HasPrefix(r.configHeadline(), "config: not checked") {
		t.Errorf("config without the simulation's deployment: %+v %q", r.ConfigMatch, r.configHeadline())
	}
	if r.TTFTTolerance == nil || r.TTFTTolerance.Threshold != 0.15 || !r.TTFTTolerance.Within {
		t.Errorf("ttft tolerance = %+v", r.TTFTTolerance)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

func TestHeaderFrom(t *testing.T) {
	seed := int64(7)
	h := &tracev2.Header{Mode: "real", WarmUpRequests: 3, WorkloadSeed: &seed,
		Server:            &tracev2.Server{Model: "m", BlockSize: 16, MaxModelLen: 4096},
		Network:           &tracev2.Network{MeasuredRTTMs: 0.8},
		GoodputSLOTargets: map[string]tracev2.SLOTargets{"critical": {TTFTMs: 250}},
		ObservedKVMetrics: &tracev2.ObservedKVMetrics{Source: "tiered", HitRate: 0.4}}
	got := HeaderFrom(h)
	if got.Mode != "real" || got.WarmUpRequests != 3 || *got.WorkloadSeed != 7 || got.Server.Model != "m" ||
		*got.Server.BlockSize != 16 || *got.Server.MaxModelLen != 4096 || got.Server.TensorParallel != nil ||
		got.MeasuredRTTMs != 0.8 || got.GoodputSLOTargets["critical"].TTFTMs != 250 || got.ObservedKV.HitRate != 0.4 {
		t.Errorf("HeaderFrom = %+v", got)
	}
	if want := map[string]any{"model": "m", "block_size": 16, "max_model_len": 4096}; !reflect.DeepEqual(got.Deployment, want) {
		t.Errorf("HeaderFrom deployment = %v, want %v", got.Deployment, want)
	}
	h.XExt = &tracev2.Ext{Deployment: map[string]any{"model": "m2", "gpu": "L40S"},
		Sources: map[string]string{"deployment.gpu": "measured", "client.users": "declared"}}
	got = HeaderFrom(h)
	if !reflect.DeepEqual(got.Deployment, map[string]any{"model": "m2", "gpu": "L40S"}) ||
		!reflect.DeepEqual(got.Sources, map[string]string{"gpu": "measured"}) {
		t.Errorf("HeaderFrom with x_ext: %v %v", got.Deployment, got.Sources)
	}
	if z := HeaderFrom(nil); z.Mode != "" || z.ObservedKV != nil {
		t.Errorf("HeaderFrom(nil) = %+v", z)
	}
}
