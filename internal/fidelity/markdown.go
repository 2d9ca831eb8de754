package fidelity

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Targets are the held-out goals of issue 9, checked in the overall table.
type Targets struct {
	E2EMAPE      float64 // ≤
	TPOTMeanErr  float64 // |mean error| ≤, every run
	TTFTMAPE     float64 // ≤
	E2EPearsonR  float64 // ≥
	AnchorE2E    string  // what LLMServingSim and BLIS report, for the reader
	AnchorTTFT   string
	AnchorSource string
}

// DefaultTargets are the targets and anchors.
func DefaultTargets() Targets {
	return Targets{E2EMAPE: 0.05, TPOTMeanErr: 0.03, TTFTMAPE: 0.10, E2EPearsonR: 0.95,
		AnchorE2E:    "LLMServingSim: E2E means within 2.2%; BLIS: median E2E error 6.7%",
		AnchorTTFT:   "LLMServingSim: TTFT means +1.3% to −13.6%; BLIS: median TTFT error 17.6%",
		AnchorSource: "LLMServingSim's validation summaries of these runs; BLIS on its own H100 suite"}
}

// Met reports each target over the report: E2E MAPE and TTFT MAPE on the
// overall (mean over runs) figures, the TPOT mean error on every run, and
// the E2E Pearson r on the overall figure.
func (t Targets) Met(r *Report) map[string]bool {
	tpot := true
	for _, run := range r.Runs {
		if m, ok := run.Metrics["tpot"]; ok && math.Abs(m.MeanErr) > t.TPOTMeanErr {
			tpot = false
		}
	}
	return map[string]bool{
		"e2e_mape":      r.Overall["e2e"].MAPE <= t.E2EMAPE,
		"tpot_mean":     tpot,
		"ttft_mape":     r.Overall["ttft"].MAPE <= t.TTFTMAPE,
		"e2e_pearson_r": r.Overall["e2e"].PearsonR >= t.E2EPearsonR,
	}
}

// WriteMarkdown renders the report as GitHub Markdown: per-run and overall
// tables of every metric, the targets, where the error comes from, and the
// coefficients each held-out run was predicted with.
func WriteMarkdown(w io.Writer, r *Report, t Targets) error {
	var b strings.Builder
	b.WriteString("# Simulator fidelity on real vLLM runs (held out)\n\n")
	b.WriteString("Each run is replayed with its own deployment (from its meta.json), its own kernel profile\n" +
		"(LLMServingSim's layerwise profiler, not the run), and host, link and queue coefficients fitted on\n" +
		"the **other** runs only. Errors are sim − real, as a share of real; MAPE and Pearson r are per\n" +
		"request; TTFT and E2E start when vLLM queued the request; TPOT = (E2E − TTFT)/(output − 1).\n\n")
	b.WriteString("## Per run\n\n")
	b.WriteString("| run | metric | n | real mean | sim mean | mean err | p50 err | p90 err | p99 err | MAPE | r |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Runs {
		for _, name := range MetricNames() {
			m, ok := run.Metrics[name]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %.3f |\n", run.Name, name, m.N,
				duration(m.RealMean), duration(m.SimMean), signed(m.MeanErr), signed(m.P50Err), signed(m.P90Err),
				signed(m.P99Err), pct(m.MAPE), m.PearsonR)
		}
	}
	b.WriteString("\n## Overall (mean over runs)\n\n")
	b.WriteString("| metric | mean err | p50 err | p90 err | p99 err | MAPE | r |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, name := range MetricNames() {
		m, ok := r.Overall[name]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.3f |\n", name, signed(m.MeanErr), signed(m.P50Err),
			signed(m.P90Err), signed(m.P99Err), pct(m.MAPE), m.PearsonR)
	}
	met := t.Met(r)
	worstTPOT := 0.0
	for _, run := range r.Runs {
		worstTPOT = math.Max(worstTPOT, math.Abs(run.Metrics["tpot"].MeanErr))
	}
	b.WriteString("\n## Targets\n\n| target | goal | held out | met |\n|---|---:|---:|---|\n")
	fmt.Fprintf(&b, "| E2E MAPE | ≤ %s | %s | %s |\n", pct(t.E2EMAPE), pct(r.Overall["e2e"].MAPE), yes(met["e2e_mape"]))
	fmt.Fprintf(&b, "| TPOT mean error, worst run | ≤ %s | %s | %s |\n", pct(t.TPOTMeanErr), pct(worstTPOT), yes(met["tpot_mean"]))
	fmt.Fprintf(&b, "| TTFT MAPE | ≤ %s | %s | %s |\n", pct(t.TTFTMAPE), pct(r.Overall["ttft"].MAPE), yes(met["ttft_mape"]))
	fmt.Fprintf(&b, "| E2E Pearson r | ≥ %.2f | %.3f | %s |\n", t.E2EPearsonR, r.Overall["e2e"].PearsonR, yes(met["e2e_pearson_r"]))
	var over []string
	for _, run := range r.Runs {
		if m := run.Metrics["ttft"]; m.MAPE > t.TTFTMAPE {
			over = append(over, fmt.Sprintf("%s (TTFT MAPE %s)", run.Name, pct(m.MAPE)))
		}
		if m := run.Metrics["e2e"]; m.MAPE > t.E2EMAPE {
			over = append(over, fmt.Sprintf("%s (E2E MAPE %s)", run.Name, pct(m.MAPE)))
		}
	}
	if len(over) > 0 {
		fmt.Fprintf(&b, "\nRuns above a target on their own: %s.\n", strings.Join(over, ", "))
	}
	fmt.Fprintf(&b, "\nAnchors (%s): %s; %s.\n", t.AnchorSource, t.AnchorE2E, t.AnchorTTFT)

	b.WriteString("\n## Where the error comes from\n\n")
	b.WriteString("Means per request, real / sim. *Queue* is first schedule − queued (the sim's includes Q, the\n" +
		"half step that stands for vLLM's asynchronous scheduling, so its split with *to first token* differs\n" +
		"from vLLM's, where the next step is already scheduled); *to first token* is TTFT − queue; *batch* is\n" +
		"the time-averaged number of requests between their first schedule and last token (lower when KV\n" +
		"blocks, not max_num_seqs, bound the engine); preemptions are the simulator's (vLLM's are not recorded);\n" +
		"the last two columns split the TTFT MAPE between requests that waited in vLLM's queue for more than a\n" +
		"mean step (queueing dominates their TTFT) and the others (step times do), with their counts.\n\n")
	b.WriteString("| run | queue | to first token | TPOT | E2E − TTFT error | batch | sim preemptions | TTFT MAPE, queued | TTFT MAPE, others |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Runs {
		s := run.Sources
		fmt.Fprintf(&b, "| %s | %s / %s | %s / %s | %s / %s | %s | %.1f / %.1f | %d | %s (%d) | %s (%d) |\n", run.Name,
			duration(s.RealQueueUs), duration(s.SimQueueUs), duration(s.RealPrefillUs), duration(s.SimPrefillUs),
			duration(s.RealTPOTUs), duration(s.SimTPOTUs), signed(decodeErr(run)), s.RealBatch, s.SimBatch, s.SimPreemptions,
			pct(s.QueuedTTFTMAPE), s.QueuedN, pct(s.OtherTTFTMAPE), s.OtherN)
	}

	b.WriteString("\n## Coefficients\n\n")
	b.WriteString("Universal terms, fitted on the other runs for each held-out run (host µs per step, per scheduled\n" +
		"request, per prefill request; link: HBM/link speed ratio and µs per collective; Q as a share of the\n" +
		"mean step), and how well the kernel fit reproduces the run's profile (RMS error relative to the step).\n\n")
	b.WriteString("| held out | model | GPU | TP×DP | host step | host seq | host prefill | link ratio | link op | Q steps | train objective | kernel fit RMS |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, run := range r.Runs {
		u := run.Universal
		var groups []string
		for g, st := range run.Kernels {
			groups = append(groups, fmt.Sprintf("%s %s", g, pct(st.RMSRel)))
		}
		slices.Sort(groups)
		fmt.Fprintf(&b, "| %s | %s | %s | %d×%d | %.0f | %.1f | %.1f | %.1f | %.1f | %.2f | %.3f | %s |\n", run.Name, run.Model, run.GPU,
			run.TP, run.DP, u.HostStepUs, u.HostSeqUs, u.HostPrefillUs, u.LinkBytes, u.LinkOpUs, u.QueueSteps,
			run.Fit.Objective, strings.Join(groups, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// decodeErr is the relative error of the mean E2E − TTFT (the decode phase).
func decodeErr(run RunReport) float64 {
	e, t := run.Metrics["e2e"], run.Metrics["ttft"]
	real := e.RealMean - t.RealMean
	if real <= 0 {
		return 0
	}
	return (e.SimMean - t.SimMean - real) / real
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func signed(f float64) string { return fmt.Sprintf("%+.1f%%", 100*f) }

// duration shows µs with three significant digits in µs, ms or s.
func duration(us float64) string {
	a := math.Abs(us)
	switch {
	case a >= 1e6:
		return sig3(us/1e6) + " s"
	case a >= 1e3:
		return sig3(us/1e3) + " ms"
	}
	return sig3(us) + " µs"
}

func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
