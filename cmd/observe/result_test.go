package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/report"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// jsonKeys reads a JSON object's top-level keys in order, with the kind of
// each value (number, string, null, array, object, bool).
func jsonKeys(t *testing.T, data []byte) ([]string, map[string]string, map[string]any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %v %v", tok, err)
	}
	var keys []string
	kinds, values := map[string]string{}, map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		k := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		kind := "null"
		switch v.(type) {
		case float64:
			kind = "number"
		case string:
			kind = "string"
		case bool:
			kind = "bool"
		case []any:
			kind = "array"
		case map[string]any:
			kind = "object"
		}
		keys, kinds[k], values[k] = append(keys, k), kind, v
	}
	return keys, kinds, values
}

// TestResultJSONHasVLLMKeys: --result-json carries every key vllm bench
// serve writes for the same metrics, with the same kind of value and in the
// same order, checked against result files of theirs (testdata), and its
// figures agree with the fake server's timing.
func TestResultJSONHasVLLMKeys(t *testing.T) {
	for _, tc := range []struct {
		theirs string
		args   []string
	}{
		{"vllm_bench_result.json", []string{"--chat", "--rate", "200", "--arrival", "poisson", "--max-concurrency", "8", "--goodput", "ttft:500",
			"--percentile-metrics", "ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue", "--metric-percentiles", "50,90,99"}},
		{"vllm_bench_result_detailed.json", []string{"--rate", "200", "--arrival", "poisson", "--result-detailed", "--label", "nightly", "--metadata", "gpu=H100"}},
	} {
		t.Run(tc.theirs, func(t *testing.T) {
			srv := startFake(t, fakevllm.Config{TTFT: 20 * time.Millisecond, ITL: 2 * time.Millisecond})
			path, capPrefix := filepath.Join(t.TempDir(), "result.json"), filepath.Join(t.TempDir(), "cap")
			args := append(baseArgs(srv, "--streaming", "--no-self-test", "--num-requests", "30", "--output-tokens", "8",
				"--result-json", path, "--trace-output", capPrefix), tc.args...)
			if o := observeIn(testCtx(t), args...); o.Err != nil {
				t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
			}
			ours, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := os.ReadFile(filepath.Join("testdata", tc.theirs))
			if err != nil {
				t.Fatal(err)
			}
			ourKeys, ourKinds, v := jsonKeys(t, ours)
			theirKeys, theirKinds, _ := jsonKeys(t, theirs)
			at := 0
			for _, k := range theirKeys {
				i := slices.Index(ourKeys, k)
				switch {
				case i < 0:
					t.Errorf("key %q is missing", k)
				case ourKinds[k] != theirKinds[k]:
					t.Errorf("key %q: %s, vllm writes a %s", k, ourKinds[k], theirKinds[k])
				case i < at:
					t.Errorf("key %q comes before %q; vllm writes it after", k, ourKeys[at])
				default:
					at = i
				}
			}
			if v["completed"] != 30.0 || v["failed"] != 0.0 || v["num_prompts"] != 30.0 {
				t.Errorf("completed %v failed %v num_prompts %v, want 30 0 30", v["completed"], v["failed"], v["num_prompts"])
			}
			// The figures are the trace's: TTFT = first token − send, TPOT =
			// (last chunk − first token)/(output − 1), NumPy's percentiles.
			cap := loadFiles(t, capPrefix)
			var ttft, tpot []float64
			for _, r := range cap.Records {
				ttft = append(ttft, float64(r.FirstTokenTimeUs-r.SendTimeUs)/1000)
				tpot = append(tpot, float64(r.LastChunkTimeUs-r.FirstTokenTimeUs)/1000/float64(r.OutputTokens-1))
			}
			for _, c := range []struct {
				key  string
				want float64
			}{{"median_ttft_ms", report.Percentile(ttft, 50)}, {"p99_ttft_ms", report.Percentile(ttft, 99)},
				{"mean_tpot_ms", report.Mean(tpot)}, {"std_ttft_ms", report.StdDev(ttft)}} {
				if got := v[c.key].(float64); math.Abs(got-c.want) > 1e-9 {
					t.Errorf("%s = %v, the trace gives %v", c.key, got, c.want)
				}
			}
			if v["total_output_tokens"] != 240.0 || v["max_concurrent_requests"].(float64) < 1 {
				t.Errorf("total_output_tokens %v (want 240), max_concurrent_requests %v", v["total_output_tokens"], v["max_concurrent_requests"])
			}
		})
	}
}

// TestResultJSONDetailedReadsBack: the detailed result file is what the
// vllm-bench importer reads, so a run of observe can be replayed from it
// as from vllm bench serve's own: the same requests, lengths and TTFTs.
func TestResultJSONDetailedReadsBack(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 10 * time.Millisecond, ITL: time.Millisecond})
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if o := observeIn(testCtx(t), baseArgs(srv, "--streaming", "--no-self-test", "--rate", "100", "--num-requests", "12",
		"--result-json", path, "--result-detailed", "--trace-output", filepath.Join(dir, "cap"))...); o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := importer.NewVLLM(path, f, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cap := loadFiles(t, filepath.Join(dir, "cap"))
	n := 0
	for {
		rec, err := imp.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		row := cap.Records[slices.IndexFunc(cap.Records, func(r tracev2.Record) bool { return r.RequestID == rec.RequestID })]
		if rec.ServerInputTokens+rec.InputTokens == 0 || rec.OutputTokens != row.OutputTokens || rec.Status != "ok" {
			t.Errorf("request %d read back as %+v; the trace has %d output tokens", rec.RequestID, rec, row.OutputTokens)
		}
		if got, want := rec.FirstChunkTimeUs-rec.SendTimeUs, row.FirstTokenTimeUs-row.SendTimeUs; got < want-1 || got > want+1 {
			t.Errorf("request %d: TTFT %d µs read back, the trace has %d µs", rec.RequestID, got, want)
		}
		n++
	}
	if n != 12 {
		t.Errorf("%d requests read back, want 12", n)
	}
}

// TestResultFlagErrors: the result flags are checked before any request.
func TestResultFlagErrors(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--result-json", "r.json", "--percentile-metrics", "ttft,goodput"}, `unknown metric "goodput"`},
		{[]string{"--result-json", "r.json", "--metric-percentiles", "50,101"}, `"101" is not a percentile in (0, 100]`},
		{[]string{"--result-detailed"}, "--result-detailed, --label and --metadata shape --result-json: give it"},
		{[]string{"--result-json", "r.json", "--metadata", "gpu"}, `--metadata "gpu": want KEY=VALUE`},
	} {
		o := observeIn(testCtx(t), baseArgs(srv, append([]string{"--no-self-test"}, tc.args...)...)...)
		if o.Code != 2 || !strings.Contains(o.Stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, o.Code, o.Stderr, tc.msg)
		}
	}
}

// TestResultRampEvents: with a rate ramp the result says so as vllm bench
// serve does (an infinite request_rate, the ramp's keys, and an event each
// time the rate passes a whole number of requests/s).
func TestResultRampEvents(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	path := filepath.Join(t.TempDir(), "result.json")
	if o := observeIn(testCtx(t), baseArgs(srv, "--no-self-test", "--num-requests", "40", "--ramp-up-strategy", "linear",
		"--ramp-up-start-rps", "20", "--ramp-up-end-rps", "24", "--result-json", path, "-o", filepath.Join(t.TempDir(), "cap"))...); o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, v := jsonKeys(t, data)
	var rps []float64
	for _, e := range v["rps_change_events"].([]any) {
		rps = append(rps, e.(map[string]any)["rps"].(float64))
	}
	if v["request_rate"] != "inf" || v["ramp_up_strategy"] != "linear" || v["ramp_up_end_rps"] != 24.0 ||
		!slices.Equal(rps, []float64{20, 21, 22, 23, 24}) {
		t.Errorf("request_rate %v, ramp %v → %v, events at %v rps; want inf, linear to 24, 20..24", v["request_rate"],
			v["ramp_up_strategy"], v["ramp_up_end_rps"], rps)
	}
}
