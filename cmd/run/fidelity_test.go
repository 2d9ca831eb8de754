package main

import (
	"encoding/json"
	"math"
	"testing"
)

// TestUnfittedDefaultsPredictASaturatedH100 runs, with no fit, the
// deployment of the held-out real runs (vLLM 0.23, Qwen3-14B BF16 on one
// H100, max_num_seqs 256, max_num_batched_tokens 8192, 18,038 KV blocks, a
// client capped at 256 in flight) at its 12 req/s point: Poisson arrivals
// for 600 s, prompts spread over 256 to 4,096 tokens (a clipped normal of
// mean 2,176: the runs' exact mix is not published), 128 output tokens.
// The real server measured a TTFT p50 of 15.8 s and a TPOT of 117 ms there;
// BLIS's coefficients say 77 ms and 19 ms. The defaults must land within
// 15% and 10%.
func TestUnfittedDefaultsPredictASaturatedH100(t *testing.T) {
	out, errs, code := runCmd(t, "", "--model", "qwen/qwen3-14b", "--gpu", "H100", "--rate", "12", "--arrival", "poisson",
		"--num-requests", "7200", "--prompt-tokens", "2176", "--prompt-tokens-stdev", "1100",
		"--prompt-tokens-min", "256", "--prompt-tokens-max", "4096", "--output-tokens", "128",
		"--output-tokens-stdev", "0", "--output-tokens-min", "128", "--output-tokens-max", "128",
		"--max-num-batched-tokens", "8192", "--total-kv-blocks", "18038", "--client-max-concurrency", "256", "--streaming")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s struct {
		Completed int     `json:"completed_requests"`
		TTFTp50   float64 `json:"ttft_p50_ms"`
		TPOT      float64 `json:"tpot_mean_ms"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	t.Logf("TTFT p50 %.0f ms (real 15,800), TPOT %.1f ms (real 117)", s.TTFTp50, s.TPOT)
	if s.Completed != 7200 {
		t.Errorf("%d of 7200 completed: a capped client's timeout runs from its send", s.Completed)
	}
	if e := math.Abs(s.TTFTp50/15800 - 1); e > 0.15 {
		t.Errorf("TTFT p50 %.0f ms, %.0f%% off the real 15,800 ms (want ≤ 15%%)", s.TTFTp50, 100*e)
	}
	if e := math.Abs(s.TPOT/117 - 1); e > 0.10 {
		t.Errorf("TPOT %.1f ms, %.0f%% off the real 117 ms (want ≤ 10%%)", s.TPOT, 100*e)
	}
}
