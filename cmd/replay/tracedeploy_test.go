package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/testkit/blistest"
	"servesim/internal/tracev2"
)

// TestOverrideIsWarnedAndTheConfigVerdictFails: a trace recorded on one
// deployment and replayed on another by a flag gives a one-line warning
// naming both values; calibrate's config verdict names the mismatch and the
// gate config.match==true exits 3. The same replay without the flag passes.
func TestOverrideIsWarnedAndTheConfigVerdictFails(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "t")
	execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "60", "--max-num-seqs", "64", "--trace-output", prefix)
	calibrate := func(metrics, sim string) (string, int) {
		cmd := exec.Command(bins.Path(t, "calibrate"), prefix+".csv", sim, "--sim-metrics", metrics,
			"--assert", "config.match==true", "--quiet")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return out.String() + errb.String(), cmd.ProcessState.ExitCode()
	}

	r := mustReplay(t, nil, prefix+".csv", "--max-num-seqs", "8", "--results-path", filepath.Join(dir, "sim8.json"),
		"--metrics-out", filepath.Join(dir, "m8.json"))
	warn := "the trace says max_num_seqs 64, --max-num-seqs says 8; simulating 8"
	if strings.Count(r.stderr, "WARN") != 1 || !strings.Contains(r.stderr, warn) {
		t.Errorf("replay --max-num-seqs 8: want one warning %q, stderr:\n%s", warn, r.stderr)
	}
	out, code := calibrate(filepath.Join(dir, "m8.json"), filepath.Join(dir, "sim8.json"))
	if code != 3 || !strings.Contains(out, "config: MISMATCH max_num_seqs 64 (trace) vs 8 (sim)") ||
		!strings.Contains(out, "config match false is not true (max_num_seqs 64 (trace) vs 8 (sim))") {
		t.Errorf("calibrate of the mismatched replay: exit %d, want 3 and the mismatch named:\n%s", code, out)
	}

	r = mustReplay(t, nil, prefix+".csv", "--results-path", filepath.Join(dir, "sim.json"), "--metrics-out", filepath.Join(dir, "m.json"))
	if strings.Contains(r.stderr, "WARN") {
		t.Errorf("replay with no flag warns:\n%s", r.stderr)
	}
	if out, code := calibrate(filepath.Join(dir, "m.json"), filepath.Join(dir, "sim.json")); code != 0 || !strings.Contains(out, "config: match (") {
		t.Errorf("calibrate of the faithful replay: exit %d, want 0 and a match:\n%s", code, out)
	}

	// --ignore-trace-deployment: the flags alone, silently.
	r = mustReplay(t, nil, prefix+".csv", "--max-num-seqs", "8", "--ignore-trace-deployment", "--format", "text")
	if strings.Contains(r.stderr, "WARN") {
		t.Errorf("--ignore-trace-deployment warns:\n%s", r.stderr)
	}
}

// TestOldTracesReplayAsBefore: a trace whose header states no deployment
// and no client (as older releases and BLIS write it) replays on the defaults, silently,
// exactly as with --ignore-trace-deployment; a BLIS header naming a model
// the simulator does not know fails (exit 2) unless --model names one.
func TestOldTracesReplayAsBefore(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "old")
	execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "80", "--trace-output", prefix,
		"--requests-out", filepath.Join(dir, "run.jsonl"))
	tr, err := tracev2.Load(tracev2.Input{Path: prefix + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := tr.Header
	h.Server, h.XExt = nil, nil // as run wrote it before
	var buf bytes.Buffer
	if err := tracev2.EncodeHeader(&buf, h); err != nil {
		t.Fatal(err)
	}
	writeFile(t, prefix+".yaml", buf.String())

	r := mustReplay(t, nil, prefix+".csv", "--results-path", filepath.Join(dir, "now.json"), "--metrics-out", filepath.Join(dir, "now-m.json"))
	if strings.Contains(r.stderr, "WARN") {
		t.Errorf("an old trace warns:\n%s", r.stderr)
	}
	mustReplay(t, nil, prefix+".csv", "--ignore-trace-deployment", "--results-path", filepath.Join(dir, "flags.json"))
	want, _ := readCompleted(t, filepath.Join(dir, "run.jsonl"))
	compareResults(t, readSimResults(t, filepath.Join(dir, "now.json")), want)
	compareResults(t, readSimResults(t, filepath.Join(dir, "flags.json")), want)
	var m struct {
		Deployment map[string]any `json:"deployment"`
		Client     map[string]any `json:"client"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "now-m.json"))
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Deployment["model"] != "qwen3-14b" || m.Deployment["max_num_seqs"] != 1024.0 || m.Client["session_mode"] != "fixed" {
		t.Errorf("the defaults were not replayed: deployment %v client %v", m.Deployment, m.Client)
	}

	// A BLIS trace (server keys only) naming an unknown model fails before
	// anything is written, unless --model names one.
	blis := "../../internal/tracev2/testdata/blis/real.csv"
	r = replayIn(nil, blis, "--quiet", "--results-path", filepath.Join(dir, "blis.json"))
	wantErr := `the trace's model: unknown model "acme/chat-8b"; known models near it: qwen3-8b, llama-3-8b, `
	if exitcode.Of(r.err) != exitcode.Usage || r.err == nil || !strings.Contains(r.err.Error(), wantErr) || strings.Contains(r.err.Error(), "\n") {
		t.Errorf("unknown model: %v (exit %d), want one line, exit 2, containing %q", r.err, exitcode.Of(r.err), wantErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "blis.json")); !os.IsNotExist(err) {
		t.Errorf("a failed replay wrote its results: %v", err)
	}
	r = mustReplay(t, nil, blis, "--model", "qwen3-14b", "--results-path", filepath.Join(dir, "blis.json"))
	if strings.Contains(r.stderr, "WARN") {
		t.Errorf("--model over an unknown trace model warns:\n%s", r.stderr)
	}
	mustReplay(t, nil, blis, "--ignore-trace-deployment", "--results-path", filepath.Join(dir, "blis-flags.json"))
	compareResults(t, readSimResults(t, filepath.Join(dir, "blis.json")), readSimResults(t, filepath.Join(dir, "blis-flags.json")))
}

// TestBLISCompatibleHeaderKeepsTheDeployment: run --blis-compatible-header
// writes a header BLIS's strict loader accepts and the rest beside it; replay
// with no flag still reproduces the run (a cluster here), since our reader
// merges the sidecar back.
func TestBLISCompatibleHeaderKeepsTheDeployment(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "b")
	execRun(t, "--workload", "chatbot", "--rate", "40", "--num-requests", "120", "--num-instances", "2",
		"--routing-policy", "least-loaded", "--tp", "2", "--blis-compatible-header", "--trace-output", prefix,
		"--requests-out", filepath.Join(dir, "run.jsonl"))
	hb, err := os.ReadFile(prefix + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := blistest.StrictHeader(hb); err != nil {
		t.Errorf("BLIS's strict loader rejects the header: %v\n%s", err, hb)
	}
	if !strings.Contains(string(hb), "tensor_parallel: 2") {
		t.Errorf("the BLIS header lacks server.tensor_parallel:\n%s", hb)
	}
	if side, err := os.ReadFile(prefix + ".ext.yaml"); err != nil || !strings.Contains(string(side), "num_instances: 2") {
		t.Fatalf("sidecar: %v\n%s", err, side)
	}
	r := mustReplay(t, nil, prefix+".csv", "--results-path", filepath.Join(dir, "sim.json"))
	if strings.Contains(r.stderr, "WARN") {
		t.Errorf("replay warns:\n%s", r.stderr)
	}
	want, _ := readCompleted(t, filepath.Join(dir, "run.jsonl"))
	compareResults(t, readSimResults(t, filepath.Join(dir, "sim.json")), want)
}

// TestDerivedKeysFollowAnOverride: the KV blocks run derived from an H100
// are derived again for --gpu L40S (a warning names the GPU, none the
// blocks); an explicit --total-kv-blocks is kept and warned about.
func TestDerivedKeysFollowAnOverride(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "t")
	execRun(t, "--workload", "chatbot", "--rate", "5", "--num-requests", "20", "--trace-output", prefix)
	deployed := func(args ...string) (map[string]any, string) {
		m := filepath.Join(dir, "m.json")
		r := mustReplay(t, nil, append([]string{prefix + ".csv", "--format", "text", "--metrics-out", m}, args...)...)
		var doc struct {
			Deployment map[string]any `json:"deployment"`
		}
		data, err := os.ReadFile(m)
		if err == nil {
			err = json.Unmarshal(data, &doc)
		}
		if err != nil {
			t.Fatal(err)
		}
		return doc.Deployment, r.stderr
	}
	h100, _ := deployed()
	l40s, stderr := deployed("--gpu", "L40S")
	if l40s["gpu"] != "L40S" || l40s["total_kv_blocks"] == h100["total_kv_blocks"] {
		t.Errorf("--gpu L40S kept the H100's %v KV blocks (got %v)", h100["total_kv_blocks"], l40s["total_kv_blocks"])
	}
	if strings.Count(stderr, "WARN") != 1 || !strings.Contains(stderr, "the trace says gpu H100, --gpu says L40S") {
		t.Errorf("want one warning, for the GPU:\n%s", stderr)
	}
	fixed, stderr := deployed("--gpu", "L40S", "--total-kv-blocks", "1000")
	if fixed["total_kv_blocks"] != 1000.0 || !strings.Contains(stderr, "the trace says total_kv_blocks") {
		t.Errorf("an explicit --total-kv-blocks: %v\n%s", fixed["total_kv_blocks"], stderr)
	}
}

// TestClientFromTheHeader: the cap run recorded is the replay's default
// (no search needed, no word said); a flag that contradicts it is warned
// about; the replayed trace records the client simulated.
func TestClientFromTheHeader(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "c")
	execRun(t, "--workload", "chatbot", "--rate", "60", "--num-requests", "100", "--client-max-concurrency", "16", "--trace-output", prefix)
	r := mustReplay(t, nil, prefix+".csv", "--format", "text", "--trace-output", filepath.Join(dir, "r"))
	if strings.Contains(r.stderr, "WARN") {
		t.Errorf("a replay of the recorded cap warns:\n%s", r.stderr)
	}
	tr, err := tracev2.Load(tracev2.Input{Path: filepath.Join(dir, "r.csv")}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Header.XExt.Client; c == nil || c.MaxConcurrency != 16 || c.SessionMode != "fixed" || c.Arrival != "constant" {
		t.Errorf("the replayed trace's client: %+v", c)
	}
	r = mustReplay(t, nil, prefix+".csv", "--format", "text", "--client-max-concurrency", "8")
	if !strings.Contains(r.stderr, "the trace's client says max_concurrency 16, the flags say 8; simulating 8") {
		t.Errorf("no warning for the contradicting cap:\n%s", r.stderr)
	}
}
