package fidelity

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/testkit/shareddata"
)

var update = flag.Bool("update", false, "rewrite the deployment files under data/deployments/")

// pkgAssets are the data files as seen from this package's directory.
func pkgAssets() Assets {
	return Assets{HardwareFile: "data/hardware.json", ModelDir: "data/models"}
}

// regression holds the figures the held-out report must not fall below:
// what was measured when the model was built, with a little slack (see the
// comments of TestFidelityReport). Fractions.
type regression struct {
	e2eMAPE, ttftMAPE, tpotMeanAbs, e2eR         float64 // overall (mean over runs)
	runE2EMAPE, runTTFTMAPE, runTPOTAbs, runE2ER float64 // every run
}

func fidelityRegression() regression {
	// Measured with the physics model and asynchronous scheduling in the
	// simulator (overall / worst run): E2E MAPE 2.0% / 2.7%, TTFT MAPE
	// 5.7% / 8.9%, |TPOT mean error| 0.4% / 2.4%, E2E r 0.998 / 0.996.
	// The per-run TTFT and TPOT bounds are the fidelity targets (DefaultTargets) themselves.
	return regression{
		e2eMAPE: 0.025, ttftMAPE: 0.07, tpotMeanAbs: 0.01, e2eR: 0.99,
		runE2EMAPE: 0.035, runTTFTMAPE: 0.10, runTPOTAbs: 0.03, runE2ER: 0.98,
	}
}

// TestFidelityReport is `make fidelity`: the held-out evaluation of every
// real run, printed as Markdown with -v, and the regression test that keeps
// its figures from getting worse. It also checks that the deployment files
// under data/deployments/ (rewritten with -update) are the ones the
// evaluation used and reproduce its replays through deploy.Load, as
// `replay --deployment` would.
func TestFidelityReport(t *testing.T) {
	bench := shareddata.Path(t, "llmservingsim/bench/examples")
	profiles := shareddata.Path(t, "llmservingsim/profiler/perf")
	rep, err := Evaluate(context.Background(), Config{BenchRoot: bench, ProfileRoot: profiles, Assets: pkgAssets()})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep, DefaultTargets()); err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		fmt.Println(md.String())
	}
	if len(rep.Runs) != 4 {
		t.Errorf("%d runs evaluated, want the 4 of the bench", len(rep.Runs))
	}

	want := fidelityRegression()
	o := rep.Overall
	for _, c := range []struct {
		what      string
		got, want float64
		higher    bool // the figure must stay at or above want
	}{
		{"overall E2E MAPE", o["e2e"].MAPE, want.e2eMAPE, false},
		{"overall TTFT MAPE", o["ttft"].MAPE, want.ttftMAPE, false},
		{"overall |TPOT mean error|", math.Abs(o["tpot"].MeanErr), want.tpotMeanAbs, false},
		{"overall E2E Pearson r", o["e2e"].PearsonR, want.e2eR, true},
	} {
		if (c.higher && c.got < c.want) || (!c.higher && c.got > c.want) {
			t.Errorf("%s regressed: got %.4f, want %s %.4f", c.what, c.got, map[bool]string{true: "≥", false: "≤"}[c.higher], c.want)
		}
	}
	for _, r := range rep.Runs {
		if m := r.Metrics["e2e"]; m.MAPE > want.runE2EMAPE {
			t.Errorf("%s: E2E MAPE regressed: got %.4f, want ≤ %.4f", r.Name, m.MAPE, want.runE2EMAPE)
		}
		if m := r.Metrics["ttft"]; m.MAPE > want.runTTFTMAPE {
			t.Errorf("%s: TTFT MAPE regressed: got %.4f, want ≤ %.4f", r.Name, m.MAPE, want.runTTFTMAPE)
		}
		if m := r.Metrics["tpot"]; math.Abs(m.MeanErr) > want.runTPOTAbs {
			t.Errorf("%s: TPOT mean error regressed: got %+.4f, want within ±%.4f", r.Name, m.MeanErr, want.runTPOTAbs)
		}
		if m := r.Metrics["e2e"]; m.PearsonR < want.runE2ER {
			t.Errorf("%s: E2E Pearson r regressed: got %.4f, want ≥ %.4f", r.Name, m.PearsonR, want.runE2ER)
		}
	}
	// By the load each request met (measured with the physics model:
	// light 173 requests TTFT 8.7% E2E 1.8%, knee 168 7.1% / 2.5%,
	// saturated 859 4.8% / 2.0%), every class within the fidelity targets.
	for g, lim := range map[Regime][2]float64{RegimeLight: {0.11, 0.03}, RegimeKnee: {0.08, 0.03}, RegimeSaturated: {0.06, 0.03}} {
		e := rep.Regimes[g]
		if e.N < 100 || e.TTFTMAPE > lim[0] || e.E2EMAPE > lim[1] {
			t.Errorf("%s load: %d requests, TTFT MAPE %.4f, E2E MAPE %.4f; want at least 100 within %.2f and %.2f", g, e.N, e.TTFTMAPE, e.E2EMAPE, lim[0], lim[1])
		}
	}
	for target, ok := range DefaultTargets().Met(rep) {
		if !ok {
			t.Errorf("target %s is not met on every run", target)
		}
	}
	checkUnfitted(t, rep)
	checkCoverage(t, rep)
	checkDeployments(t, rep)
	checkSelection(t, rep, Config{BenchRoot: bench, ProfileRoot: profiles, Assets: pkgAssets()})
}

// checkSelection: a run evaluated alone (Config.Runs) gets the σ it gets
// among all, the others still informing it and never itself.
func checkSelection(t *testing.T, all *Report, cfg Config) {
	t.Helper()
	const name = "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507"
	cfg.Runs = []string{name}
	one, err := Evaluate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want *RunReport
	for i := range all.Runs {
		if all.Runs[i].Name == name {
			want = &all.Runs[i]
		}
	}
	if len(one.Runs) != 1 || want == nil {
		t.Fatalf("%d runs evaluated for %s alone", len(one.Runs), name)
	}
	got := one.Runs[0]
	if got.Interval.Sigma != want.Interval.Sigma || got.Unfitted.Interval.Sigma != want.Unfitted.Interval.Sigma {
		t.Errorf("%s alone: σ %v fitted, %v unfitted; among all %v and %v", name,
			got.Interval.Sigma, got.Unfitted.Interval.Sigma, want.Interval.Sigma, want.Unfitted.Interval.Sigma)
	}
}

// checkUnfitted keeps the unfitted defaults' errors from getting worse.
// Measured (E2E / TTFT MAPE): RTX4090/Llama-3.1-8B 8.2% / 17.2%,
// RTXPRO6000/Llama-3.1-8B 5.6% / 8.7%, RTXPRO6000/Qwen3-30B-A3B 5.8% /
// 17.2%, RTXPRO6000/Qwen3-32B 4.4% / 7.0%; mean over runs 6.0% / 12.5%.
// (With NVLink's link figures on these PCIe boards the Qwen3 runs were
// 23.8% / 43.2% and 30.1% / 44.2%; with Hopper's mixed-batch factors for
// FlashAttention 2, 7.6% / 16.2%, 2.3% / 6.1%, 11.6% / 26.0%, 6.5% / 7.7%.)
// The goals (E2E ≤ 15%, TTFT ≤ 20% every run) are reported, not enforced.
func checkUnfitted(t *testing.T, rep *Report) {
	t.Helper()
	bound := map[string][2]float64{ // E2E, TTFT
		"RTX4090/Llama-3.1-8B":                   {0.09, 0.185},
		"RTXPRO6000/Llama-3.1-8B":                {0.07, 0.105},
		"RTXPRO6000/Qwen3-30B-A3B-Instruct-2507": {0.065, 0.18},
		"RTXPRO6000/Qwen3-32B":                   {0.05, 0.08},
	}
	for _, r := range rep.Runs {
		b, ok := bound[r.Name]
		if !ok || r.Unfitted == nil {
			t.Errorf("%s: no unfitted replay or no bound for it", r.Name)
			continue
		}
		if e, tt := r.Unfitted.Metrics["e2e"].MAPE, r.Unfitted.Metrics["ttft"].MAPE; e > b[0] || tt > b[1] {
			t.Errorf("%s: unfitted E2E MAPE %.4f, TTFT MAPE %.4f; want ≤ %.3f and ≤ %.3f", r.Name, e, tt, b[0], b[1])
		}
	}
	if e, tt := rep.UnfittedOverall["e2e"].MAPE, rep.UnfittedOverall["ttft"].MAPE; e > 0.07 || tt > 0.135 {
		t.Errorf("unfitted overall E2E MAPE %.4f, TTFT MAPE %.4f; want ≤ 0.07 and ≤ 0.135", e, tt)
	}
	// The physics model's documented σ is this evidence: calibrate fit's
	// rule over every run's unfitted replay. A change to the defaults that
	// moves it asks for the constant (and its documentation) to follow.
	if got, doc := UnfittedSigma(rep.Runs, ""), latency.DefaultStepTimeSigma; math.Abs(got-doc) > 0.001 {
		t.Errorf("the unfitted replays give σ %.4f; latency.DefaultStepTimeSigma says %.3f", got, doc)
	}
}

// checkCoverage keeps the 90% intervals' coverage of the real requests
// (all runs pooled) from getting worse. Measured (TTFT / E2E): fitted
// 96.8% / 100% (light 90.2% / 100%, knee 96.4% / 100%, saturated
// 98.1% / 100%), σ 10.0–17.6% (calibrate fit's rule on the training
// runs, pooled and by load);
// unfitted 95.6% / 100% (light 86.7% / 100%, knee 88.1% / 100%, saturated
// 98.8% / 100%), σ 16.8–22.0% (the same rule on the other runs' unfitted
// replays). The goal (85%) is reported, not enforced.
func checkCoverage(t *testing.T, rep *Report) {
	t.Helper()
	for _, c := range []struct {
		path string
		p    *PooledCoverage
		all  [2]float64 // TTFT, E2E: at least
		by   map[Regime][2]float64
	}{
		{"fitted", rep.Coverage, [2]float64{0.95, 0.97},
			map[Regime][2]float64{RegimeLight: {0.87, 0.97}, RegimeKnee: {0.94, 0.97}, RegimeSaturated: {0.96, 0.97}}},
		{"unfitted", rep.UnfittedCoverage, [2]float64{0.94, 0.97},
			map[Regime][2]float64{RegimeLight: {0.85, 0.97}, RegimeKnee: {0.86, 0.97}, RegimeSaturated: {0.97, 0.97}}},
	} {
		if c.p == nil || c.p.Runs != 4 || c.p.Requests["e2e"].N != 1200 {
			t.Errorf("%s: intervals of %+v, want the 4 runs' 1,200 requests", c.path, c.p)
			continue
		}
		check := func(what string, m map[string]Count, lim [2]float64) {
			if tt, e := m["ttft"].Share(), m["e2e"].Share(); tt < lim[0] || e < lim[1] {
				t.Errorf("%s intervals, %s: coverage TTFT %.4f, E2E %.4f; want ≥ %.2f and ≥ %.2f", c.path, what, tt, e, lim[0], lim[1])
			}
		}
		check("all requests", c.p.Requests, c.all)
		for _, g := range Regimes() {
			check(string(g)+" load", c.p.Regimes[g], c.by[g])
		}
	}
}

// checkDeployments compares (or, with -update, rewrites) the committed
// deployment of every run, then replays each run from its file and checks
// that the result is the evaluation's.
func checkDeployments(t *testing.T, rep *Report) {
	t.Helper()
	dir := filepath.Join("data", "deployments")
	for _, r := range rep.Runs {
		path := filepath.Join(dir, FileName(r.Name))
		cfg := Relocate(r.Deploy, pkgAssets(), DefaultAssets())
		var buf bytes.Buffer
		comment := []string{
			fmt.Sprintf("Deployment of the LLMServingSim bench run %s (vLLM %s, %s on %s, TP %d, DP %d),", r.Name, "0.19.0", r.Model, r.GPU, r.TP, r.DP),
			"derived from its meta.json; the physics model's GPU coefficients from its kernel profile, host and",
			"link terms fitted on the other bench runs only. Paths are relative to the repository root. The",
			"fidelity report counts TTFT and E2E from the end of the step in flight when each request arrived",
			"(where vLLM stamps queued_ts); replay counts from the arrival, so its TTFT is longer by that part of a step.",
			"Written by `go test ./internal/fidelity -run TestFidelityReport -update`; see internal/fidelity.",
		}
		if err := WriteDeployment(&buf, cfg, comment); err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := deploy.Load(path, deploy.Default())
		if err != nil {
			t.Fatalf("%s: %v (run with -update to write it)", path, err)
		}
		fresh, err := deploy.Decode(path, buf.Bytes(), deploy.Default())
		if err != nil {
			t.Fatalf("%s: the written YAML does not load: %v", path, err)
		}
		if !sameDeployment(got, fresh) {
			t.Errorf("%s is stale: the evaluation now derives\n%s(run with -update)", path, buf.String())
			continue
		}
		// The file, with its paths seen from here, replays the run to the
		// evaluation's figures.
		got = Relocate(got, DefaultAssets(), pkgAssets())
		c := rep.cases[r.Name]
		rp, err := c.replay(context.Background(), got, r.Universal)
		if err != nil {
			t.Fatal(err)
		}
		if e2e, want := rp.rawE2EMean, r.ReplayE2EMeanUs; math.Abs(e2e-want) > 1e-6*want {
			t.Errorf("%s: replaying %s gives mean E2E %.1f µs, the evaluation %.1f µs", r.Name, path, e2e, want)
		}
	}
}

// sameDeployment compares two deployments, coefficients within a relative
// 1e-9 (YAML keeps the shortest round-trip form, so they are usually equal).
func sameDeployment(a, b deploy.Config) bool {
	if len(a.AlphaCoeffs) != len(b.AlphaCoeffs) || len(a.BetaCoeffs) != len(b.BetaCoeffs) {
		return false
	}
	near := func(x, y []float64) bool {
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-9*math.Max(1, math.Abs(y[i])) {
				return false
			}
		}
		return true
	}
	if !near(a.AlphaCoeffs, b.AlphaCoeffs) || !near(a.BetaCoeffs, b.BetaCoeffs) {
		return false
	}
	if (a.AsyncScheduling == nil) != (b.AsyncScheduling == nil) ||
		a.AsyncScheduling != nil && *a.AsyncScheduling != *b.AsyncScheduling {
		return false
	}
	a.AlphaCoeffs, a.BetaCoeffs, b.AlphaCoeffs, b.BetaCoeffs = nil, nil, nil, nil
	a.AsyncScheduling, b.AsyncScheduling = nil, nil // compared above: their addresses differ
	return fmt.Sprint(a) == fmt.Sprint(b)
}
