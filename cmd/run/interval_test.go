package main

import (
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
)

// TestSweepInterval: run sweep --interval answers a max rate with its 90%
// interval from the simulator run at step-time scales 1 ± 1.645σ: the
// interval holds the answer, is about as wide as σ says (the max rate
// moves as 1/scale), widens with σ (--step-time-sigma) and with seeds, and
// every row's latencies get their band.
func TestSweepInterval(t *testing.T) {
	base := []string{"sweep", "--workload", "chatbot", "--num-requests", "300", "--find", "max-rate",
		"--slo", "ttft.p99<500ms", "--precision", "0.02", "--format", "json", "--interval"}
	d := decodeDoc(t, mustRun(t, base...))
	m := d.Answer.MaxRates[0]
	iv := m.Interval
	if iv == nil || d.Interval == nil || !d.Interval.Model || d.Interval.Seeds != 1 {
		t.Fatalf("no interval: %+v %+v", iv, d.Interval)
	}
	sigma := latency.DefaultStepTimeSigma
	if iv.Sigma != sigma || !(iv.LoRPS < m.MaxRateRPS && m.MaxRateRPS < iv.HiRPS) {
		t.Errorf("interval %+v around %v, want σ %v and the answer inside", *iv, m.MaxRateRPS, sigma)
	}
	if lo := m.MaxRateRPS / (1 + deploy.IntervalZ*sigma); iv.LoRPS < 0.9*lo || iv.LoRPS > 1.1*lo {
		t.Errorf("low end %v, want near max rate / (1 + zσ) = %v", iv.LoRPS, lo)
	}
	for _, r := range d.Rows {
		if r.Role == "probe" || r.TTFT == nil {
			continue
		}
		lo, _, ok, _ := r.Band.Bounds("ttft", "p99")
		if !ok || lo > r.TTFT.P99 {
			t.Errorf("rate %v: TTFT p99 %v, band low end %v (%v)", r.RateRPS, r.TTFT.P99, lo, ok)
		}
	}
	wide := decodeDoc(t, mustRun(t, append(base, "--step-time-sigma", "0.25", "--seeds", "2")...)).Answer.MaxRates[0].Interval
	if wide.Sigma != 0.25 || wide.Seeds != 2 || !(wide.LoRPS < iv.LoRPS && wide.HiRPS > iv.HiRPS) {
		t.Errorf("σ 25%%, 2 seeds: interval %+v, want wider than %+v", *wide, *iv)
	}
	text := mustRun(t, append(base[:len(base)-3], "--interval")...)
	if !strings.Contains(text, "(90% interval ") || !strings.Contains(text, ": model σ 19%, 1 seed) under the SLO") {
		t.Errorf("text answer has no interval:\n%s", text)
	}
	for _, tc := range []struct{ flag, want string }{
		{"--seeds=0", "--seeds 0 is outside [1, 100]"},
		{"--step-time-sigma=0.9", "step-time-sigma 0.9 is outside [0, 0.5]"},
	} {
		if _, errs, code := runCmd(t, "", append(base, tc.flag)...); code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", tc.flag, code, errs, tc.want)
		}
	}
}
