package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
)

const rtxCapture = "../../testdata/captures/rtx4090-llama-3.1-8b.trace"

// TestStepsCommand: calibrate steps prints the step table of the RTX 4090
// capture on its deployment as JSON and Markdown, and a bad flag is exit 2
// before anything is read.
func TestStepsCommand(t *testing.T) {
	// The deployment names its hardware file from the repository's root.
	dep := "--deployment=../../internal/fidelity/data/deployments/RTX4090_Llama-3.1-8B.yaml"
	hw := "--hardware-file=../../internal/fidelity/data/hardware.json"
	stdout, stderr, code := runCmd(t, "", "steps", rtxCapture, dep, hw, "--format", "json")
	if code != 0 {
		t.Fatalf("calibrate steps: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Model  string  `json:"model"`
		Chunks int     `json:"chunks"`
		Share  float64 `json:"explained_share"`
		Steps  int     `json:"steps"`
		Rows   []struct {
			Kind       string  `json:"kind"`
			Steps      int     `json:"steps"`
			RealMeanMs float64 `json:"real_mean_ms"`
			PredMeanMs float64 `json:"pred_mean_ms"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	n := 0
	for _, row := range rep.Rows {
		n += row.Steps
		if row.RealMeanMs <= 0 || row.PredMeanMs <= 0 {
			t.Errorf("row %+v: a time is not positive", row)
		}
	}
	if rep.Model != "llama-3.1-8b-instruct" || rep.Chunks != 600 || rep.Share < 0.9 || rep.Steps == 0 || n != rep.Steps {
		t.Errorf("report %+v: want the deployment's model, 600 chunks, ≥ 90%% explained, every placed step in a row", rep)
	}
	md, _, code := runCmd(t, "", "steps", rtxCapture, dep, hw, "--format", "markdown")
	if code != 0 || !strings.Contains(md, "| step | decodes | steps |") {
		t.Errorf("markdown (exit %d):\n%s", code, md)
	}
	for _, args := range [][]string{
		{"steps", rtxCapture, "--format", "html"},
		{"steps", rtxCapture, "--step-window", "-1ms"},
		{"steps", rtxCapture, rtxCapture},
	} {
		if out, stderr, code := runCmd(t, "", args...); code != exitcode.Usage || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and nothing written", args, code, out, stderr)
		}
	}
}

// TestStepsFitOut: --fit-out needs the physics model and more steps than
// unknowns: the RTX 4090 capture has no ITL file and places 3 steps, which
// cannot fit three terms, and says so before writing anything; a blackbox
// deployment of another model is refused. (FitSteps itself: internal/fit TestFitStepsRecovers.)
func TestStepsFitOut(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "fitted.yaml")
	dep := "--deployment=../../internal/fidelity/data/deployments/RTX4090_Llama-3.1-8B.yaml"
	hw := "--hardware-file=../../internal/fidelity/data/hardware.json"
	_, stderr, code := runCmd(t, "", "steps", rtxCapture, dep, hw, "--fit-out", out, "-o", filepath.Join(dir, "steps.txt"))
	if code != exitcode.Usage || !strings.Contains(stderr, "--fit-out: fit steps: 3 steps with a time, want at least 4") {
		t.Errorf("three steps: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a fit that failed left %s: %v", out, err)
	}
	if _, stderr, code := runCmd(t, "", "steps", rtxCapture, "--ignore-trace-deployment", "--model", "llama-3.1-8b-instruct", "--latency-model", "roofline",
		"--fit-out", filepath.Join(dir, "b.yaml"), "-o", filepath.Join(dir, "s2.txt")); code != exitcode.Usage || !strings.Contains(stderr, "fits the physics latency model; the deployment's is roofline") {
		t.Errorf("roofline: exit %d, %s", code, stderr)
	}
}
