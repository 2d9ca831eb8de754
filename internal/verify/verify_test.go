package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/httpload/fakevllm"
	"servesim/internal/live"
	"servesim/internal/replay"
	"servesim/internal/report"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// testWorkload is requests short enough that a probe of a few dozen takes
// a few seconds, with prompts long enough that a prefill is bound by the
// GPU's FLOP/s rather than by its weight reads (else the probes could not
// tell the two shares apart).
func testWorkload() flagspec.Values {
	return flagspec.Values{"prompt-tokens": 512, "prompt-tokens-stdev": 0, "output-tokens": 24, "output-tokens-stdev": 0,
		"num-requests": int64(200), "arrival": "poisson"}
}

const testSLO = "tpot.p99<25ms"

// startSimServer serves the physics model of Qwen3-14B on one H100 with
// its default GPU shares, through the fake's step engine.
func startSimServer(t *testing.T) *fakevllm.Server {
	t.Helper()
	d := deploy.Default()
	d.VLLMVersion = "0.10.1" // what the fake reports on /version
	res, err := deploy.Resolve(d)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Instance.Latency
	srv, err := fakevllm.Start(fakevllm.Config{Model: "Qwen/Qwen3-14B", VLLMVersion: d.VLLMVersion,
		Steps: func(s fakevllm.Step) time.Duration {
			st := latency.Step{DecodeCount: s.Decodes, DecodeContextSum: s.DecodeContext}
			for _, n := range s.PrefillTokens {
				st.Prefill = append(st.Prefill, latency.PrefillWork{NewTokens: n, Target: n})
			}
			return time.Duration(m.StepTime(&st)) * time.Microsecond
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// misSetPlan writes the plan of a deployment whose bandwidth share is
// 0.7 of the true one, and returns its path and the coefficient flags.
func misSetPlan(t *testing.T, dir, slo string) (string, flagspec.Values) {
	t.Helper()
	return misSetPlanF(t, dir, slo, 0.7)
}

func misSetPlanF(t *testing.T, dir, slo string, f float64) (string, flagspec.Values) {
	t.Helper()
	gpu, err := latency.LookupGPU("H100")
	if err != nil {
		t.Fatal(err)
	}
	beta := latency.PhysicsDefaultBeta(gpu)
	beta[latency.PhBwEff] *= f
	coeffs := flagspec.Values{"alpha-coeffs": join(latency.PhysicsDefaultAlpha()), "beta-coeffs": join(beta), "vllm-version": "0.10.1"}
	dep, err := deploy.FromFlags(coeffs)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workload.FromFlags(testWorkload(), nil, "-")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := sweep.Prepare(flagspec.Values{sweep.FlagFind: sweep.FindMaxRate, sweep.FlagSLO: slo, sweep.FlagFormat: "json", sweep.FlagOutput: "-"}, replay.RateKey)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := replay.RunSweep(context.Background(), replay.WorkloadSweep{Sweep: opts, Workload: wl, Deploy: dep, Pages: report.SweepPages{},
		WorkloadFacts: func(w *workload.Workload) tracev2.Client { return w.Client() }, Stdout: &out, Log: slog.New(slog.DiscardHandler)}); err != nil && exitcode.Of(err) != exitcode.Assertion {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plan-"+strconv.Itoa(len(slo))+".json")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, coeffs
}

func join(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strings.Join(s, ",")
}

func testConfig(srv *fakevllm.Server, plan, dir string, dep flagspec.Values) Config {
	return Config{Plan: plan, Live: live.Config{URL: srv.URL(), RequestTimeout: time.Minute, Prewarm: -1, MaxErrorRate: 1,
		Drain: time.Second, NoSelfTest: true, ScrapeInterval: time.Second, PercentileMetrics: "ttft", MetricPercentiles: "99"},
		Workload: testWorkload(), Deploy: dep, Probes: 3, Spread: 0.3, Requests: 50, Prefix: filepath.Join(dir, "probe"),
		Format: "json", MaxIterations: 10}
}

// TestVerifyRecoversMisSetShare: a plan whose bandwidth share is 30% low
// predicts too little capacity; verify's probes, on a server whose steps
// follow the true model, recover the share within the stated precision,
// and the corrected answer is the true plan's.
func TestVerifyRecoversMisSetShare(t *testing.T) {
	if testing.Short() {
		t.Skip("live probes")
	}
	dir := t.TempDir()
	srv := startSimServer(t)
	plan, coeffs := misSetPlan(t, dir, testSLO)
	truePlan, _ := misSetPlanF(t, t.TempDir(), testSLO, 1)
	want, err := readPlan(truePlan, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Run(ctx, testConfig(srv, plan, dir, coeffs), live.IO{Out: &out, Err: &errs}); err != nil {
		t.Fatalf("verify: %v\n%s", err, errs.String())
	}
	var r Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	var bw *Coef
	for i := range r.Coefficients {
		if r.Coefficients[i].Name == "bw_eff" {
			bw = &r.Coefficients[i]
		}
	}
	if bw == nil || bw.Planned != 0.85*0.7 {
		t.Fatalf("bw_eff %+v in %+v, want planned 0.595 and fitted", bw, r.Coefficients)
	}
	if bw.Fitted < 0.85*(1-r.SharePrecision) || bw.Fitted > 0.85*(1+r.SharePrecision) {
		t.Errorf("fitted bw_eff %.3f, want 0.85 ± %.0f%%", bw.Fitted, 100*r.SharePrecision)
	}
	// The plans are simulated: their answers are exact. The corrected one
	// rests on the fit, within the share's precision.
	if r.PredictedMaxRateRPS != 21.19 || want.answer.MaxRateRPS != 26.66 {
		t.Errorf("predicted %v req/s by the mis-set plan, %v by the true one; want 21.19 and 26.66", r.PredictedMaxRateRPS, want.answer.MaxRateRPS)
	}
	if got := r.CorrectedMaxRateRPS / want.answer.MaxRateRPS; got < 1-r.SharePrecision || got > 1+r.SharePrecision || r.Holds {
		t.Errorf("corrected %.2f req/s (holds %v), want the true plan's %.2f ± %.0f%% and a plan that does not hold",
			r.CorrectedMaxRateRPS, r.Holds, want.answer.MaxRateRPS, 100*r.SharePrecision)
	}
	// Probes at 0.7×, 1× and 1.3× the predicted rate. The lowest, at 0.56×
	// the true capacity, meets the SLO whatever the machine's noise; the
	// others straddle the true capacity, where a p99 of 50 requests on a
	// busy machine may go either way.
	var rates []float64
	for _, p := range r.Probes {
		rates = append(rates, p.RateRPS)
	}
	if !slices.Equal(rates, []float64{14.83, 21.19, 27.55}) || !r.Probes[0].SLOMet || r.MeasuredMaxRateRPS < 14.83 {
		t.Errorf("probes %+v, measured max %v: want rates 14.83, 21.19, 27.55, the lowest meeting the SLO", r.Probes, r.MeasuredMaxRateRPS)
	}
}

// TestVerifyRefusesBadPlans: a document that is not a sweep answer, a
// plan with no answer and a plan of a model the server does not serve are
// each one error with exit code 2, before any request is sent.
func TestVerifyRefusesBadPlans(t *testing.T) {
	dir := t.TempDir()
	srv := startSimServer(t)
	other, err := fakevllm.Start(fakevllm.Config{Model: "meta-llama/Llama-3.1-8B-Instruct"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	good, coeffs := misSetPlan(t, dir, testSLO)
	none, _ := misSetPlan(t, dir, "tpot.p99<1ms")
	replayPlan := filepath.Join(dir, "replay.json")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(replayPlan, bytes.Replace(data, []byte(`"command": "run sweep"`), []byte(`"command": "replay sweep"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	notDoc := filepath.Join(dir, "not.json")
	if err := os.WriteFile(notDoc, []byte(`[1, 2]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, plan string
		srv        *fakevllm.Server
		want       string
	}{
		{"not a sweep", notDoc, srv, "not.json:1:1: not a sweep document"},
		{"a trace's plan", replayPlan, srv, "a plan of replay sweep: verify probes the server with a workload"},
		{"no answer", none, srv, "the plan has no answer: no rate met the SLO tpot.p99<1ms"},
		{"model not served", good, other, "the plan was made for qwen3-14b, but the server serves meta-llama/Llama-3.1-8B-Instruct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.srv.Stats().Requests
			err := Run(context.Background(), testConfig(tc.srv, tc.plan, dir, coeffs), live.IO{Out: io.Discard, Err: io.Discard})
			if exitcode.Of(err) != exitcode.Usage || err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v (exit %d), want one line with %q, exit 2", err, exitcode.Of(err), tc.want)
			}
			if n := tc.srv.Stats().Requests - before; n != 0 {
				t.Errorf("%d requests sent before the error, want 0", n)
			}
		})
	}
}

// TestServedName: --model matches a listed name or a listed name less its
// tag (Ollama's servesim-tiny:latest); a plan made for a model config file
// is vouched for by --model; a plan's model name must match.
func TestServedName(t *testing.T) {
	for _, tc := range []struct {
		served           []string
		want, plan, name string
		err              string
	}{
		{[]string{"servesim-tiny:latest"}, "servesim-tiny", "/data/config.json", "servesim-tiny", ""},
		{[]string{"Qwen/Qwen3-14B"}, "Qwen/Qwen3-14B", "qwen3-14b", "Qwen/Qwen3-14B", ""},
		{[]string{"Qwen/Qwen3-14B"}, "", "qwen3-14b", "Qwen/Qwen3-14B", ""},
		{[]string{"Qwen/Qwen3-14B"}, "Qwen/Qwen3-14B", "llama-3.1-8b", "", "--model Qwen/Qwen3-14B: the plan was made for llama-3.1-8b"},
		{[]string{"servesim-tiny:latest"}, "servesim", "./config.json", "", "--model servesim: the server serves servesim-tiny:latest"},
	} {
		got, err := servedName(tc.served, tc.want, tc.plan)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v %q %q: error %v, want %q", tc.served, tc.want, tc.plan, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.name {
			t.Errorf("%v %q %q: %q, %v; want %q", tc.served, tc.want, tc.plan, got, err, tc.name)
		}
	}
}
