package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// verifySLO bounds the plans of the verify step: E2E p90 under a second,
// which the tiny model on one CPU thread meets up to about its capacity.
const verifySLO = "e2e.p90<1s"

// verifyPage is the part of observe verify's JSON page the loop checks.
type verifyPage struct {
	Predicted float64 `json:"predicted_max_rate_rps"`
	Measured  float64 `json:"measured_max_rate_rps"`
	Corrected float64 `json:"corrected_max_rate_rps"`
	Probes    []struct {
		Rate   float64 `json:"rate_rps"`
		SLOMet bool    `json:"slo_met"`
	} `json:"probes"`
	Coefficients []struct {
		Name    string  `json:"name"`
		Planned float64 `json:"planned"`
		Fitted  float64 `json:"fitted"`
	} `json:"coefficients"`
}

// planArgs are run sweep's flags for the loop's workload under verifySLO
// on the fitted deployment, with beta as its step-time coefficients.
func planArgs(s setup, beta string) []string {
	args := []string{"sweep", "--deployment", filepath.Join(s.out, "fitted-deployment.yaml"), "--beta-coeffs", beta,
		"--arrival", "poisson", "--num-requests", "60", "--find", "max-rate", "--slo", verifySLO, "--quiet"}
	for _, w := range workload {
		if w != "--streaming" {
			args = append(args, w)
		}
	}
	return args
}

// maxRate is the max rate a run sweep JSON document answers.
func maxRate(t *testing.T, doc []byte) float64 {
	t.Helper()
	var d struct {
		Answer struct {
			MaxRates []struct {
				RateRPS float64 `json:"max_rate_rps"`
			} `json:"max_rates"`
		} `json:"answer"`
	}
	if err := json.Unmarshal(doc, &d); err != nil || len(d.Answer.MaxRates) != 1 {
		t.Fatalf("plan: %v, %d answers in %.300s", err, len(d.Answer.MaxRates), doc)
	}
	return d.Answer.MaxRates[0].RateRPS
}

// checkVerify plans the loop's workload on the fitted deployment twice:
// as fitted, and with its step times set a third too short (every β
// coefficient × 2/3, a plan that promises too much). observe verify probes
// the live server around the mis-set plan's answer, fits on the probes
// and searches again: its corrected capacity must land nearer the fitted
// plan's answer than the mis-set plan did, the error it was made to find.
func checkVerify(t *testing.T, s setup, srv *ollama) {
	fitted, err := os.ReadFile(filepath.Join(s.out, "fitted-deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var beta []float64
	for _, line := range strings.Split(string(fitted), "\n") {
		if rest, ok := strings.CutPrefix(line, "beta_coeffs: ["); ok {
			for _, f := range strings.Split(strings.TrimSuffix(rest, "]"), ",") {
				var v float64
				if _, err := fmt.Sscan(strings.TrimSpace(f), &v); err != nil {
					t.Fatalf("beta_coeffs %q: %v", rest, err)
				}
				beta = append(beta, v)
			}
		}
	}
	if len(beta) != 3 {
		t.Fatalf("no beta_coeffs in the fitted deployment:\n%s", fitted)
	}
	join := func(scale float64) string {
		parts := make([]string, len(beta))
		for i, b := range beta {
			parts[i] = fmt.Sprintf("%.6g", b*scale)
		}
		return strings.Join(parts, ",")
	}
	truePlan := filepath.Join(s.out, "plan-fitted.json")
	misPlan := filepath.Join(s.out, "plan-misset.json")
	s.mustTool(t, time.Minute, "plan.log", "run", append(planArgs(s, join(1)), "--format", "json", "-o", truePlan)...)
	s.mustTool(t, time.Minute, "plan.log", "run", append(planArgs(s, join(2.0/3)), "--format", "json", "-o", misPlan)...)
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rTrue, rMis := maxRate(t, read(truePlan)), maxRate(t, read(misPlan))
	if !(rMis > rTrue) {
		t.Fatalf("the mis-set plan answers %.2f req/s, the fitted one %.2f: step times a third shorter must promise more", rMis, rTrue)
	}
	args := []string{"verify", misPlan, "--url", srv.url(), "--model", modelName, "--deployment", filepath.Join(s.out, "fitted-deployment.yaml"),
		"--beta-coeffs", join(2.0 / 3), "--arrival", "poisson", "--num-requests", "60", "--probe-requests", "30",
		"--request-timeout", "60s", "-o", filepath.Join(s.out, "verify"), "--format", "json"}
	args = append(args, workload...)
	out := s.mustTool(t, 4*time.Minute, "verify.log", "observe", args...)
	var page verifyPage
	if err := json.Unmarshal(out, &page); err != nil {
		t.Fatalf("verify page: %v\n%.500s", err, out)
	}
	writeFile(t, filepath.Join(s.out, "verify.json"), string(out))
	t.Logf("fitted plan %.2f req/s, mis-set plan %.2f; verify: predicted %.2f, measured %.2f, corrected %.2f; probes %+v; coefficients %+v",
		rTrue, rMis, page.Predicted, page.Measured, page.Corrected, page.Probes, page.Coefficients)
	if math.Abs(page.Predicted-rMis) > 1e-9 || len(page.Probes) != 3 {
		t.Errorf("verify predicted %.3f (plan %.3f) with %d probes, want the plan's answer and 3 probes", page.Predicted, rMis, len(page.Probes))
	}
	if before, after := math.Abs(rMis-rTrue), math.Abs(page.Corrected-rTrue); !(after < before) {
		t.Errorf("corrected capacity %.2f req/s is no nearer the fitted plan's %.2f than the mis-set plan's %.2f", page.Corrected, rTrue, rMis)
	}
}
