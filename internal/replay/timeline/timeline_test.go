package timeline

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/tracev2"
)

// event is one decoded trace event.
type event struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   int64          `json:"ts"`
	Dur  int64          `json:"dur"`
	ID   *int64         `json:"id"`
	Args map[string]any `json:"args"`
	Cat  string         `json:"cat"`
}

type file struct {
	DisplayTimeUnit string  `json:"displayTimeUnit"`
	TraceEvents     []event `json:"traceEvents"`
}

func records(n int, gapUs int64, prompt, output int) []tracev2.Record {
	recs := make([]tracev2.Record, n)
	for i := range recs {
		at := int64(i) * gapUs
		recs[i] = tracev2.Record{RequestID: int64(i), ArrivalTimeUs: at, SendTimeUs: at,
			InputTokens: prompt + 37*(i%5), OutputTokens: output + 13*(i%7), Status: "ok"}
	}
	return recs
}

func resolve(t *testing.T, blocks int) *deploy.Resolved {
	t.Helper()
	cfg := deploy.Default()
	cfg.TotalKVBlocks, cfg.MaxModelLen = blocks, 2048
	d, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// simulate runs recs and returns the SimResults, the summary's output
// token total, and the timeline (nil unless withTimeline).
func simulate(t *testing.T, d *deploy.Resolved, recs []tracev2.Record, withTimeline bool) ([]tracev2.SimResult, int64, *file) {
	t.Helper()
	var buf bytes.Buffer
	var obs *Recorder
	if withTimeline {
		obs = New(&buf)
	}
	results, sum := simulateCluster(t, d, recs, obs)
	if !withTimeline {
		return results, sum.TotalOutputTokens, nil
	}
	var f file
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatalf("timeline is not valid JSON: %v", err)
	}
	return results, sum.TotalOutputTokens, &f
}

func arg(e event, k string) int64 {
	v, _ := e.Args[k].(float64)
	return int64(v)
}

// checkTimeline verifies the structure every timeline must have and returns
// the step totals and the request slice names seen.
func checkTimeline(t *testing.T, f *file, d *deploy.Resolved, nreq int) (prefill, decode, generated int64, names map[string]int) {
	t.Helper()
	if f.DisplayTimeUnit != "ms" {
		t.Errorf("displayTimeUnit %q", f.DisplayTimeUnit)
	}
	meta := map[string]bool{}
	var lastEnd int64
	steps, counters := 0, map[string]int{}
	type open struct{ names []string }
	stacks := map[int64]*open{}
	requests := map[int64]int{}
	names = map[string]int{}
	lastTs := map[int64]int64{}
	for _, e := range f.TraceEvents {
		switch e.Ph {
		case "M":
			meta[e.Name+"/"+e.Args["name"].(string)] = true
		case "X":
			steps++
			if e.Tid != tidSteps || e.Ts < lastEnd || e.Dur <= 0 {
				t.Fatalf("step %+v: want on the steps track, after the previous one (ends %d), positive duration", e, lastEnd)
			}
			lastEnd = e.Ts + e.Dur
			b, p, dc := arg(e, "batch_size"), arg(e, "prefill_tokens"), arg(e, "decode_tokens")
			if b < 1 || b > int64(d.MaxNumSeqs) || p+dc < 1 || p+dc > int64(d.MaxNumBatchedTokens) || dc > b {
				t.Fatalf("step %+v: batch or token counts out of bounds", e.Args)
			}
			if kv := arg(e, "kv_blocks_used"); kv < 1 || kv > int64(d.TotalKVBlocks) {
				t.Fatalf("step %+v: KV blocks out of [1, %d]", e.Args, d.TotalKVBlocks)
			}
			prefill, decode, generated = prefill+p, decode+dc, generated+arg(e, "generated_tokens")
		case "C":
			counters[e.Name]++
		case "b", "e":
			if e.ID == nil || e.Cat != "request" || e.Tid != tidRequests {
				t.Fatalf("async event %+v: want an id, category request, the requests track", e)
			}
			id := *e.ID
			if e.Ts < lastTs[id] {
				t.Fatalf("request %d: %s %q at %d before the previous event (%d)", id, e.Ph, e.Name, e.Ts, lastTs[id])
			}
			lastTs[id] = e.Ts
			st := stacks[id]
			if st == nil {
				st = &open{}
				stacks[id] = st
			}
			if e.Ph == "b" {
				if len(st.names) == 0 && e.Name != "request" || len(st.names) == 1 && e.Name == "request" || len(st.names) > 1 {
					t.Fatalf("request %d: %q begins inside %v", id, e.Name, st.names)
				}
				if e.Name == "request" {
					requests[id]++
				} else {
					names[e.Name]++
				}
				st.names = append(st.names, e.Name)
			} else {
				if n := len(st.names); n == 0 || st.names[n-1] != e.Name {
					t.Fatalf("request %d: %q ends, open %v", id, e.Name, st.names)
				}
				st.names = st.names[:len(st.names)-1]
			}
		default:
			t.Fatalf("unexpected event %+v", e)
		}
	}
	for _, m := range []string{"process_name/instance_0 (" + itoa(d.TotalKVBlocks) + " KV blocks of 16 tokens)", "thread_name/steps", "thread_name/requests"} {
		if !meta[m] {
			t.Errorf("no metadata %s (have %v)", m, meta)
		}
	}
	if steps == 0 || counters["kv_cache"] < steps || counters["batch"] < steps {
		t.Errorf("%d steps, counters %v: want a kv_cache and a batch counter per step", steps, counters)
	}
	if len(requests) != nreq {
		t.Errorf("%d requests on the timeline, want %d", len(requests), nreq)
	}
	for id, n := range requests {
		if n != 1 || len(stacks[id].names) != 0 {
			t.Errorf("request %d: %d slices, %v left open", id, n, stacks[id].names)
		}
	}
	return prefill, decode, generated, names
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestTimelineNoPreemption: with room for everyone, the step token counts
// add up exactly: prefill = Σ uncached prompt, decode = Σ (output − 1),
// generated = Σ output; and recording changes no result.
func TestTimelineNoPreemption(t *testing.T) {
	d := resolve(t, 4000)
	recs := records(60, 25_000, 300, 80)
	plain, _, _ := simulate(t, d, recs, false)
	results, total, f := simulate(t, d, recs, true)
	if !reflect.DeepEqual(results, plain) {
		t.Fatal("results differ with the timeline on")
	}
	prefill, decode, generated, names := checkTimeline(t, f, d, len(recs))
	var wantPrefill, wantDecode int64
	for _, r := range results {
		wantPrefill += int64(r.InputTokens - r.CachedInputTokens)
		wantDecode += int64(r.OutputTokens - 1)
	}
	if prefill != wantPrefill || decode != wantDecode || generated != total {
		t.Errorf("steps: prefill %d decode %d generated %d, want %d %d %d", prefill, decode, generated, wantPrefill, wantDecode, total)
	}
	if names["prefill"] != len(recs) || names["decode"] != len(recs) || names["preempted"] != 0 {
		t.Errorf("slices %v: want one prefill and one decode per request", names)
	}
}

// TestTimelinePreemption: a KV cache too small for the load shows
// preempted and recompute slices, and still changes no result.
func TestTimelinePreemption(t *testing.T) {
	d := resolve(t, 160)
	recs := records(80, 20_000, 300, 150)
	plain, _, _ := simulate(t, d, recs, false)
	results, total, f := simulate(t, d, recs, true)
	if !reflect.DeepEqual(results, plain) {
		t.Fatal("results differ with the timeline on")
	}
	_, _, generated, names := checkTimeline(t, f, d, len(recs))
	if generated != total {
		t.Errorf("Σ generated_tokens %d, want the run's output tokens %d", generated, total)
	}
	preemptions := 0
	for _, r := range results {
		preemptions += r.NumPreemptions
	}
	if preemptions == 0 || names["preempted"] != preemptions || names["recompute"] != preemptions {
		t.Errorf("%d preemptions, slices %v: want one preempted and one recompute slice per preemption", preemptions, names)
	}
}
