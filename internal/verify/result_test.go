package verify

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// pageResult is a verification with every part of the page.
func pageResult() *Result {
	lat := 14.5
	r := &Result{Plan: "plan.json", Model: "qwen3-14b", GPU: "H100", SLO: "tpot.p99<25ms", PredictedMaxRateRPS: 18.43,
		MeasuredMaxRateRPS: 18.43, MeasuredFailRateRPS: 23.96, CorrectedMaxRateRPS: 22.79, PredictedKneeRPS: 19.04, CorrectedKneeRPS: 38.8, SharePrecision: SharePrecision,
		Probes: []Probe{{RateRPS: 12.9, Status: "ok", SLOMet: true, ThroughputRPS: 13.1, LatencyMs: &lat},
			{RateRPS: 23.96, Status: "unstable", ThroughputRPS: 21, Failures: []string{"unstable"}}},
		Coefficients: []Coef{{Name: "bw_eff", Planned: 0.595, Fitted: 0.843}},
		FitTTFTMAPE:  [2]float64{0.2, 0.13}, FitE2EMAPE: [2]float64{0.28, 0.013}}
	r.verdict()
	return r
}

// TestVerdict: a plan off by more than the stated precision does not
// hold; one within it, with no probe against it, holds.
func TestVerdict(t *testing.T) {
	r := pageResult()
	if r.Holds || !strings.HasPrefix(r.Verdict, "the plan does not hold: it said 18.4 req/s under tpot.p99<25ms; the server sustains 22.8 req/s (corrected answer, +24%)") {
		t.Errorf("holds %v, verdict %q", r.Holds, r.Verdict)
	}
	r.CorrectedMaxRateRPS, r.MeasuredFailRateRPS = 19, 0
	r.verdict()
	if !r.Holds || r.Verdict != "the plan holds: 18.4 req/s under tpot.p99<25ms, corrected 19.0 req/s (+3%)" {
		t.Errorf("holds %v, verdict %q", r.Holds, r.Verdict)
	}
	r.MeasuredFailRateRPS = 18 // a probe below the plan's rate failed
	r.verdict()
	if r.Holds {
		t.Errorf("a plan a probe contradicts holds: %q", r.Verdict)
	}
}

// TestPageFormats: each format carries the three capacities, the probes
// and the fitted coefficient beside the plan's.
func TestPageFormats(t *testing.T) {
	r := pageResult()
	for _, f := range Formats {
		var b bytes.Buffer
		if err := write(&b, f, r); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		wants := []string{"18.4", "22.8", "0.595", "0.843", "+41.7%", "12.9", "unstable"}
		switch f {
		case "json":
			var back Result
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.CorrectedMaxRateRPS != 22.79 || back.Coefficients[0].Fitted != 0.843 {
				t.Errorf("json: %v, %+v", err, back)
			}
			continue
		case "text":
			wants = append(wants, "≥ 18.4, < 24.0", "probe at 12.9 req/s: 14.5 ms, meets the SLO", "probe at 24.0 req/s: -, fails: unstable ", "19.0, 38.8")
		case "markdown":
			wants = append(wants, "| coefficient | plan | fitted | change |", "| bw_eff | 0.595 | 0.843 | +41.7% |")
		case "html":
			wants = append(wants, "<!DOCTYPE html>", `<span class="badge poor">does not hold</span>`, "tpot.p99&lt;25ms")
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s page lacks %q:\n%s", f, w, out)
			}
		}
	}
}
