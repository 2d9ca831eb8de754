package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryJudgesSteadyStateAndSLO: every run's summary carries the
// steady-state test, and a runaway queue is called unstable in text and
// JSON; without an SLO neither goodput nor attainment is shown (100% of
// every completed request would say nothing).
func TestSummaryJudgesSteadyStateAndSLO(t *testing.T) {
	summary := func(args ...string) map[string]any {
		t.Helper()
		out, errs, code := runCmd(t, "", append(args, "--quiet")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var s map[string]any
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	light := summary("--workload", "chatbot", "--rate", "5", "--num-requests", "300")
	if light["steady_state"] != true || light["unstable"] != nil {
		t.Errorf("light run: steady_state %v, unstable %v; want steady", light["steady_state"], light["unstable"])
	}
	if light["slo_given"] != false || light["goodput_rps"] != nil || light["slo_attainment"] != nil {
		t.Errorf("no SLO: slo_given %v, goodput_rps %v, slo_attainment %v; want false, null, null",
			light["slo_given"], light["goodput_rps"], light["slo_attainment"])
	}
	saturated := summary("--workload", "chatbot", "--rate", "80", "--num-requests", "1500")
	if saturated["steady_state"] != false || !strings.HasPrefix(saturated["unstable"].(string), "unstable: queue grows by ") {
		t.Errorf("saturated run: steady_state %v, unstable %v; want unstable", saturated["steady_state"], saturated["unstable"])
	}
	if g, _ := saturated["queue_growth"].(float64); g < 0.3 {
		t.Errorf("saturated run: queue_growth %v, want over 0.3", g)
	}
	slo := summary("--workload", "chatbot", "--rate", "80", "--num-requests", "1500", "--slo", "ttft.p99<500ms")
	att, ok := slo["slo_attainment"].(float64)
	if slo["slo_given"] != true || !ok || att <= 0 || att >= 0.5 {
		t.Errorf("saturated run with --slo: slo_given %v, slo_attainment %v; want a share in (0, 0.5)", slo["slo_given"], slo["slo_attainment"])
	}

	out, errs, code := runCmd(t, "", "--workload", "chatbot", "--rate", "80", "--num-requests", "1500", "--format", "text", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"state      unstable: queue grows by ", "no SLO given"} {
		if !strings.Contains(out, want) {
			t.Errorf("text summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "attain ") || strings.Contains(out, "%  goodput") {
		t.Errorf("text summary without an SLO shows an attainment:\n%s", out)
	}
	_, errs, code = runCmd(t, "", "--slo", "ttft.p99<5", "--num-requests", "3")
	if code != 2 || !strings.Contains(errs, "--slo: column 11") {
		t.Errorf("bad --slo: exit %d, stderr %q; want 2 naming the column", code, errs)
	}
}

// TestResultsPath: run --results-path (BLIS's per-request output) writes
// every request's SimResult in request_id order, as replay's does; with -
// they take stdout and the summary goes to stderr.
func TestResultsPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	args := []string{"--workload", "chatbot", "--rate", "20", "--num-requests", "200", "--quiet"}
	out, errs, code := runCmd(t, "", append(args, "--results-path", path)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"completed_requests": 200`) {
		t.Errorf("stdout is not the summary: %.200s", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res []struct {
		RequestID int64   `json:"request_id"`
		TTFTUs    float64 `json:"ttft_us"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("results are not a JSON array: %v", err)
	}
	if len(res) != 200 {
		t.Fatalf("%d results, want 200", len(res))
	}
	for i, r := range res {
		if r.RequestID != int64(i) || r.TTFTUs <= 0 {
			t.Fatalf("result %d: request_id %d, ttft_us %v; want id %d and a TTFT", i, r.RequestID, r.TTFTUs, i)
		}
	}
	out, errs, code = runCmd(t, "", append(args, "--results-path", "-")...)
	if code != 0 || out != string(b) || !strings.Contains(errs, `"completed_requests": 200`) {
		t.Errorf("--results-path -: exit %d, stdout equal to the file %v, summary on stderr %v",
			code, out == string(b), strings.Contains(errs, `"completed_requests": 200`))
	}
	_, errs, code = runCmd(t, "", append(args, "--results-path", "-", "--trace-output", "-")...)
	if code != 2 || !strings.Contains(errs, "both ask for stdout") {
		t.Errorf("two outputs on stdout: exit %d, %q; want 2", code, errs)
	}
}
