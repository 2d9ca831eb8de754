package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/testkit/clitest"
)

// bins holds the commands built by this test process (test-only state,
// removed by TestMain).
var bins clitest.Binaries

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Remove()
	os.Exit(code)
}

// compareJSON decodes calibrate compare's JSON for value checks.
type compareJSON struct {
	Mode       string `json:"mode"`
	ModeReason string `json:"mode_reason"`
	Metrics    []struct {
		Name     string  `json:"name"`
		A        float64 `json:"a"`
		B        float64 `json:"b"`
		Diff     float64 `json:"rel_diff"`
		CILo     float64 `json:"ci_lo"`
		CIHi     float64 `json:"ci_hi"`
		Floor    float64 `json:"noise_floor"`
		Verdict  string  `json:"verdict"`
		Sentence string  `json:"sentence"`
	} `json:"metrics"`
	Deployments struct {
		Keys []struct {
			Key    string `json:"key"`
			Status string `json:"status"`
		} `json:"keys"`
	} `json:"deployments"`
}

func decodeCompare(t *testing.T, out string) compareJSON {
	t.Helper()
	var c compareJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("compare JSON: %v\n%s", err, out[:min(len(out), 400)])
	}
	return c
}

// writeRun writes a real trace of n requests one every 50 ms with the
// given TTFT (plus a spread that repeats every 7 requests) and 20 tokens
// 5 ms apart; idBase shifts the ids (another schedule).
func writeRun(t *testing.T, dir, name, mode string, n int, idBase, ttftUs int64) string {
	t.Helper()
	header := "trace_version: 3\ntime_unit: us\nmode: " + mode + "\nwarm_up_requests: 0\nserver:\n    model: qwen3-14b\n"
	var b strings.Builder
	b.WriteString("request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason\n")
	for i := range n {
		send := int64(i) * 50_000
		first := send + ttftUs + int64(i%7)*1000
		fmt.Fprintf(&b, "%d,c0,,,,0,,0,true,100,20,100,0,0,0,0,qwen3-14b,0,100,%d,%d,%d,%d,20,ok,,stop\n",
			idBase+int64(i), send, send, first, first+19*5000)
	}
	base := filepath.Join(dir, name)
	if err := os.WriteFile(base+".yaml", []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".csv", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return base + ".csv"
}

func metric(t *testing.T, c compareJSON, name string) (m struct {
	Name     string  `json:"name"`
	A        float64 `json:"a"`
	B        float64 `json:"b"`
	Diff     float64 `json:"rel_diff"`
	CILo     float64 `json:"ci_lo"`
	CIHi     float64 `json:"ci_hi"`
	Floor    float64 `json:"noise_floor"`
	Verdict  string  `json:"verdict"`
	Sentence string  `json:"sentence"`
}) {
	t.Helper()
	for _, m := range c.Metrics {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no metric %s", name)
	return m
}

// TestCompareGeneratedRuns: a B slower by 10 ms of TTFT is found worse
// with an interval above zero (paired: same schedule; independent: other
// ids), a gate on it exits 3 after writing the output, and the same bytes
// come out twice.
func TestCompareGeneratedRuns(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "a", "real", 200, 0, 40_000)
	b := writeRun(t, dir, "b", "real", 200, 0, 50_000)
	other := writeRun(t, dir, "other", "real", 200, 1000, 50_000)
	for _, tc := range []struct{ b, mode string }{{b, "paired"}, {other, "independent"}} {
		out, errs, code := runCmd(t, "", "compare", a, tc.b, "--format", "json", "--quiet")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		c := decodeCompare(t, out)
		m := metric(t, c, "ttft.p50")
		if c.Mode != tc.mode || m.Verdict != "worse" || m.CILo <= 0 || m.Diff < 0.2 || m.Diff > 0.3 {
			t.Errorf("%s: mode %s (%s), ttft.p50 %+v; want %s, worse by about 25%% with CI above zero", tc.b, c.Mode, c.ModeReason, m, tc.mode)
		}
		if e := metric(t, c, "tpot.mean"); e.Verdict != "no_difference" {
			t.Errorf("%s: tpot.mean %+v; the ITL is the same, want no_difference", tc.b, e)
		}
	}
	outFile := filepath.Join(dir, "ab.md")
	_, errs, code := runCmd(t, "", "compare", a, b, "--format", "markdown", "-o", outFile, "--assert", "ttft.p50:regress", "--quiet")
	md := readFile(t, outFile)
	if code != 3 || !strings.Contains(errs, "ttft.p50:regress: B is slower by") || !strings.Contains(md, "| ttft.p50 |") {
		t.Errorf("gate: exit %d, stderr %q, markdown written %v; want 3, the failure in words, the output", code, errs, strings.Contains(md, "| ttft.p50 |"))
	}
	first, _, _ := runCmd(t, "", "compare", a, other, "--seed", "9", "--quiet")
	second, _, _ := runCmd(t, "", "compare", a, other, "--seed", "9", "--quiet")
	if first != second || !strings.Contains(first, "B is slower by") {
		t.Errorf("same inputs and seed gave other bytes, or no verdict:\n%s", first)
	}
	same, _, code := runCmd(t, "", "compare", a, writeRun(t, dir, "a2", "real", 200, 0, 40_000), "--assert", "all:differ", "--quiet")
	if code != 0 || !strings.Contains(same, "no difference this run can detect beyond the noise") {
		t.Errorf("identical runs: exit %d\n%s", code, same)
	}
	odd := writeRun(t, dir, "b<i>", "real", 200, 0, 50_000)
	html, _, code := runCmd(t, "", "compare", a, odd, "--format", "html", "--quiet")
	if code != 0 || strings.Count(html, "<svg") != 3 || !strings.Contains(html, `class="banner fail"`) ||
		strings.Contains(html, "b<i>") || !strings.Contains(html, "b&lt;i&gt;.csv") {
		t.Errorf("html: exit %d, %d charts; want 3, a failing banner and the file name escaped", code, strings.Count(html, "<svg"))
	}
}

// TestGradeOfTwoTracesPointsToCompare: `calibrate A.csv B.csv` still
// grades a simulation, and its refusal of a CSV as SimResults names the
// command that compares two real runs.
func TestGradeOfTwoTracesPointsToCompare(t *testing.T) {
	dir := t.TempDir()
	a, b := writeRun(t, dir, "a", "real", 5, 0, 40_000), writeRun(t, dir, "b", "real", 5, 0, 40_000)
	_, errs, code := runCmd(t, "", a, b, "--quiet")
	if code != 2 || !strings.Contains(errs, b+":1:1:") || !strings.Contains(errs, "to compare two real runs, see calibrate compare --help") {
		t.Errorf("exit %d, stderr %q; want 2 at %s:1:1 naming calibrate compare", code, errs, b)
	}
}

// TestCompareRefusesBadInput: one line, exit 2, before anything is
// compared.
func TestCompareRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "a", "real", 20, 0, 40_000)
	sim := writeRun(t, dir, "sim", "generated", 20, 0, 40_000)
	empty := writeRun(t, dir, "empty", "real", 0, 0, 40_000)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{a, sim}, "mode generated is not a measured run"},
		{[]string{a, empty}, "no request past the warm-up finished ok"},
		{[]string{a, simJSON}, simJSON},
		{[]string{a}, "give two runs"},
		{[]string{a, a}, "is the same trace as"},
		{[]string{a, sim + ",,"}, "an empty trace name"},
		{[]string{a, sim, "--assert", "ttft.p99:worse"}, `--assert column 10: rule "worse"`},
		{[]string{a, sim, "--assert", "ttft.p98:regress"}, `unknown metric "ttft.p98"`},
		{[]string{a, sim, "--assert", "goodput:regress"}, "needs --slo"},
		{[]string{a, sim, "--resamples", "5"}, "--resamples 5"},
		{[]string{a, sim, "--confidence", "1.5"}, "--confidence 1.5"},
		{[]string{a, sim, "--slo", "ttft.p99<5"}, "--slo"},
		{[]string{a, sim, "--format", "yaml"}, "--format"},
	} {
		_, errs, code := runCmd(t, "", append([]string{"compare", "--quiet"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestCompareObservedRuns: observe runs against the in-process fake vLLM,
// one schedule played again: a server 15 ms slower to the first token is
// found slower (paired, interval above zero); the same server played
// twice is no difference beyond the noise at the median.
func TestCompareObservedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds observe and runs it against a fake server")
	}
	observe := bins.Path(t, "observe")
	dir := t.TempDir()
	capture := func(cfg fakevllm.Config, name string, args ...string) string {
		srv, err := fakevllm.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		base := filepath.Join(dir, name)
		cmd := exec.Command(observe, append([]string{"--url", srv.URL(), "--quiet", "--streaming", "--chat", "--self-test-streams", "8", "-o", base}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("observe %s: %v\n%s", name, err, out)
		}
		return base + ".csv"
	}
	fast := fakevllm.Config{TTFT: 10 * time.Millisecond, ITL: 2 * time.Millisecond}
	slow := fakevllm.Config{TTFT: 25 * time.Millisecond, ITL: 2 * time.Millisecond}
	a := capture(fast, "a", "--workload", "chatbot", "--rate", "20", "--num-requests", "120", "--output-tokens-max", "16", "--prompt-tokens-max", "128", "--seed", "7")
	b := capture(slow, "b", "--trace", a)
	a2 := capture(fast, "a2", "--trace", a)

	out, errs, code := runCmd(t, "", "compare", a, b, "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	c := decodeCompare(t, out)
	m := metric(t, c, "ttft.p50")
	// The verdict also weighs the self-test's floor, which a loaded test
	// machine may raise above any difference: the sign and the interval
	// are what the runs themselves show.
	if c.Mode != "paired" || m.Diff <= 0.5 || m.CILo <= 0 || (m.Verdict != "worse" && m.Verdict != "within_noise") {
		t.Errorf("slower server: mode %s (%s), ttft.p50 %+v; want paired, slower, CI above zero", c.Mode, c.ModeReason, m)
	}
	t.Logf("slower server: %s", m.Sentence)

	out, errs, code = runCmd(t, "", "compare", a, a2, "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	c = decodeCompare(t, out)
	for _, name := range []string{"ttft.p50", "e2e.p50"} {
		m := metric(t, c, name)
		if m.Verdict == "worse" || m.Verdict == "better" {
			t.Errorf("same server: %s %+v; want no difference beyond the noise", name, m)
		}
		t.Logf("same server: %s", m.Sentence)
	}
}
