package fidelity

import (
	"math"
	"testing"

	"servesim/internal/des/latency"
	"servesim/internal/fit"
	"servesim/internal/testkit/shareddata"
)

// TestFA2MixedDefaults: the mixed-batch factors the physics defaults give
// every GPU but Hopper (FlashAttention 2) are the pooled fit to the mixed
// attention rows of the kernel profiles of every run here, the other
// coefficients at their defaults; a later change to those defaults or to
// the profiles has to refit them.
func TestFA2MixedDefaults(t *testing.T) {
	bench := shareddata.Path(t, "llmservingsim/bench/examples")
	profiles := shareddata.Path(t, "llmservingsim/profiler/perf")
	dirs, err := FindRuns(bench)
	if err != nil {
		t.Fatal(err)
	}
	var kps []fit.KernelProfile
	for _, d := range dirs {
		r, err := LoadRun(RunName(bench, d), d)
		if err != nil {
			t.Fatal(err)
		}
		kp, err := KernelProfile(r, pkgAssets(), profiles)
		if err != nil {
			t.Fatal(err)
		}
		kps = append(kps, kp)
	}
	if len(kps) != 4 {
		t.Fatalf("%d runs, want the 4 the defaults were fitted on", len(kps))
	}
	l40, err := latency.LookupGPU("L40S")
	if err != nil {
		t.Fatal(err)
	}
	beta := latency.PhysicsDefaultBeta(l40)
	mixed, wide, err := fit.MixedPenalty(kps, beta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(mixed-beta[latency.PhMixedKV]) > 0.01 || math.Abs(wide-beta[latency.PhMixedKVWide]) > 0.01 {
		t.Errorf("the profiles give mixed_kv %.3f and mixed_kv_wide %.3f; the FlashAttention 2 defaults say %.3f and %.3f",
			mixed, wide, beta[latency.PhMixedKV], beta[latency.PhMixedKVWide])
	}
	h100, _ := latency.LookupGPU("H100")
	if hb := latency.PhysicsDefaultBeta(h100); hb[latency.PhMixedKV] != 0.5 || hb[latency.PhMixedKVWide] != 0.25 {
		t.Errorf("Hopper's mixed factors %v, %v; want FlashAttention 3's 0.5 and 0.25", hb[latency.PhMixedKV], hb[latency.PhMixedKVWide])
	}
	if _, _, err := fit.MixedPenalty(nil, beta); err == nil {
		t.Error("no profiles gave factors")
	}
}
