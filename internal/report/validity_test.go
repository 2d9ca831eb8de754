package report

import (
	"math"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// cleanRun is a steady open-loop run: a request every 100 ms, TTFT 50 ms, TPOT
// 10 ms, 20 output tokens, a little cached prefix only after the first response.
func cleanRun(n int) Input {
	var in Input
	for i := 0; i < n; i++ {
		send := int64(1 + i*100_000)
		ttft := int64(50_000 + (i%5)*1000)
		rec := okRec(int64(i), send, send+ttft, send+ttft+19*10_000, 100, 20)
		if i > 3 {
			rec.CachedTokens = 16
		}
		in.Trace = append(in.Trace, rec)
		in.Sim = append(in.Sim, simOf(int64(i), float64(ttft), float64(ttft+190_000), 100, 20))
	}
	return in
}

func checkOf(r *Report, name string) ValidityCheck {
	for _, c := range r.Validity.Checks {
		if c.Name == name {
			return c
		}
	}
	return ValidityCheck{}
}

func TestValidityClean(t *testing.T) {
	r := build(t, cleanRun(100), nil)
	if !r.Validity.Valid {
		t.Fatalf("clean run flagged: %+v", r.Validity.Checks)
	}
	for _, name := range checkNames() {
		if c := checkOf(r, name); c.Status != StatusOK {
			t.Errorf("%s: status %s (%s), want ok", name, c.Status, c.Detail)
		}
	}
	if len(r.Validity.Windows) != 1 || !r.Validity.Windows[0].Graded || r.Validity.Windows[0].Requests != 100 {
		t.Errorf("windows = %+v, want one graded window of 100", r.Validity.Windows)
	}
}

func TestValidityTriggers(t *testing.T) {
	tests := []struct {
		name  string
		check string
		mod   func(in *Input)
	}{
		{"saturated: queue and TTFT grow", CheckSaturated, func(in *Input) {
			for i := range in.Trace {
				r := &in.Trace[i]
				send := int64(1 + i*10_000) // 100 req/s: faster than served
				ttft := int64(50_000 + i*20_000)
				r.ArrivalTimeUs, r.SendTimeUs, r.FirstChunkTimeUs, r.LastChunkTimeUs = send, send, send+ttft, send+ttft+190_000
			}
		}},
		{"client lagged: sends 50 ms late", CheckClientLagged, func(in *Input) {
			for i := range in.Trace {
				in.Trace[i].ArrivalTimeUs -= 50_000
				if in.Trace[i].ArrivalTimeUs < 0 {
					in.Trace[i].ArrivalTimeUs = 0
				}
			}
		}},
		{"truncated: length below requested", CheckTruncated, func(in *Input) {
			in.RequestedOutputTokens = map[int64]int{}
			for i := 0; i < 5; i++ {
				in.Trace[10+i].FinishReason = "length"
				in.RequestedOutputTokens[int64(10+i)] = 100
			}
		}},
		{"truncated: output tokens differ from sim", CheckTruncated, func(in *Input) {
			in.Sim[7].OutputTokens, in.Sim[8].OutputTokens = 64, 64
		}},
		{"truncated: at max_model_len", CheckTruncated, func(in *Input) {
			ml := int64(120)
			in.Header.Server.MaxModelLen = &ml
			in.Trace[20].FinishReason, in.Trace[21].FinishReason = "length", "length"
		}},
		{"warm cache: first request hits the cache", CheckWarmCache, func(in *Input) {
			in.Trace[0].CachedTokens = 96
		}},
		{"cold start: first requests slow", CheckColdStart, func(in *Input) {
			for i := 0; i < 5; i++ {
				r := &in.Trace[i]
				r.FirstChunkTimeUs += 400_000
				r.LastChunkTimeUs += 400_000
			}
		}},
		{"cold start: first decodes slow", CheckColdStart, func(in *Input) {
			for i := 0; i < 5; i++ {
				in.Trace[i].LastChunkTimeUs += 190_000 // tpot 10 ms -> 20 ms
			}
		}},
	}
	for _, tt := range tests {
		in := cleanRun(100)
		tt.mod(&in)
		r := build(t, in, nil)
		c := checkOf(r, tt.check)
		if c.Status != StatusFlagged {
			t.Errorf("%s: %s status %s (%s), want flagged", tt.name, tt.check, c.Status, c.Detail)
			continue
		}
		if r.Validity.Valid {
			t.Errorf("%s: report still valid", tt.name)
		}
		for _, other := range checkNames() {
			if other != tt.check && other != CheckSaturated && checkOf(r, other).Status == StatusFlagged {
				t.Errorf("%s: %s also flagged: %s", tt.name, other, checkOf(r, other).Detail)
			}
		}
		warned := false
		for _, w := range r.Warnings {
			warned = warned || strings.HasPrefix(w, "validity: "+tt.check)
		}
		if !warned {
			t.Errorf("%s: no validity warning in %q", tt.name, r.Warnings)
		}
	}
}

func TestValidityColdStartWindowAndHint(t *testing.T) {
	in := cleanRun(100)
	for i := 0; i < 5; i++ {
		in.Trace[i].FirstChunkTimeUs += 400_000
		in.Trace[i].LastChunkTimeUs += 400_000
	}
	c := checkOf(build(t, in, nil), CheckColdStart)
	if c.Window == nil || c.Window.Requests != 5 || c.Window.StartUs != 1 || c.Window.EndUs != 400_001 {
		t.Errorf("window = %+v, want the first 5 sends", c.Window)
	}
	if !strings.Contains(c.Detail, "--warmup-duration 401ms") {
		t.Errorf("detail %q lacks the warm-up hint", c.Detail)
	}
}

func TestValidityNotAssessed(t *testing.T) {
	in := cleanRun(4)
	for i := range in.Trace {
		in.Trace[i].CachedTokens = 0
	}
	r := build(t, in, nil)
	for _, name := range []string{CheckSaturated, CheckWarmCache, CheckColdStart} {
		if c := checkOf(r, name); c.Status != StatusNotAssessed {
			t.Errorf("%s with 4 rows: status %s, want not_assessed", name, c.Status)
		}
	}
	if !r.Validity.Valid {
		t.Error("not-assessed checks must not make the run invalid")
	}
}

func TestValidityWarmUpWindow(t *testing.T) {
	in := cleanRun(20)
	in.Header.WarmUpRequests = 3
	r := build(t, in, nil)
	w := r.Validity.Windows
	if len(w) != 2 || w[0].Graded || w[0].Requests != 3 || !strings.Contains(w[0].Label, "request_id < 3") ||
		!w[1].Graded || w[1].Requests != 17 || w[1].StartUs != 300_001 {
		t.Errorf("windows = %+v", w)
	}
	_ = tracev2.Record{}
}

// A run shorter than its latencies has requests in flight growing all along, but
// TTFT stays flat: not saturation.
func TestValidityShortRunNotSaturated(t *testing.T) {
	in := cleanRun(100)
	for i := range in.Trace {
		r := &in.Trace[i]
		r.LastChunkTimeUs = r.FirstChunkTimeUs + 20_000_000 // 20 s decodes, sends over 10 s
		r.OutputTokens = 2000
		in.Sim[i].E2EUs = in.Sim[i].TTFTUs + 20_000_000
		in.Sim[i].OutputTokens = 2000
	}
	r := build(t, in, nil)
	if c := checkOf(r, CheckSaturated); c.Status != StatusOK {
		t.Errorf("saturated = %s (%s), want ok", c.Status, c.Detail)
	}
}

func TestNonFiniteSimLeftOut(t *testing.T) {
	in := cleanRun(10)
	in.Sim[3].TTFTUs = math.NaN()
	r := build(t, in, nil)
	var b strings.Builder
	if err := r.WriteJSON(&b); err != nil || r.Metrics[MetricTTFT].Count != 9 {
		t.Errorf("NaN sim: json err %v, ttft count %d, want nil and 9", err, r.Metrics[MetricTTFT].Count)
	}
}

// A client capped at 4 in flight, offered 100 req/s for a 240 ms service:
// every late send follows an end by 60 µs. The lag verdict names the
// replay that models the client; a late client without a cap gets none.
func TestClientLaggedNamesTheCap(t *testing.T) {
	in := cleanRun(100)
	ends := make([]int64, len(in.Trace))
	for i := range in.Trace {
		r := &in.Trace[i]
		arrival := int64(1 + i*10_000)
		send := arrival
		if i >= 4 {
			send = max(arrival, ends[i-4]+60)
		}
		ttft := r.FirstChunkTimeUs - r.SendTimeUs
		e2e := r.LastChunkTimeUs - r.SendTimeUs
		r.ArrivalTimeUs, r.SendTimeUs, r.FirstChunkTimeUs, r.LastChunkTimeUs = arrival, send, send+ttft, send+e2e
		ends[i] = r.LastChunkTimeUs
	}
	c := checkOf(build(t, in, nil), CheckClientLagged)
	want := "--client-max-concurrency 4 --client-send-gap 60us"
	if c.Status != StatusFlagged || !strings.Contains(c.Fix, want) || !strings.Contains(c.Detail, want) {
		t.Fatalf("capped client: status %s, fix %q, detail %q; want flagged naming %q", c.Status, c.Fix, c.Detail, want)
	}

	late := cleanRun(100)
	for i := range late.Trace {
		late.Trace[i].ArrivalTimeUs = max(0, late.Trace[i].ArrivalTimeUs-50_000)
	}
	if c := checkOf(build(t, late, nil), CheckClientLagged); c.Status != StatusFlagged || c.Fix != "" {
		t.Fatalf("late client without a cap: status %s, fix %q; want flagged with no fix", c.Status, c.Fix)
	}
}
