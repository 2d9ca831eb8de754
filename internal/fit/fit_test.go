package fit

import (
	"context"
	"math"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/des/latency"
	"servesim/internal/tracev2"
)

// blackboxTruth is the synthetic measurement the recovery tests fit: 600
// requests at 4/s on Qwen3-14B/H100 (max 64 sequences), blackbox
// α = [10 ms, 0, 0], β = [6 ms, 20 µs/prefill token, 300 µs/decode request]
// (the shape of the built-in llama-3.1-8b entry), chunk times perturbed by
// ±1 %, with one ITL chunk per token.
func blackboxTruth() synth {
	return synth{n: 600, ratePerS: 4, promptLo: 100, promptHi: 1500, outLo: 10, outHi: 200, kind: "blackbox",
		alpha: []float64{10000, 0, 0}, beta: []float64{6000, 20, 300}, noise: 0.01, seed: 3, itl: true}
}

// TestFitRecoversBlackbox: from a start 67 % to 3× off, the fit recovers
// every coefficient within 5 % (α₁, truly 0, adds less than 5 % to a mean
// prompt's TTFT), and the refit replay's error is close to the noise.
func TestFitRecoversBlackbox(t *testing.T) {
	s := blackboxTruth()
	recs, itl := s.make(t)
	dep := testDeployment(t, "blackbox", []float64{0, 0, 0}, []float64{10000, 20, 100})
	res, err := Fit(context.Background(), Config{Deploy: dep, Seed: 1, Holdout: 0.2}, Input{Records: recs, ITL: itl})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("alpha %.5g beta %.5g; start TTFT %.3f E2E %.3f; fit TTFT %.3f E2E %.3f; holdout TTFT %.3f E2E %.3f; %d replays, spread %.3f",
		res.Alpha, res.Beta, res.Start.TTFTMAPE, res.Start.E2EMAPE, res.Fit.TTFTMAPE, res.Fit.E2EMAPE,
		res.Holdout.TTFTMAPE, res.Holdout.E2EMAPE, res.Iterations, res.Spread)
	for i, want := range s.beta {
		if got := res.Beta[i]; math.Abs(got-want) > 0.05*want {
			t.Errorf("beta[%d] = %.5g, want %.5g ± 5%%", i, got, want)
		}
	}
	if got, want := res.Alpha[0], s.alpha[0]; math.Abs(got-want) > 0.05*want {
		t.Errorf("alpha[0] = %.5g, want %.5g ± 5%%", got, want)
	}
	// α₁ is truly 0: what it adds to a mean prompt's TTFT on an idle server
	// must be within 5 % of that TTFT.
	meanPrompt := float64(s.promptLo+s.promptHi) / 2
	if got, ttft := res.Alpha[1]*meanPrompt, s.alpha[0]+s.beta[0]+s.beta[1]*meanPrompt; got > 0.05*ttft {
		t.Errorf("alpha[1] = %.4g adds %.0f µs to a mean prompt's TTFT of %.0f µs; want at most 5%%", res.Alpha[1], got, ttft)
	}
	if res.Alpha[2] != 0 {
		t.Errorf("alpha[2] = %v, want it kept at its start, 0", res.Alpha[2])
	}
	if res.FitRequests+res.HoldoutRequests != s.n || res.HoldoutRequests < 90 || res.HoldoutRequests > 150 {
		t.Errorf("%d fitted + %d held out, want %d with about 20%% held out", res.FitRequests, res.HoldoutRequests, s.n)
	}
	if res.ITLRequests != s.n {
		t.Errorf("%d requests fitted from ITL data, want all %d", res.ITLRequests, s.n)
	}
	for _, e := range []struct {
		name string
		err  Errors
	}{{"fit", res.Fit}, {"holdout", res.Holdout}} {
		if e.err.TTFTMAPE > 0.08 || e.err.E2EMAPE > 0.02 {
			t.Errorf("%s: TTFT MAPE %.3f, E2E MAPE %.3f; want at most 0.08 and 0.02", e.name, e.err.TTFTMAPE, e.err.E2EMAPE)
		}
	}
	if res.Start.E2EMAPE < 0.3 {
		t.Errorf("start E2E MAPE %.3f: the test should start far off", res.Start.E2EMAPE)
	}
}

// TestFitAggregateOnly fits the same run without ITL data: one equation per
// request for its decode.
func TestFitAggregateOnly(t *testing.T) {
	s := blackboxTruth()
	s.itl = false
	recs, _ := s.make(t)
	dep := testDeployment(t, "blackbox", []float64{0, 0, 0}, []float64{10000, 20, 100})
	res, err := Fit(context.Background(), Config{Deploy: dep, Seed: 1}, Input{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("alpha %.5g beta %.5g", res.Alpha, res.Beta)
	for i, want := range s.beta {
		if got := res.Beta[i]; math.Abs(got-want) > 0.06*want {
			t.Errorf("beta[%d] = %.5g, want %.5g ± 6%%", i, got, want)
		}
	}
	if res.ITLRequests != 0 || res.HoldoutRequests != 0 || res.Holdout.N != 0 {
		t.Errorf("ITL requests %d, held out %d (%d compared), want none", res.ITLRequests, res.HoldoutRequests, res.Holdout.N)
	}
}

// TestFitTrainedPhysics: a run whose prefill compute and decode KV terms
// differ from the reference. The tied and collinear terms cannot all be
// recovered one by one, but the fitted model replays the run better than
// the reference does, and its step times are the true ones.
func TestFitTrainedPhysics(t *testing.T) {
	b := latency.DefaultPhysicsBeta()
	b[latency.BetaPrefillCompute] *= 1.3
	b[latency.BetaDecodeKV] *= 0.8
	s := synth{n: 400, ratePerS: 3, promptLo: 100, promptHi: 1500, outLo: 10, outHi: 200, kind: "trained-physics",
		alpha: []float64{12000, 500, 45.907545}, beta: b, noise: 0.01, seed: 5, itl: true}
	recs, itl := s.make(t)
	dep := testDeployment(t, "trained-physics", nil, nil)
	res, err := Fit(context.Background(), Config{Deploy: dep, Seed: 1}, Input{Records: recs, ITL: itl})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("alpha %.5g beta %.5g; start TTFT %.3f E2E %.3f; fit TTFT %.3f E2E %.3f", res.Alpha, res.Beta,
		res.Start.TTFTMAPE, res.Start.E2EMAPE, res.Fit.TTFTMAPE, res.Fit.E2EMAPE)
	if len(res.Beta) != latency.NumBetas {
		t.Fatalf("%d betas, want %d", len(res.Beta), latency.NumBetas)
	}
	if res.Fit.Objective() >= res.Start.Objective() || res.Fit.E2EMAPE > 0.01 {
		t.Errorf("fit error %.4f (E2E %.4f), start %.4f: want lower, and E2E at most 1%%", res.Fit.Objective(), res.Fit.E2EMAPE, res.Start.Objective())
	}
	// The step-time function comes back, term by term where the terms can
	// be told apart and in sum where they cannot (prefill compute and KV
	// both scale with prefill tokens).
	truth, err := model(dep, latency.KindTrainedPhysics, s.alpha, b)
	if err != nil {
		t.Fatal(err)
	}
	fitted, err := model(dep, latency.KindTrainedPhysics, res.Alpha, res.Beta)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []latency.Step{
		{Prefill: []latency.PrefillWork{{NewTokens: 1000, Target: 1000}}},
		{DecodeCount: 16, DecodeContextSum: 16 * 900},
		{Prefill: []latency.PrefillWork{{NewTokens: 400, Target: 400}}, DecodeCount: 8, DecodeContextSum: 8 * 500},
	} {
		got, want := fitted.StepTime(&st), truth.StepTime(&st)
		if math.Abs(float64(got-want)) > 0.05*float64(want) {
			t.Errorf("step %+v: fitted %d µs, true %d µs; want within 5%%", st, got, want)
		}
	}
	if got, want := res.Alpha[0], s.alpha[0]; math.Abs(got-want) > 0.05*want {
		t.Errorf("alpha[0] = %.5g, want %.5g ± 5%%", got, want)
	}
}

// TestFitDeterministic: the same inputs give the same coefficients, bit for
// bit.
func TestFitDeterministic(t *testing.T) {
	s := blackboxTruth()
	s.n = 150
	recs, itl := s.make(t)
	run := func() *Result {
		dep := testDeployment(t, "blackbox", []float64{0, 0, 0}, []float64{10000, 20, 100})
		res, err := Fit(context.Background(), Config{Deploy: dep, Seed: 9, Holdout: 0.3, MaxIterations: 4}, Input{Records: recs, ITL: itl})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two fits differ:\n%+v\n%+v", a, b)
	}
}

func TestFitBadInput(t *testing.T) {
	s := blackboxTruth()
	s.n, s.itl = 20, false
	recs, _ := s.make(t)
	bb := testDeployment(t, "blackbox", []float64{0, 0, 0}, []float64{10000, 20, 100})
	roof := testDeployment(t, "roofline", nil, nil)
	failed := append([]tracev2.Record(nil), recs...)
	for i := range failed {
		failed[i].Status = "error"
	}
	tests := []struct {
		name string
		cfg  Config
		in   Input
		want string
	}{
		{"holdout 1", Config{Deploy: bb, Holdout: 1}, Input{Records: recs}, "holdout share 1 is not in [0, 1)"},
		{"negative holdout", Config{Deploy: bb, Holdout: -0.1}, Input{Records: recs}, "holdout share -0.1"},
		{"roofline", Config{Deploy: roof}, Input{Records: recs}, `latency model "roofline" has no coefficients to fit`},
		{"nothing ok", Config{Deploy: bb}, Input{Records: failed}, "no request to fit"},
		{"all warm-up", Config{Deploy: bb, WarmupRequests: 1000}, Input{Records: recs}, "no request to fit"},
		{"no deployment", Config{}, Input{Records: recs}, "no deployment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(context.Background(), tc.cfg, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestHoldoutDraw: the draw depends on the seed and the id only, and keeps
// about the asked share.
func TestHoldoutDraw(t *testing.T) {
	n := 0
	for id := int64(0); id < 10000; id++ {
		if unitHash(42, id) < 0.2 {
			n++
		}
		if unitHash(42, id) != unitHash(42, id) {
			t.Fatal("unitHash is not a function")
		}
	}
	if n < 1900 || n > 2100 {
		t.Errorf("%d of 10000 held out at 0.2, want about 2000", n)
	}
	if unitHash(1, 5) == unitHash(2, 5) {
		t.Error("the seed does not change the draw")
	}
}

// TestImports: fit never depends on the command line layer.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "servesim/cmd/") || dep == "servesim/internal/cli" || strings.Contains(dep, "urfave") ||
			dep == "servesim/internal/report" {
			t.Errorf("internal/fit depends on %s", dep)
		}
	}
}

// TestFitHoldAlpha: a held alpha keeps its starting value, and the others
// are still fitted.
func TestFitHoldAlpha(t *testing.T) {
	s := blackboxTruth()
	s.n = 200
	recs, itl := s.make(t)
	dep := testDeployment(t, "blackbox", []float64{0, 3, 0}, []float64{10000, 20, 100})
	res, err := Fit(context.Background(), Config{Deploy: dep, Seed: 1, HoldAlpha: [3]bool{false, true, false}}, Input{Records: recs, ITL: itl})
	if err != nil {
		t.Fatal(err)
	}
	if res.Alpha[1] != 3 {
		t.Errorf("alpha[1] = %v, want it held at 3", res.Alpha[1])
	}
	if got, want := res.Beta[2], s.beta[2]; math.Abs(got-want) > 0.05*want {
		t.Errorf("beta[2] = %.5g, want %.5g ± 5%%", got, want)
	}
}
