package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCmd runs the command in-process and returns stdout, stderr and the exit code.
func runCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	r := clitest.Run(context.Background(), "run", run, strings.NewReader(stdin), args...)
	return r.Stdout, r.Stderr, r.Code
}

func TestPresetGoldens(t *testing.T) {
	for _, preset := range []string{"distribution", "chatbot", "summarization", "contentgen", "multidoc"} {
		for _, format := range []string{"json", "text"} {
			t.Run(preset+"/"+format, func(t *testing.T) {
				args := []string{"--workload", preset, "--rate", "8", "--num-requests", "150", "--format", format}
				out, errs, code := runCmd(t, "", args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				clitest.Golden(t, *update, preset+"."+format, out)
				// Determinism: a second run prints the same bytes.
				again, _, _ := runCmd(t, "", args...)
				if again != out {
					t.Error("two runs with the same seed printed different output")
				}
			})
		}
	}
}

func TestSummaryValues(t *testing.T) {
	out, errs, code := runCmd(t, "", "--workload", "chatbot", "--rate", "5", "--num-requests", "300")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	num := func(k string) float64 {
		v, ok := s[k].(float64)
		if !ok {
			t.Fatalf("key %s missing or not a number in %s", k, out)
		}
		return v
	}
	// Conservation (INV-1) and a light load: everything completes.
	if num("injected_requests") != 300 || num("completed_requests") != 300 {
		t.Errorf("injected %v completed %v, want 300 and 300", num("injected_requests"), num("completed_requests"))
	}
	// At 5 req/s on an H100 nothing queues: TTFT is a few tens of ms and
	// below E2E; the run lasts about 300/5 = 60 s plus the last request.
	if ttft, e2e := num("ttft_mean_ms"), num("e2e_mean_ms"); !(ttft > 15 && ttft < 200 && e2e > ttft) {
		t.Errorf("ttft_mean_ms %v e2e_mean_ms %v out of the plausible range", ttft, e2e)
	}
	if d := num("vllm_estimated_duration_s"); d < 59 || d > 80 {
		t.Errorf("duration %v s, want about 60 s", d)
	}
}

func TestTraceAndRequestsOut(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "gen")
	reqs := filepath.Join(dir, "reqs.jsonl")
	_, errs, code := runCmd(t, "", "--workload", "chatbot", "--rate", "10", "-n", "50", "--trace-output", prefix, "--requests-out", reqs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	tr, err := tracev2.Load(tracev2.Input{Path: prefix + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.Mode != "generated" || tr.Header.WorkloadSpec != "preset:chatbot" || len(tr.Records) != 50 {
		t.Fatalf("header %+v, %d records", tr.Header, len(tr.Records))
	}
	for _, r := range tr.Records {
		if r.Status != "ok" || r.FirstChunkTimeUs <= r.ArrivalTimeUs || r.LastChunkTimeUs < r.FirstChunkTimeUs || r.Instance != "instance_0" {
			t.Fatalf("record %+v is not a completed simulated request", r)
		}
	}
	data, err := os.ReadFile(reqs)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d request lines, want 50", len(lines))
	}
	var first struct {
		Status string  `json:"status"`
		TTFT   float64 `json:"ttft_us"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Status != "ok" || first.TTFT <= 0 {
		t.Errorf("first line %s: %+v %v", lines[0], first, err)
	}
}

func TestTraceToStdoutIsSingleStream(t *testing.T) {
	out, errs, code := runCmd(t, "", "--workload", "chatbot", "--rate", "10", "-n", "5", "--trace-output", "-", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "# trace_version: 3\n") || strings.Count(out, "\n") < 6 {
		t.Errorf("stdout is not a single-stream trace:\n%s", out)
	}
	if !strings.Contains(errs, `"completed_requests": 5`) {
		t.Errorf("the summary should move to stderr, got:\n%s", errs)
	}
}

func TestBadInput(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	os.WriteFile(spec, []byte("version: \"2\"\nnum_requests: 5\nclientz: []\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "chatbott", "--rate", "1"}, "chatbott"},
		{[]string{"--rate", "-2"}, "--rate"},
		{[]string{"--workload", "chatbot"}, "--rate"},
		{[]string{"--workload-spec", spec}, "clientz"},
		{[]string{"--workload-spec", spec, "--rate", "3"}, "--rate"},
		{[]string{"--model", "gpt-9"}, "gpt-9"},
		{[]string{"--max-num-seqs", "-1"}, "max-num-seqs"},
		{[]string{"--num-instances", "100000000"}, "num-instances 100000000 exceeds 1048576"},
		{[]string{"--num-instances", "500000"}, "500000 instances of 15909 KV blocks need about"},
		{[]string{"--total-kv-blocks", "100000000000"}, "total-kv-blocks 100000000000 exceeds 1073741823"},
		{[]string{"--format", "yaml"}, "--format"},
		{[]string{"--frobnicate"}, "frobnicate"},
		{[]string{"extra"}, "too many arguments"},
	}
	for _, tt := range tests {
		out, errs, code := runCmd(t, "", tt.args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", tt.args, code, errs)
			continue
		}
		if out != "" {
			t.Errorf("%q: wrote to stdout on error: %q", tt.args, out)
		}
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, tt.want) {
			t.Errorf("%q: error %q does not mention %q", tt.args, last, tt.want)
		}
	}
}

func TestHelpShowsExample(t *testing.T) {
	out, _, code := runCmd(t, "", "--help")
	if code != 0 || !strings.Contains(out, "replay chat.csv") || !strings.Contains(out, "--workload") {
		t.Errorf("help (exit %d) lacks the pipeline example or flags:\n%s", code, out)
	}
}

// TestVLLMSwitches: vLLM's prefix-caching and chunked-prefill switches
// reach the simulator, under vLLM's and BLIS's names.
func TestVLLMSwitches(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--rate", "4", "-n", "100", "--prefix-tokens", "1024", "--prompt-tokens", "256", "--output-tokens", "16"}
	summary := func(args ...string) map[string]any {
		t.Helper()
		path := filepath.Join(dir, "m.json")
		out, errs, code := runCmd(t, "", append(append(base, "--metrics-path", path), args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errs)
		}
		file, err := os.ReadFile(path)
		if err != nil || string(file) != out {
			t.Fatalf("--metrics-path file differs from stdout (%v)", err)
		}
		var s map[string]any
		if err := json.Unmarshal(file, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	on, off := summary(), summary("--no-enable-prefix-caching")
	if h := on["cache_hit_rate"].(float64); h < 0.5 {
		t.Errorf("prefix caching on: hit rate %.3f, want most of the 1024 shared tokens hit", h)
	}
	if h := off["cache_hit_rate"].(float64); h != 0 {
		t.Errorf("prefix caching off: hit rate %v, want 0", h)
	}
	if a, b := on["ttft_mean_ms"].(float64), off["ttft_mean_ms"].(float64); !(b > a) {
		t.Errorf("TTFT mean %.2f ms with prefix caching, %.2f ms without: recomputing the prefix should cost", a, b)
	}
	whole := summary("--no-enable-chunked-prefill", "--tensor-parallel-size", "1", "--max-num-running-reqs", "64")
	if whole["completed_requests"].(float64) != 100 {
		t.Errorf("without chunked prefill: %v of 100 completed", whole["completed_requests"])
	}
	_, errs, code := runCmd(t, "", append(base, "--no-enable-chunked-prefill", "--max-num-scheduled-tokens", "4096")...)
	if code != 2 || !strings.Contains(errs, "max-num-batched-tokens 4096 is smaller than max-model-len 40960") {
		t.Errorf("an explicit budget below max_model_len without chunked prefill: exit %d, %s; want vLLM's refusal", code, errs)
	}
}

// TestHelpStatesOneDefault: no flag's help states two defaults.
func TestHelpStatesOneDefault(t *testing.T) { clitest.CheckHelp(t, command()) }

// TestCompletionScripts: the bash, zsh and fish scripts name every flag.
func TestCompletionScripts(t *testing.T) { clitest.CheckCompletion(t, command()) }

// TestTextNamesDeployment: the text table says what was simulated, and with
// P/D the instance fairness leaves the prefill pool out (it hands its
// requests on, so its few tokens are no share of the decoding: counting it
// read 0.67 for two perfectly balanced decoders).
func TestTextNamesDeployment(t *testing.T) {
	out, errs, code := runCmd(t, "", "--workload", "chatbot", "--rate", "20", "-n", "100", "--model", "llama-3.1-8b-instruct",
		"--gpu", "A100-80", "--tp", "2", "--format", "text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if first := strings.SplitN(out, "\n", 2)[0]; !strings.HasPrefix(first, "deployment llama-3.1-8b-instruct on 2 × A100-80 (TP 2), ") {
		t.Errorf("first line %q does not name the model and GPUs", first)
	}
	pd := []string{"--workload", "chatbot", "--rate", "40", "-n", "300", "--prefill-instances", "1", "--decode-instances", "2", "--pd-decider", "always"}
	js, errs, code := runCmd(t, "", pd...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s struct {
		Jain        float64 `json:"instance_jain_index"`
		PerInstance []struct {
			Pool   string `json:"pool"`
			Tokens int64  `json:"output_tokens"`
		} `json:"per_instance"`
	}
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.PerInstance) != 3 || s.PerInstance[0].Pool != "prefill" {
		t.Fatalf("per_instance = %+v, want a prefill and two decode instances", s.PerInstance)
	}
	a, b := float64(s.PerInstance[1].Tokens), float64(s.PerInstance[2].Tokens)
	if want := (a + b) * (a + b) / (2 * (a*a + b*b)); s.Jain < want-1e-9 || s.Jain > want+1e-9 || s.Jain < 0.95 {
		t.Errorf("instance_jain_index %.4f, want Jain over the two decoders %.4f", s.Jain, want)
	}
	text, _, _ := runCmd(t, "", append(pd, "--format", "text")...)
	if !strings.Contains(text, "instance fairness (Jain over the decode pool's output tokens)") {
		t.Errorf("the P/D text table does not say the fairness is over the decode pool:\n%s", text)
	}
}

// TestPastedServeFlags: the flags of a pasted `vllm serve` command run:
// those that change performance are simulated, the others get a note.
func TestPastedServeFlags(t *testing.T) {
	args := []string{"--workload", "chatbot", "--rate", "4", "--num-requests", "20", "--format", "text",
		"--trust-remote-code", "--served-model-name", "chat", "--enforce-eager", "--kv-cache-dtype", "fp8", "--swap-space", "4"}
	out, errs, code := runCmd(t, "", args...)
	if code != 0 || !strings.Contains(out, "completed 20") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, want := range []string{"--trust-remote-code: a vLLM flag that does not change", "--served-model-name: a vLLM flag",
		"--swap-space: a vLLM flag the simulator does not model"} {
		if !strings.Contains(errs, want) {
			t.Errorf("no note %q in %q", want, errs)
		}
	}
	if strings.Contains(errs, "enforce-eager") || strings.Contains(errs, "kv-cache-dtype") {
		t.Errorf("a modelled flag got a note: %q", errs)
	}
	if _, errs, code := runCmd(t, "", "--kv-cache-dtype", "int3"); code != 2 || !strings.Contains(errs, `kv-cache-dtype "int3" is not one of`) {
		t.Errorf("a bad --kv-cache-dtype: exit %d, %q", code, errs)
	}
}

// TestCompletionOffersEnumeratedValues: the completion offers the values of
// the flags that take one of a known set, from the flags' definitions.
func TestCompletionOffersEnumeratedValues(t *testing.T) {
	out, errs, code := runCmd(t, "", "--completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		`--latency-model) COMPREPLY=($(compgen -W "physics trained-physics roofline blackbox" -- "$cur"))`,
		`--routing-policy) COMPREPLY=($(compgen -W "round-robin random least-loaded least-outstanding always-busiest weighted" -- "$cur"))`,
		`--format) COMPREPLY=($(compgen -W "json text" -- "$cur"))`,
		`--format) COMPREPLY=($(compgen -W "text csv json" -- "$cur"))`, // run sweep's
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the bash script lacks %s", want)
		}
	}
}

// TestHelpSaysWorkloadsAndArrival: --list-workloads prints every preset's
// lengths, and --help says why the default arrival is constant and how to
// load like vllm bench serve.
func TestHelpSaysWorkloadsAndArrival(t *testing.T) {
	out, errs, code := runCmd(t, "", "--list-workloads")
	if code != 0 || !strings.Contains(out, "chatbot        0              256 / 100 / 2 / 800               256 / 100 / 1 / 1024") {
		t.Errorf("--list-workloads: exit %d, %s\n%s", code, errs, out)
	}
	help, _, _ := runCmd(t, "", "--help")
	for _, want := range []string{"constant is BLIS's for the same flags", "give --arrival poisson to match it", "--list-workloads shows their lengths"} {
		if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}
