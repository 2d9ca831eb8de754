package fidelity

import (
	"fmt"
	"strings"

	"servesim/internal/report"
)

// hasUnfitted says whether any run carries its unfitted replay.
func (r *Report) hasUnfitted() bool {
	for _, run := range r.Runs {
		if run.Unfitted != nil {
			return true
		}
	}
	return false
}

// writeUnfitted renders the runs replayed with the physics defaults: per
// run with the goals, by load, and per GPU beside the fitted replays.
func writeUnfitted(b *strings.Builder, r *Report, t Targets) {
	if !r.hasUnfitted() {
		return
	}
	b.WriteString("\n## Unfitted defaults\n\n")
	fmt.Fprintf(b, "Each run replayed once more with no fit at all: the physics model's defaults for the run's GPU (shares\n"+
		"of its data-sheet peaks and µs costs, latency.PhysicsDefaultBeta, and the default α, whose 1 ms from arrival\n"+
		"to the scheduler's queue the fitted replays do not have), no kernel profile and no universal terms: what a\n"+
		"planner gets for a GPU and a model nobody measured. Same clock and statistics as above. The goals for such a\n"+
		"prediction, every run: E2E MAPE ≤ %s and TTFT MAPE ≤ %s; reported, not enforced (the regression test only\n"+
		"keeps the figures from getting worse).\n\n", pct(t.UnfittedE2EMAPE), pct(t.UnfittedTTFTMAPE))
	fmt.Fprintf(b, "| run | TTFT mean err | TTFT p99 err | TTFT MAPE | TPOT mean err | E2E mean err | E2E p99 err | E2E MAPE | E2E ≤ %s | TTFT ≤ %s |\n",
		pct(t.UnfittedE2EMAPE), pct(t.UnfittedTTFTMAPE))
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	// The mean's goals are met when every run's are, as in Targets.
	allE2E, allTTFT := true, true
	row := func(name string, m map[string]Metrics, okE2E, okTTFT bool) {
		tt, tp, e := m[report.MetricTTFT], m["tpot"], m[report.MetricE2E]
		okE2E, okTTFT = okE2E && e.MAPE <= t.UnfittedE2EMAPE, okTTFT && tt.MAPE <= t.UnfittedTTFTMAPE
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, signed(tt.MeanErr), signed(tt.P99Err), pct(tt.MAPE),
			signed(tp.MeanErr), signed(e.MeanErr), signed(e.P99Err), pct(e.MAPE), yes(okE2E), yes(okTTFT))
		allE2E, allTTFT = allE2E && okE2E, allTTFT && okTTFT
	}
	var runs []RunReport // those with an unfitted replay
	for _, run := range r.Runs {
		if run.Unfitted != nil {
			runs = append(runs, run)
			row(run.Name, run.Unfitted.Metrics, true, true)
		}
	}
	row("mean over runs (goals: every run)", r.UnfittedOverall, allE2E, allTTFT)

	b.WriteString("\n### Unfitted defaults by load\n\nThe loads as in *By load* above, the unfitted replays' errors.\n\n")
	regimeTables(b, r.UnfittedRegimes, runs, func(run RunReport) map[Regime]RegimeErrors { return run.Unfitted.Regimes })

	b.WriteString("\n### Per GPU\n\nThe runs of each GPU pooled, every request weighing the same: the held-out fitted replays beside\n" +
		"the unfitted ones.\n\n")
	b.WriteString("| GPU | runs | requests | fitted TTFT MAPE | fitted E2E MAPE | unfitted TTFT MAPE | unfitted E2E MAPE |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range r.ByGPU {
		unfitted := "n/a | n/a"
		if g.Unfitted.N > 0 {
			unfitted = pct(g.Unfitted.TTFTMAPE) + " | " + pct(g.Unfitted.E2EMAPE)
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s |\n", g.GPU, g.Runs, g.Fitted.N, pct(g.Fitted.TTFTMAPE), pct(g.Fitted.E2EMAPE), unfitted)
	}
}

// writeIntervals renders the coverage of the 90% intervals of both
// replays: per run and pooled, then by load.
func writeIntervals(b *strings.Builder, r *Report, t Targets) {
	if !r.hasUnfitted() {
		return
	}
	b.WriteString("\n## Intervals\n\n")
	fmt.Fprintf(b, "Each replay, fitted and unfitted, runs twice more with every step time × (1 − zσ) and × (1 + zσ), z = 1.645,\n"+
		"the ends of a 90%% interval, as `replay --interval` runs them (queueing and token overheads unscaled), and\n"+
		"calibrate's own coverage grades the run: a request is inside when its real value lies between the least and\n"+
		"the greatest of its three simulated values, a percentile when the real run's lies between the three replays'.\n"+
		"σ of a fitted replay is what `calibrate fit` would record for its fit, √(π/2) × the larger of the E2E and\n"+
		"TTFT MAPE of the runs it was trained on (never the held-out run), over all their requests and over each\n"+
		"load of 30 or more their replays met, the largest; of an unfitted one the same rule over the other runs'\n"+
		"unfitted replays (over all of them it gives the physics model's documented default, docs/simulator.md\n"+
		"§8.7). The goal: at least %s of the real values inside. Requests\n"+
		"inside, below the fast-step run and above the slow-step run; percentiles p50 / p90 / p99 inside or out\n"+
		"(pooled: the runs inside).\n\n", pct(t.Coverage))
	b.WriteString("| run | replay | σ | TTFT inside | TTFT below / above | TTFT p50 / p90 / p99 | E2E inside | E2E below / above | E2E p50 / p90 / p99 | goal met |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---:|---:|---|---|\n")
	paths := []struct {
		name   string
		of     func(RunReport) *Interval
		pooled *PooledCoverage
	}{
		{"fitted", func(run RunReport) *Interval { return run.Interval }, r.Coverage},
		{"unfitted", func(run RunReport) *Interval {
			if run.Unfitted == nil {
				return nil
			}
			return run.Unfitted.Interval
		}, r.UnfittedCoverage},
	}
	for _, run := range r.Runs {
		for _, p := range paths {
			iv := p.of(run)
			if iv == nil || iv.Coverage == nil {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %s |", run.Name, p.name, pct(iv.Sigma))
			met := true
			for _, name := range CoverageMetrics() {
				var c Count
				c.addRequests(iv.Coverage.Metrics[name])
				met = met && c.Share() >= t.Coverage
				var ps []string
				if mc := iv.Coverage.Metrics[name]; mc != nil {
					for _, pc := range mc.Percentiles {
						ps = append(ps, map[bool]string{true: "in", false: "out"}[pc.Inside])
					}
				}
				fmt.Fprintf(b, " %s (%d) | %d / %d | %s |", pct(c.Share()), c.N, c.Below, c.Above, strings.Join(ps, " / "))
			}
			fmt.Fprintf(b, " %s |\n", yes(met))
		}
	}
	for _, p := range paths {
		if p.pooled == nil || p.pooled.Runs == 0 {
			continue
		}
		fmt.Fprintf(b, "| all runs | %s | |", p.name)
		met := true
		for _, name := range CoverageMetrics() {
			c := p.pooled.Requests[name]
			met = met && c.Share() >= t.Coverage
			var ps []string
			for _, st := range CoverageStats() {
				ps = append(ps, fmt.Sprint(p.pooled.Percentiles[name+" "+st].Inside))
			}
			fmt.Fprintf(b, " %s (%d) | %d / %d | %s of %d |", pct(c.Share()), c.N, c.Below, c.Above, strings.Join(ps, " / "), p.pooled.Runs)
		}
		fmt.Fprintf(b, " %s |\n", yes(met))
	}
	writeIntervalRegimes(b, r, paths[0].of, paths[1].of)
}

// writeIntervalRegimes renders the per-request coverage by the load each
// request met: pooled, then run by run.
func writeIntervalRegimes(b *strings.Builder, r *Report, fitted, unfitted func(RunReport) *Interval) {
	b.WriteString("\n### Intervals by load\n\nThe loads as in *By load* above; each class's requests graded on their own (requests in\n" +
		"parentheses).\n\n")
	b.WriteString("| load | replay | TTFT inside | E2E inside |\n|---|---|---:|---:|\n")
	for _, g := range Regimes() {
		for _, p := range []struct {
			name string
			pc   *PooledCoverage
		}{{"fitted", r.Coverage}, {"unfitted", r.UnfittedCoverage}} {
			if p.pc == nil {
				continue
			}
			m := p.pc.Regimes[g]
			t, e := m[report.MetricTTFT], m[report.MetricE2E]
			fmt.Fprintf(b, "| %s | %s | %s (%d) | %s (%d) |\n", g, p.name, pct(t.Share()), t.N, pct(e.Share()), e.N)
		}
	}
	b.WriteString("\n| run | replay |")
	for _, g := range Regimes() {
		fmt.Fprintf(b, " %s TTFT | %s E2E |", g, g)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|---:|", len(Regimes())) + "\n")
	for _, run := range r.Runs {
		for _, p := range []struct {
			name string
			iv   *Interval
		}{{"fitted", fitted(run)}, {"unfitted", unfitted(run)}} {
			if p.iv == nil {
				continue
			}
			fmt.Fprintf(b, "| %s | %s |", run.Name, p.name)
			for _, g := range Regimes() {
				cov, ok := p.iv.Regimes[g]
				if !ok {
					b.WriteString(" — | — |")
					continue
				}
				var t, e Count
				t.addRequests(cov.Metrics[report.MetricTTFT])
				e.addRequests(cov.Metrics[report.MetricE2E])
				fmt.Fprintf(b, " %s (%d) | %s |", pct(t.Share()), t.N, pct(e.Share()))
			}
			b.WriteString("\n")
		}
	}
}
