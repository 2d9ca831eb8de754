package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

// benchRequest is one line of requests.jsonl: arrival_time is wall-clock epoch
// seconds, the *_ts fields are the engine's monotonic clock in seconds.
type benchRequest struct {
	RequestID    string  `json:"request_id"`
	InputToks    int     `json:"input_toks"`
	OutputToks   int     `json:"output_toks"`
	ArrivalTime  float64 `json:"arrival_time"`
	QueuedTS     float64 `json:"queued_ts"`
	FirstTokenTS float64 `json:"first_token_ts"`
	LastTokenTS  float64 `json:"last_token_ts"`
}

// realRecords turns a bench run into mode-real records on a t = 0 origin. The two
// clocks are aligned as docs/tracev2.md §5 aligns epoch send times: the offset is the
// smallest queued − arrival, since the lag from arrival to queueing is never
// negative. The queue instant plays the send time.
func realRecords(t *testing.T, path string) []tracev2.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var reqs []benchRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r benchRequest
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		reqs = append(reqs, r)
	}
	a0, off := math.Inf(1), math.Inf(1)
	for _, r := range reqs {
		a0 = math.Min(a0, r.ArrivalTime)
		off = math.Min(off, r.QueuedTS-r.ArrivalTime)
	}
	us := func(sec float64) int64 { return int64(math.Round(sec*1e6)) + 1 } // ≥ 1: 0 means never
	var out []tracev2.Record
	for _, r := range reqs {
		id, err := strconv.ParseInt(strings.TrimPrefix(r.RequestID, "bench-"), 10, 64)
		if err != nil {
			t.Fatalf("%s: request_id %q", path, r.RequestID)
		}
		out = append(out, tracev2.Record{
			RequestID: id, Streaming: true, InputTokens: r.InputToks, OutputTokens: r.OutputToks,
			ArrivalTimeUs: us(r.ArrivalTime - a0), SendTimeUs: us(r.QueuedTS - off - a0),
			FirstChunkTimeUs: us(r.FirstTokenTS - off - a0), LastChunkTimeUs: us(r.LastTokenTS - off - a0),
			Status: "ok", FinishReason: "length",
		})
	}
	return out
}

// maxWaiting reads the largest waiting-queue length of timeseries.csv.
func maxWaiting(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, name := range rows[0] {
		if name == "waiting" {
			col = i
		}
	}
	most := 0
	for _, r := range rows[1:] {
		v, _ := strconv.ParseFloat(r[col], 64)
		most = max(most, int(v))
	}
	return most
}

// TestValidityOnRealVLLMRuns checks the verdicts on four real vLLM runs: 300
// ShareGPT requests sent at 10 req/s, more than each server sustains, so the
// engine's own waiting queue (timeseries.csv) reached 35 to 227 requests. The
// saturation check must see that from the trace alone, and must not mistake it
// for a cold start.
func TestValidityOnRealVLLMRuns(t *testing.T) {
	// Real vLLM 0.19 runs (LLMServingSim, MIT; see its PROVENANCE.md).
	root := shareddata.Path(t, "llmservingsim/bench/examples")
	runs, _ := filepath.Glob(filepath.Join(root, "*", "*", "vllm", "requests.jsonl"))
	if len(runs) == 0 {
		t.Skipf("no requests.jsonl under %s", root)
	}
	for _, path := range runs {
		name, _ := filepath.Rel(root, filepath.Dir(filepath.Dir(path)))
		recs := realRecords(t, path)
		// The simulator's per-request output is not in the data: stand in a
		// prediction 3 % slow on TTFT and 2 % fast on E2E.
		var sims []tracev2.SimResult
		for _, r := range recs {
			ttft := float64(r.FirstChunkTimeUs-r.SendTimeUs) * 1.03
			e2e := float64(r.LastChunkTimeUs-r.SendTimeUs) * 0.98
			sims = append(sims, simOf(r.RequestID, ttft, e2e, r.InputTokens, r.OutputTokens))
		}
		rep := build(t, Input{Header: TraceHeader{Mode: "real"}, Trace: recs, Sim: sims}, nil)
		if rep.TraceInfo.MatchedPairs != len(recs) || len(recs) != 300 {
			t.Errorf("%s: %d matched of %d rows, want 300", name, rep.TraceInfo.MatchedPairs, len(recs))
		}
		queue := maxWaiting(t, filepath.Join(filepath.Dir(path), "timeseries.csv"))
		sat := checkOf(rep, CheckSaturated)
		if queue < 20 || sat.Status != StatusFlagged || sat.Value < 10 {
			t.Errorf("%s: engine queue peaked at %d; saturated = %s (TTFT growth %.1fx: %s)", name, queue, sat.Status, sat.Value, sat.Detail)
		}
		if c := checkOf(rep, CheckColdStart); c.Status != StatusOK {
			t.Errorf("%s: cold_start %s (%s), want ok: latency rises over the run, not at its start", name, c.Status, c.Detail)
		}
		if c := checkOf(rep, CheckWarmCache); c.Status != StatusNotAssessed {
			t.Errorf("%s: warm_cache %s, want not_assessed (no cached-token counts recorded)", name, c.Status)
		}
		if c := checkOf(rep, CheckTruncated); c.Status != StatusOK {
			t.Errorf("%s: truncated %s (%s), want ok", name, c.Status, c.Detail)
		}
		// Send lag here is the time from the request's creation to the engine
		// queue; it must be measured and plausible (under a second).
		if c := checkOf(rep, CheckClientLagged); c.Status == StatusNotAssessed || c.Value <= 0 || c.Value > 1e6 {
			t.Errorf("%s: client lag %s p95 %v us", name, c.Status, c.Value)
		}
		w := rep.Validity.Windows
		if len(w) != 1 || !w[0].Graded || w[0].Requests != 300 {
			t.Errorf("%s: windows %+v, want one graded window of 300", name, w)
		}
		if g := rep.Metrics[MetricTTFT].RequestLevel.Quality; g != GradeExcellent {
			t.Errorf("%s: ttft grade %s for a 3%% bias, want excellent", name, g)
		}
		t.Logf("%s: queue peak %d; %s", name, queue, sat.Detail)
	}
}
