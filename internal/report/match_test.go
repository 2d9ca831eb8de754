package report

import (
	"errors"
	"strings"
	"testing"
	"time"

	"servesim/internal/tracev2"
)

func TestBuckets(t *testing.T) {
	warm := okRec(0, 100, 200, 300, 10, 5)
	nonOK := okRec(1, 1000, 0, 0, 10, 5)
	nonOK.Status = "error"
	unmatched := okRec(2, 2000, 2100, 2500, 10, 5)
	invalid := okRec(3, 3000, 0, 3500, 10, 5)
	backwards := okRec(4, 4000, 3900, 4500, 10, 5) // first before send
	matched := okRec(5, 5000, 5100, 5900, 10, 5)
	matched2 := okRec(6, 6000, 6200, 7000, 10, 5)
	in := Input{
		Header: TraceHeader{WarmUpRequests: 1},
		Trace:  []tracev2.Record{warm, nonOK, unmatched, invalid, backwards, matched, matched2},
		Sim: []tracev2.SimResult{simOf(0, 1, 2, 10, 5), simOf(1, 1, 2, 10, 5), simOf(3, 1, 2, 10, 5), simOf(4, 1, 2, 10, 5),
			simOf(5, 100, 900, 10, 5), simOf(6, 200, 1000, 10, 5), simOf(99, 1, 2, 10, 5)},
	}
	r := build(t, in, nil)
	got := r.TraceInfo
	want := TraceInfo{NumRequests: 7, WarmUpExcluded: 1, MatchedPairs: 2, ExcludedNonOK: 1, UnmatchedReal: 1,
		InvalidTiming: 2, UnmatchedSim: 1, Duration: got.Duration}
	if got != want {
		t.Errorf("trace info = %+v, want %+v", got, want)
	}
	sum := got.WarmUpExcluded + got.ExcludedNonOK + got.UnmatchedReal + got.InvalidTiming + got.MatchedPairs
	if sum != got.NumRequests {
		t.Errorf("buckets sum to %d, want num_requests %d", sum, got.NumRequests)
	}
	// runtime: non-warm-up rows with a tracev2.SimResult: ids 1,3,4,5,6 -> 1000 .. 7000.
	if got.Duration != "6ms" {
		t.Errorf("duration = %q, want 6ms", got.Duration)
	}
}

func TestWarmupByDurationAndOverride(t *testing.T) {
	var recs []tracev2.Record
	var sims []tracev2.SimResult
	for i := int64(0); i < 6; i++ {
		send := 1 + i*1_000_000 // one request per second
		recs = append(recs, okRec(10+i, send, send+1000, send+5000, 10, 5))
		sims = append(sims, simOf(10+i, 1000, 5000, 10, 5))
	}
	tests := []struct {
		name   string
		n      int64
		dur    time.Duration
		header int64
		want   int
	}{
		{"header default excludes ids below 12", -1, 0, 12, 2},
		{"flag overrides header", 11, 0, 12, 1},
		{"zero flag excludes nothing", 0, 0, 12, 0},
		{"duration 2.5s excludes three", 0, 2500 * time.Millisecond, 0, 3},
		{"both: union", 12, 3500 * time.Millisecond, 0, 4},
	}
	for _, tt := range tests {
		r := build(t, Input{Header: TraceHeader{WarmUpRequests: tt.header}, Trace: recs, Sim: sims}, func(c *Config) {
			c.WarmupRequests, c.WarmupDuration = tt.n, tt.dur
		})
		if r.TraceInfo.WarmUpExcluded != tt.want || r.TraceInfo.MatchedPairs != 6-tt.want {
			t.Errorf("%s: warm-up %d matched %d, want %d and %d", tt.name, r.TraceInfo.WarmUpExcluded, r.TraceInfo.MatchedPairs, tt.want, 6-tt.want)
		}
	}
}

func TestDuplicateIDs(t *testing.T) {
	a, b := okRec(7, 1, 2, 3, 1, 1), okRec(7, 4, 5, 6, 1, 1)
	_, err := Build(Input{Trace: []tracev2.Record{a, okRec(8, 1, 2, 3, 1, 1), b}, TraceLocs: []string{"t.csv:2", "t.csv:3", "t.csv:4"},
		Sim: []tracev2.SimResult{simOf(7, 1, 2, 1, 1)}}, DefaultConfig())
	var ie *InputError
	if !errors.As(err, &ie) || ie.ExitCode() != 2 || !strings.Contains(err.Error(), "t.csv:2 and t.csv:4") {
		t.Errorf("trace duplicate: err = %v, want an InputError naming t.csv:2 and t.csv:4", err)
	}
	_, err = Build(Input{Trace: []tracev2.Record{a}, Sim: []tracev2.SimResult{simOf(7, 1, 2, 1, 1), simOf(7, 1, 2, 1, 1)}}, DefaultConfig())
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "sim result 1 and sim result 2") {
		t.Errorf("sim duplicate: err = %v, want default locations named", err)
	}
}

func TestNoMatchedPairsIsInputError(t *testing.T) {
	_, err := Build(Input{Trace: []tracev2.Record{okRec(1, 1, 2, 3, 1, 1)}, Sim: []tracev2.SimResult{simOf(2, 1, 2, 1, 1)}}, DefaultConfig())
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "request_id") {
		t.Errorf("err = %v, want InputError with a request_id hint", err)
	}
}

func TestConfigValidation(t *testing.T) {
	in := Input{Trace: []tracev2.Record{okRec(1, 1, 2, 3, 1, 1)}, Sim: []tracev2.SimResult{simOf(1, 1, 2, 1, 1)}}
	for name, mod := range map[string]func(*Config){
		"rtt -2":         func(c *Config) { c.NetworkRTTUs = -2 },
		"warmup -3":      func(c *Config) { c.WarmupRequests = -3 },
		"bandwidth -1":   func(c *Config) { c.NetworkBandwidthMbps = -1 },
		"ttft-from bad":  func(c *Config) { c.TTFTFrom = "last-token" },
		"negative dur":   func(c *Config) { c.WarmupDuration = -time.Second },
		"validity neg":   func(c *Config) { c.Validity.LagP95Max = -1 },
		"slo target neg": func(c *Config) { c.SLOOverrides = map[string]SLOTarget{"x": {TTFTMs: -1}} },
	} {
		cfg := DefaultConfig()
		mod(&cfg)
		_, err := Build(in, cfg)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: err = %v, want InputError", name, err)
		}
	}
}

func TestTokenMismatches(t *testing.T) {
	plain := okRec(1, 1, 10, 100, 50, 20) // prompt 50
	server := okRec(2, 1, 10, 100, 50, 20)
	server.ServerInputTokens = 70 // server count wins
	prefix := okRec(3, 1, 10, 100, 50, 20)
	prefix.PrefixLength = 30 // prompt 80
	outDiff := okRec(4, 1, 10, 100, 50, 20)
	in := Input{Trace: []tracev2.Record{plain, server, prefix, outDiff}, Sim: []tracev2.SimResult{
		simOf(1, 9, 99, 50, 20), // match
		simOf(2, 9, 99, 50, 20), // 70 != 50: mismatch
		simOf(3, 9, 99, 80, 20), // prefix-aware: match
		simOf(4, 9, 99, 50, 19), // output differs: mismatch
	}}
	r := build(t, in, nil)
	if r.TraceInfo.TokenMismatches != 2 {
		t.Errorf("token mismatches = %d, want 2", r.TraceInfo.TokenMismatches)
	}
}

func TestNetworkNormalisation(t *testing.T) {
	rec := okRec(1, 1000, 13000, 60000, 100, 50)
	sim := simOf(1, 10000, 50000, 100, 50)
	sim.ITLMeanUs = 900
	tests := []struct {
		name        string
		header      float64
		rtt         int64
		bw          float64
		ttft, e2e   float64
		tpotSimWant float64
	}{
		{"none", 0, -1, 0, 10000, 50000, 900},
		{"header rtt truncated", 1.2345, -1, 0, 11234, 51234, 900},
		{"flag rtt", 1.2345, 500, 0, 10500, 50500, 900},
		// 8 Mb/s: up 32*100/8 = 400 us, down 32*50/8 = 200 us; tpot untouched.
		{"rtt and bandwidth", 0, 1000, 8, 11400, 51600, 900},
	}
	for _, tt := range tests {
		r := build(t, Input{Header: TraceHeader{MeasuredRTTMs: tt.header}, Trace: []tracev2.Record{rec}, Sim: []tracev2.SimResult{sim}},
			func(c *Config) { c.NetworkRTTUs, c.NetworkBandwidthMbps = tt.rtt, tt.bw })
		if got := r.Metrics[MetricTTFT].WorkloadLevel.SimMean; got != tt.ttft {
			t.Errorf("%s: sim ttft = %v, want %v", tt.name, got, tt.ttft)
		}
		if got := r.Metrics[MetricE2E].WorkloadLevel.SimMean; got != tt.e2e {
			t.Errorf("%s: sim e2e = %v, want %v", tt.name, got, tt.e2e)
		}
		if got := r.Metrics[MetricTPOT].WorkloadLevel.SimMean; got != tt.tpotSimWant {
			t.Errorf("%s: sim tpot = %v, want %v", tt.name, got, tt.tpotSimWant)
		}
		if got := r.Metrics[MetricTTFT].WorkloadLevel.RealMean; got != 12000 {
			t.Errorf("%s: real ttft = %v, want 12000", tt.name, got)
		}
	}
}

func TestITLAndTPOTPairs(t *testing.T) {
	a := okRec(1, 0, 1000, 11000, 10, 11) // tpot (11000-1000)/10 = 1000
	a.SendTimeUs = 1
	b := okRec(2, 1, 2000, 3000, 10, 1) // output 1: no tpot
	c := okRec(3, 1, 500, 4500, 10, 5)  // all ITL diffs negative: dropped
	d := okRec(4, 1, 500, 4500, 10, 5)  // one chunk only: no itl pair
	in := Input{
		Trace: []tracev2.Record{a, b, c, d},
		Sim: []tracev2.SimResult{
			simOf(1, 900, 10900, 10, 11), // sim per-token (10900-900)/10 = 1000
			simOf(2, 900, 1900, 10, 1),
			simOf(3, 400, 4400, 10, 5),
			simOf(4, 400, 4400, 10, 5),
		},
		ITLGiven: true,
		ITL: []tracev2.ITLRow{ // out of order on purpose
			{RequestID: 1, ChunkIndex: 2, TimestampUs: 140}, {RequestID: 1, ChunkIndex: 0, TimestampUs: 100}, {RequestID: 1, ChunkIndex: 3, TimestampUs: 260}, {RequestID: 1, ChunkIndex: 1, TimestampUs: 150}, // diffs 50, -10, 120 -> mean 85
			{RequestID: 3, ChunkIndex: 0, TimestampUs: 900}, {RequestID: 3, ChunkIndex: 1, TimestampUs: 800}, {RequestID: 3, ChunkIndex: 2, TimestampUs: 700},
			{RequestID: 4, ChunkIndex: 0, TimestampUs: 100},
		},
	}
	r := build(t, in, nil)
	itl := r.Metrics[MetricITL]
	if itl == nil || itl.Count != 1 || itl.WorkloadLevel.RealMean != 85 || itl.WorkloadLevel.SimMean != 1000 {
		t.Fatalf("itl = %+v, want one pair real 85 sim 1000", itl)
	}
	if r.TraceInfo.ITLDropped != 1 {
		t.Errorf("itl_dropped = %d, want 1", r.TraceInfo.ITLDropped)
	}
	tpot := r.Metrics[MetricTPOT]
	if tpot == nil || tpot.Count != 3 || r.pairs[MetricTPOT].real[0] != 1000 || r.pairs[MetricTPOT].sim[0] != 1000 {
		t.Errorf("tpot = %+v, want 3 pairs starting 1000/1000", tpot)
	}
	// Without ITL data there is no itl metric and a gate on it fails.
	in.ITLGiven, in.ITL = false, nil
	r = build(t, in, nil)
	if r.Metrics[MetricITL] != nil || !strings.Contains(r.absent[MetricITL], "no ITL data") {
		t.Errorf("itl without data: metric %v absent %q", r.Metrics[MetricITL], r.absent[MetricITL])
	}
}

func TestTTFTFromFirstToken(t *testing.T) {
	rec := okRec(1, 100, 200, 1100, 10, 11)
	rec.FirstTokenTimeUs = 300
	in := Input{Trace: []tracev2.Record{rec}, Sim: []tracev2.SimResult{simOf(1, 150, 1000, 10, 11)}}
	for _, tt := range []struct {
		from       string
		ttft, tpot float64
	}{{TTFTFromFirstChunk, 100, 90}, {TTFTFromFirstToken, 200, 80}} {
		r := build(t, in, func(c *Config) { c.TTFTFrom = tt.from })
		if got := r.Metrics[MetricTTFT].WorkloadLevel.RealMean; got != tt.ttft {
			t.Errorf("%s: real ttft = %v, want %v", tt.from, got, tt.ttft)
		}
		if got := r.Metrics[MetricTPOT].WorkloadLevel.RealMean; got != tt.tpot {
			t.Errorf("%s: real tpot = %v, want %v", tt.from, got, tt.tpot)
		}
	}
}

func TestBreakdownsAndSmallSampleWarning(t *testing.T) {
	a := okRec(1, 1, 100, 1000, 1, 1)
	a.SLOClass, a.Model = "critical", "m1"
	b := okRec(2, 1, 100, 1000, 1, 1)
	sb := simOf(2, 90, 900, 1, 1)
	sb.SLOClass = "batch" // trace class empty: sim's is used
	r := build(t, Input{Trace: []tracev2.Record{a, b}, Sim: []tracev2.SimResult{simOf(1, 110, 1100, 1, 1), sb}}, nil)
	if len(r.BySLOClass) != 2 || r.BySLOClass["critical"][MetricTTFT].Count != 1 || r.BySLOClass["batch"][MetricE2E].Count != 1 {
		t.Errorf("by_slo_class = %v", r.BySLOClass)
	}
	if len(r.ByModel) != 1 || r.ByModel["m1"] == nil {
		t.Errorf("by_model = %v", r.ByModel)
	}
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w, "ttft: only 2 pairs")
	}
	if !found || r.Metrics[MetricTTFT].RequestLevel.Quality != GradePoor {
		t.Errorf("warnings %q: want a small-sample warning and grade poor", r.Warnings)
	}
}

func TestIDIndexSparseAndDense(t *testing.T) {
	for _, ids := range [][]int64{{0, 1, 2, 3}, {5, 1e12, -7, 42}} {
		x := newIDIndex(func(yield func(int64) bool) {
			for _, id := range ids {
				if !yield(id) {
					return
				}
			}
		})
		for i, id := range ids {
			x.set(id, i)
		}
		for i, id := range ids {
			if got, ok := x.get(id); !ok || got != i {
				t.Errorf("ids %v: get(%d) = %d,%v, want %d", ids, id, got, ok, i)
			}
		}
		if _, ok := x.get(99); ok {
			t.Errorf("ids %v: get(99) found", ids)
		}
	}
	// Sparse ids go through the map path and still catch duplicates.
	_, err := Build(Input{Trace: []tracev2.Record{okRec(1e12, 1, 2, 3, 1, 1), okRec(-4, 1, 2, 3, 1, 1), okRec(1e12, 1, 2, 3, 1, 1)},
		Sim: []tracev2.SimResult{simOf(1e12, 1, 2, 1, 1)}}, DefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "trace row 1 and trace row 3") {
		t.Errorf("sparse duplicate: err = %v", err)
	}
}

// TestSimulatedTraceNotStreamed: a simulated trace stamps a request's first
// chunk at its first token even when it does not stream, so its replay is
// compared token for token (TTFT and TPOT), unlike a real capture's
// non-streamed rows.
func TestSimulatedTraceNotStreamed(t *testing.T) {
	recs := []tracev2.Record{
		{RequestID: 0, InputTokens: 10, OutputTokens: 5, SendTimeUs: 1000, FirstChunkTimeUs: 3000, LastChunkTimeUs: 9000, Status: "ok"},
		{RequestID: 1, InputTokens: 10, OutputTokens: 5, SendTimeUs: 2000, FirstChunkTimeUs: 5000, LastChunkTimeUs: 12000, Status: "ok"},
		{RequestID: 2, InputTokens: 10, OutputTokens: 5, SendTimeUs: 3000, FirstChunkTimeUs: 4000, LastChunkTimeUs: 9000, Status: "ok"},
	}
	sims := []tracev2.SimResult{
		{RequestID: 0, TTFTUs: 2000, E2EUs: 8000, InputTokens: 10, OutputTokens: 5, ITLMeanUs: 1500},
		{RequestID: 1, TTFTUs: 3000, E2EUs: 10000, InputTokens: 10, OutputTokens: 5, ITLMeanUs: 1750},
		{RequestID: 2, TTFTUs: 1000, E2EUs: 6000, InputTokens: 10, OutputTokens: 5, ITLMeanUs: 1250},
	}
	for _, mode := range []string{tracev2.ModeGenerated, tracev2.ModeReal} {
		rep, err := Build(Input{Header: TraceHeader{Mode: mode}, Trace: recs, Sim: sims}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		ttft := rep.Metrics[MetricTTFT].RequestLevel.MAPE
		_, tpot := rep.Metrics[MetricTPOT]
		switch mode {
		case tracev2.ModeGenerated:
			if ttft != 0 || !tpot {
				t.Errorf("generated: TTFT MAPE %v (want 0, the first tokens match), TPOT compared %v (want true)", ttft, tpot)
			}
		default:
			if ttft == 0 || tpot {
				t.Errorf("real: TTFT MAPE %v (want > 0: a whole response arrives with its last token), TPOT compared %v (want false)", ttft, tpot)
			}
		}
	}
}
