package main

import (
	"bufio"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"servesim/internal/deploy"
	"servesim/internal/fit"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// Known blackbox coefficients of the synthetic run the fit tests measure.
func fitTruth() (alpha, beta []float64) {
	return []float64{10000, 0, 0}, []float64{6000, 20, 300}
}

const fitRTTUs = 500 // the header's measured RTT: on every real TTFT and E2E

// The synthetic workload: Poisson arrivals, uniform prompt lengths.
const (
	fitRate     = 2.0 // requests per second
	fitPromptLo = 100
	fitPromptHi = 4000
)

// fitDeployment is the deployment of the synthetic run: the defaults with
// 64 sequences and the given blackbox coefficients.
func fitDeployment(t *testing.T, alpha, beta []float64) deploy.Config {
	t.Helper()
	d := deploy.Default()
	d.LatencyModel, d.AlphaCoeffs, d.BetaCoeffs, d.MaxNumSeqs = "blackbox", alpha, beta, 64
	return d
}

// simulate replays recs on d the way `replay` does and returns the
// SimResults by request id.
func simulate(t *testing.T, d deploy.Config, recs []tracev2.Record) map[int64]tracev2.SimResult {
	t.Helper()
	dep, err := deploy.Resolve(d)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := replay.NewTrace(replay.RecordRows(recs), replay.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]tracev2.SimResult{}
	_, err = replay.Simulate(context.Background(), replay.Config{Deploy: dep, Seed: 7}, tr, tr.FollowUps(),
		func(_ *tracev2.Record, res *tracev2.SimResult) error {
			if res != nil {
				out[res.RequestID] = *res
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeFitTrace simulates 600 requests (Poisson at 4/s, prompts 100-1500,
// outputs 10-200) with the true coefficients and writes them as a measured
// trace: send = arrival, chunk times = the simulated TTFT and E2E, each off
// by up to ±1 %, plus the header's RTT. The header's workload seed (7) is
// the replay seed.
func writeFitTrace(t *testing.T, dir string) (string, []tracev2.Record) {
	return writeFitTraceAt(t, filepath.Join(dir, "cap.trace"), fitRate, 11, 600)
}

// writeFitTraceAt is writeFitTrace with n requests at rate per second from
// seed, into path.
func writeFitTraceAt(t *testing.T, path string, rate float64, seed uint64, n int) (string, []tracev2.Record) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	recs := make([]tracev2.Record, n)
	at := int64(1000)
	for i := range recs {
		at += int64(rng.ExpFloat64() / rate * 1e6)
		recs[i] = tracev2.Record{RequestID: int64(i), ClientID: "c0", SLOClass: "standard", Streaming: true,
			InputTokens: fitPromptLo + rng.IntN(fitPromptHi-fitPromptLo+1), OutputTokens: 10 + rng.IntN(191), ArrivalTimeUs: at, SendTimeUs: at,
			Status: "ok", FinishReason: "stop"}
	}
	a, b := fitTruth()
	sims := simulate(t, fitDeployment(t, a, b), recs)
	noise := func() float64 { return 1 + 0.01*(2*rng.Float64()-1) }
	for i := range recs {
		r := &recs[i]
		s, ok := sims[r.RequestID]
		if !ok {
			t.Fatalf("request %d did not complete", r.RequestID)
		}
		r.FirstChunkTimeUs = r.SendTimeUs + fitRTTUs + int64(math.Round(s.TTFTUs*noise()))
		r.LastChunkTimeUs = r.FirstChunkTimeUs + int64(math.Round((s.E2EUs-s.TTFTUs)*noise()))
		r.NumChunks = r.OutputTokens
	}
	h := fixtureHeader()
	h.ObservedKVMetrics = nil
	h.GoodputSLOTargets = nil
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if err := tracev2.WriteStream(bw, h, tracev2.Columns{}, recs); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, recs
}

// TestFitEndToEnd: calibrate fit on the synthetic run recovers the
// coefficients within 5 % from a start 3× off, writes a deployment YAML that
// deploy.Load reads back exactly, and the replay of that deployment grades
// excellent on TTFT and E2E (calibrate --fail-under excellent passes).
func TestFitEndToEnd(t *testing.T) {
	dir := t.TempDir()
	tracePath, recs := writeFitTrace(t, dir)
	out := filepath.Join(dir, "coeffs.yaml")
	stdout, stderr, code := runCmd(t, "", "fit", tracePath, "--latency-model", "blackbox",
		"--alpha-coeffs", "0,0,0", "--beta-coeffs", "18000,60,100", "--max-num-seqs", "64",
		"--holdout", "0.2", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing with -o FILE", stdout)
	}
	t.Logf("stderr:\n%s", stderr)
	for _, want := range []string{"calibrate fit: blackbox on qwen3-14b/H100 TP 1: ", "held out", "alpha_coeffs: [", "ttft ", "e2e "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}

	// The file is a deployment: Load gives back the fitted configuration,
	// and rendering it again gives the same keys and values.
	got, err := deploy.Load(out, deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	data := readFile(t, out)
	if !strings.HasPrefix(data, "# Fitted by calibrate fit on "+tracePath) {
		t.Errorf("the YAML does not start with its provenance:\n%s", data)
	}
	want := fitDeployment(t, got.AlphaCoeffs, got.BetaCoeffs)
	// σ is the fit's spread: √(π/2) × the larger of its held-out E2E and TTFT MAPE, on a fit
	// this close a few percent at most.
	if !(got.StepTimeSigma > 0 && got.StepTimeSigma < 0.05) {
		t.Errorf("step_time_sigma %v, want the fit's small spread", got.StepTimeSigma)
	}
	want.StepTimeSigma = got.StepTimeSigma
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loaded %+v\nwant  %+v", got, want)
	}
	again, err := fit.FittedYAML(got, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if body := stripComments(data); body != string(again) {
		t.Errorf("the YAML does not round-trip:\n%s\nrendered again:\n%s", body, again)
	}
	var keys map[string]any
	if err := yaml.Unmarshal([]byte(data), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "gpu", "tensor_parallel", "latency_model", "alpha_coeffs", "beta_coeffs", "max_num_seqs", "step_time_sigma"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("the YAML lacks %s", k)
		}
	}
	if len(keys) != 8 {
		t.Errorf("the YAML has keys %v; want only those that differ from the defaults and the model's identity", keys)
	}

	ta, tb := fitTruth()
	for i, w := range tb {
		if g := got.BetaCoeffs[i]; math.Abs(g-w) > 0.05*w {
			t.Errorf("beta[%d] = %.5g, want %.5g ± 5%%", i, g, w)
		}
	}
	if g := got.AlphaCoeffs[0]; math.Abs(g-ta[0]) > 0.05*ta[0] {
		t.Errorf("alpha[0] = %.5g, want %.5g ± 5%%", g, ta[0])
	}
	// alpha[1] is truly 0: what it adds to a mean prompt's TTFT on an idle
	// server must be within 5 % of that TTFT.
	meanPrompt := float64(fitPromptLo+fitPromptHi) / 2
	if g, ttft := got.AlphaCoeffs[1]*meanPrompt, ta[0]+tb[0]+tb[1]*meanPrompt; g > 0.05*ttft {
		t.Errorf("alpha[1] = %.4g adds %.0f µs to a mean prompt's TTFT of %.0f µs; want at most 5%%", got.AlphaCoeffs[1], g, ttft)
	}

	// Replay with the fitted deployment and grade it.
	sims := simulate(t, got, recs)
	list := make([]tracev2.SimResult, 0, len(sims))
	for _, s := range sims {
		list = append(list, s)
	}
	simPath := filepath.Join(dir, "sim.json")
	f, err := os.Create(simPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := tracev2.WriteSimResults(f, list, tracev2.SimResultArray); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep, stderr, code := runCmd(t, "", tracePath, simPath, "--fail-under", "excellent")
	if code != 0 {
		t.Errorf("the refit replay does not grade excellent (exit %d):\n%s%s", code, rep, stderr)
	}
	t.Logf("calibrate:\n%s", rep)
}

func stripComments(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	return strings.TrimPrefix(strings.Join(keep, ""), "\n")
}

// TestFitBadInputs: every usage or input error exits 2 and writes nothing.
func TestFitBadInputs(t *testing.T) {
	dir := t.TempDir()
	bad := writeTemp(t, "bad.csv", "request_id,nope\n1,2\n")
	notOK := filepath.Join(dir, "failed.trace")
	writeAllFailed(t, notOK)
	out := filepath.Join(dir, "never.yaml")
	huge := filepath.Join(dir, "huge.csv")
	if err := os.WriteFile(huge, []byte(strings.Replace(readFile(t, realCSV), ",true,364,35,", ",true,9223372036854775807,35,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.yaml"), []byte(readFile(t, strings.TrimSuffix(realCSV, ".csv")+".yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no trace", []string{"--latency-model", "blackbox"}, "no real trace"},
		{"ITL file of two traces", []string{realCSV, realCSV, "--itl-data", realCSV}, "--itl-data names the ITL file of one trace"},
		{"stdin twice", []string{"-", "-"}, "stdin (-) can be read only once"},
		{"traces and two-file form", []string{realCSV, "--trace-header", realCSV}, "either as arguments or as --trace-header"},
		{"missing file", []string{filepath.Join(dir, "absent.csv")}, "absent.csv"},
		{"malformed trace", []string{bad}, "bad.csv"},
		{"huge token count", []string{huge}, `huge.csv:2:10: column input_tokens: "9223372036854775807" exceeds 16777216`},
		{"holdout 1", []string{realCSV, "--holdout", "1"}, "--holdout 1: want a share in [0, 1)"},
		{"negative holdout", []string{realCSV, "--holdout", "-0.5"}, "--holdout -0.5"},
		{"roofline", []string{realCSV, "--latency-model", "roofline"}, "roofline (--latency-model, or the trace's deployment) has no coefficients to fit"},
		{"unknown model kind", []string{realCSV, "--latency-model", "magic"}, `unknown latency model "magic"`},
		{"bad coefficients", []string{realCSV, "--latency-model", "blackbox", "--alpha-coeffs", "1,2", "--beta-coeffs", "1,2,3"}, "want 3 alpha and 3 beta"},
		{"iterations", []string{realCSV, "--max-iterations", "0"}, "--max-iterations 0"},
		{"warm-up", []string{realCSV, "--warmup-requests", "-2"}, "--warmup-requests -2"},
		{"nothing to fit", []string{notOK, "--latency-model", "blackbox"}, "no request to fit"},
		{"bad ITL", []string{realCSV, "--itl-data", bad}, "bad.csv"},
		{"cluster", []string{realCSV, "--num-instances", "2"}, "fit models one instance"},
		{"unknown flag", []string{realCSV, "--frobnicate"}, "frobnicate"},
		{"hold alpha", []string{realCSV, "--hold-alpha", "3"}, "--hold-alpha 3: want an alpha index 0, 1 or 2"},
		{"session mode", []string{realCSV, "--session-mode", "open"}, `--session-mode "open": want fixed or closed-loop`},
		{"think time", []string{realCSV, "--session-mode", "closed-loop", "--think-time", "-1s"}, "--think-time -1s is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"fit", "-o", out}, tc.args...)
			_, stderr, code := runCmd(t, "", args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// writeAllFailed writes a trace whose every row failed.
func writeAllFailed(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := tracev2.NewStreamWriter(f, fixtureHeader(), tracev2.Columns{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(5) {
		rec := tracev2.Record{RequestID: i, InputTokens: 100, OutputTokens: 10, ArrivalTimeUs: 1000 * (i + 1),
			SendTimeUs: 1000 * (i + 1), Status: "error", ErrorMessage: "boom"}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
}

// TestFitRealVLLMRun fits both latency models to a measured vLLM run (the
// RTX 4090 run of TestRealVLLMRun, saturated: the queue grows) with a fifth
// of the requests held out, and requires the fit to beat the starting
// coefficients on the held-out requests. The figures are logged.
func TestFitRealVLLMRun(t *testing.T) {
	_, realPath := realRunTrace(t)
	for _, kind := range []string{"trained-physics", "blackbox"} {
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "fitted.yaml")
			args := append([]string{"fit", realPath, "--latency-model", kind, "--holdout", "0.2", "-o", out}, realRunDeployment()...)
			_, stderr, code := runCmd(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			t.Logf("\n%s", stderr)
			var start, fitted, held [2]float64
			for _, l := range strings.Split(stderr, "\n") {
				f := strings.Fields(l)
				if len(f) == 4 && (f[0] == "ttft" || f[0] == "e2e") {
					i := 0
					if f[0] == "e2e" {
						i = 1
					}
					for j, dst := range []*[2]float64{&start, &fitted, &held} {
						v, err := strconv.ParseFloat(strings.TrimSuffix(f[j+1], "%"), 64)
						if err != nil {
							t.Fatalf("summary line %q: %v", l, err)
						}
						dst[i] = v
					}
				}
			}
			if held[1] == 0 || held[1] >= start[1] {
				t.Errorf("held-out E2E MAPE %.1f%%, start %.1f%%: want the fit to do better", held[1], start[1])
			}
			if _, err := deploy.Load(out, deploy.Default()); err != nil {
				t.Errorf("the fitted deployment does not load: %v", err)
			}
		})
	}
}

// TestFitSeveralTraces: one fit over a light and a loaded run of the same
// deployment recovers the coefficients within 5 % and reports each trace's
// error before and after.
func TestFitSeveralTraces(t *testing.T) {
	dir := t.TempDir()
	light, _ := writeFitTraceAt(t, filepath.Join(dir, "light.trace"), 0.7, 21, 250)
	loaded, _ := writeFitTraceAt(t, filepath.Join(dir, "loaded.trace"), 5, 22, 500)
	out := filepath.Join(dir, "coeffs.yaml")
	_, stderr, code := runCmd(t, "", "fit", light, loaded, "--latency-model", "blackbox",
		"--alpha-coeffs", "0,0,0", "--beta-coeffs", "18000,60,100", "--max-num-seqs", "64", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	t.Logf("stderr:\n%s", stderr)
	for _, want := range []string{"trace ", light + " ", loaded + " "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q (the per-trace table)", want)
		}
	}
	got, err := deploy.Load(out, deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	_, beta := fitTruth()
	for i, want := range beta {
		if g := got.BetaCoeffs[i]; math.Abs(g-want) > 0.05*want {
			t.Errorf("beta[%d] = %.5g, want %.5g ± 5%%", i, g, want)
		}
	}
	if data := readFile(t, out); !strings.HasPrefix(data, "# Fitted by calibrate fit on "+light+", "+loaded) {
		t.Errorf("the YAML does not name both traces:\n%s", data)
	}
}
