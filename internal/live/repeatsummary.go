package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"servesim/internal/noise"
	"servesim/internal/report"
)

// repeatMetric is one figure each run's summary states, read from its
// tally; ok is false when the run did not measure it (no streamed
// request has a TPOT).
type repeatMetric struct {
	key, label string
	value      func(t *tally) (v float64, ok bool)
}

// repeatMetrics are the figures of the end summary the repeats state the
// noise of: TTFT, TPOT, ITL and E2E latency (mean, p50, p90, p99, ms), the
// request, output-token and total-token throughputs and, with --goodput,
// the goodput.
func repeatMetrics(withGoodput bool) []repeatMetric {
	var ms []repeatMetric
	lat := func(key, label string, xs func(t *tally) []float64, mean func(t *tally) float64) {
		for _, s := range []struct {
			stat, label string
			p           float64
		}{{"mean", "Mean", 0}, {"p50", "Median", 50}, {"p90", "P90", 90}, {"p99", "P99", 99}} {
			p := s.p
			ms = append(ms, repeatMetric{key: key + "_" + s.stat + "_ms", label: s.label + " " + label + " (ms)",
				value: func(t *tally) (float64, bool) {
					v := xs(t)
					if len(v) == 0 {
						return 0, false
					}
					if p == 0 {
						return mean(t), true
					}
					return report.Percentile(v, p), true
				}})
		}
	}
	meanOf := func(xs func(t *tally) []float64) func(t *tally) float64 {
		return func(t *tally) float64 { return report.Mean(xs(t)) }
	}
	ttft := func(t *tally) []float64 { return t.ttft }
	tpot := func(t *tally) []float64 { return t.tpot }
	itl := func(t *tally) []float64 { v, _ := t.itlMs(); return v }
	e2e := func(t *tally) []float64 { return t.e2el }
	lat("ttft", "TTFT", ttft, meanOf(ttft))
	lat("tpot", "TPOT", tpot, meanOf(tpot))
	lat("itl", "ITL", itl, func(t *tally) float64 { _, m := t.itlMs(); return m })
	lat("e2el", "E2EL", e2e, meanOf(e2e))
	perS := func(n func(t *tally) int64) func(t *tally) (float64, bool) {
		return func(t *tally) (float64, bool) {
			if t.lastDoneUS <= 0 {
				return 0, false
			}
			return float64(n(t)) / (float64(t.lastDoneUS) / 1e6), true
		}
	}
	ms = append(ms,
		repeatMetric{"request_throughput", "Request throughput (req/s)", perS(func(t *tally) int64 { return t.ok })},
		repeatMetric{"output_throughput", "Output token throughput (tok/s)", perS(func(t *tally) int64 { return t.outputTokens })},
		repeatMetric{"total_token_throughput", "Total Token throughput (tok/s)", perS(func(t *tally) int64 { return t.inputTokens + t.outputTokens })})
	if withGoodput {
		ms = append(ms, repeatMetric{"request_goodput", "Request goodput (req/s)", perS(func(t *tally) int64 { return t.goodputOK })})
	}
	return ms
}

// RepeatSummary is the JSON of observe --repeat (--repeat-output): per
// server, its runs and, for every metric, the runs' values and their
// noise.Estimate.
type RepeatSummary struct {
	Command     string              `json:"command"` // "observe repeat"
	Repeats     int                 `json:"repeats"` // runs asked for, per server
	Confidence  float64             `json:"confidence"`
	EnoughRule  string              `json:"enough_rule"`
	Interrupted bool                `json:"interrupted"`
	Servers     []RepeatServerStats `json:"servers"`
}

// RepeatServerStats is one server's repeats.
type RepeatServerStats struct {
	Server    string          `json:"server,omitempty"` // "a" or "b" with --url-b
	URL       string          `json:"url"`              // credentials removed
	Model     string          `json:"model"`
	Runs      []RepeatRunFile `json:"runs"`
	Metrics   []RepeatStat    `json:"metrics"`
	Enough    bool            `json:"enough"`               // every metric's interval meets the rule
	NotEnough []string        `json:"not_enough,omitempty"` // the metrics whose do not
	// Needed is about how many runs would meet the rule for every metric,
	// (t·SD / (EnoughHalfWidth·|mean|))² at the spread measured; 0 when the
	// runs say nothing of it (fewer than two, or a mean of 0).
	Needed int `json:"repeats_needed,omitempty"`
}

// RepeatRunFile is one whole run: its number and its trace's prefix.
type RepeatRunFile struct {
	Repeat int    `json:"repeat"`
	Trace  string `json:"trace"`
}

// RepeatStat is one metric over the runs: each run's value, in run order,
// and their estimate. A metric some run did not measure has no values.
type RepeatStat struct {
	Metric string    `json:"metric"`
	Values []float64 `json:"values"`
	noise.Estimate
}

// summarize is the repeats' summary.
func summarize(cfg *config, servers []*repeatServer, interrupted bool) *RepeatSummary {
	sum := &RepeatSummary{Command: "observe repeat", Repeats: cfg.repeat.n, Confidence: noise.Level,
		EnoughRule:  fmt.Sprintf("the 95%% interval's half-width is within %g%% of the mean", 100*noise.EnoughHalfWidth),
		Interrupted: interrupted}
	for _, srv := range servers {
		st := RepeatServerStats{Server: srv.name, URL: cfg.redactor().Text(srv.cfg.url), Model: srv.s.model, Enough: true,
			Runs: []RepeatRunFile{}, Metrics: []RepeatStat{}}
		for _, r := range srv.runs {
			st.Runs = append(st.Runs, RepeatRunFile{Repeat: r.index, Trace: r.trace})
		}
		for _, m := range repeatMetrics(cfg.goodput.set()) {
			s := RepeatStat{Metric: m.key, Values: []float64{}}
			for _, r := range srv.runs {
				v, ok := m.value(r.tally)
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					s.Values = []float64{}
					break
				}
				s.Values = append(s.Values, v)
			}
			if len(s.Values) == 0 {
				st.Metrics = append(st.Metrics, s)
				continue
			}
			s.Estimate = noise.Of(s.Values)
			if !s.Enough {
				st.Enough = false
				st.NotEnough = append(st.NotEnough, m.key)
			}
			st.Needed = max(st.Needed, s.Needed())
			st.Metrics = append(st.Metrics, s)
		}
		sum.Servers = append(sum.Servers, st)
	}
	return sum
}

// writeRepeats writes the summary of the whole runs: text on the summary's
// stream (stderr, or stdout with --summary) and JSON at --repeat-output.
func writeRepeats(cfg *config, servers []*repeatServer, interrupted bool, stdio IO) error {
	sum := summarize(cfg, servers, interrupted)
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sum); err != nil {
		return err
	}
	if err := writeWhole(cfg.repeat.output, "--repeat-output", js.Bytes(), stdio); err != nil {
		return err
	}
	to := stdio.Err
	if cfg.summaryTo == "stdout" {
		to = stdio.Out
	}
	return sum.writeText(to, repeatMetrics(cfg.goodput.set()))
}

// writeText renders the summary as a table per server, then the verdict
// on N.
func (sum *RepeatSummary) writeText(w io.Writer, metrics []repeatMetric) error {
	var b strings.Builder
	for _, st := range sum.Servers {
		title := fmt.Sprintf(" Repeats: %d whole runs ", len(st.Runs))
		if st.Server != "" {
			title = fmt.Sprintf(" Repeats of server %s: %d whole runs ", strings.ToUpper(st.Server), len(st.Runs))
		}
		pad := max(76-len(title), 2)
		fmt.Fprintf(&b, "%s%s%s\n", strings.Repeat("=", pad/2), title, strings.Repeat("=", pad-pad/2))
		fmt.Fprintf(&b, "%-34s %12s %25s %8s  %s\n", "Metric", "Mean", "95% CI", "CV", "N enough")
		for i, s := range st.Metrics {
			if len(s.Values) == 0 {
				fmt.Fprintf(&b, "%-34s %12s\n", metrics[i].label, "not measured")
				continue
			}
			ci, cv, ok := "(one run)", "", "no"
			if s.N > 1 {
				ci = fmt.Sprintf("%.2f–%.2f", s.CILo, s.CIHi)
				cv = "unbounded"
				if s.CV != nil {
					cv = fmt.Sprintf("%.1f%%", 100**s.CV)
				}
			}
			if s.Enough {
				ok = "yes"
			}
			fmt.Fprintf(&b, "%-34s %12.2f %25s %8s  %s\n", metrics[i].label, s.Mean, ci, cv, ok)
		}
		b.WriteString(st.verdict(sum.EnoughRule) + "\n")
	}
	if sum.Interrupted {
		b.WriteString("Interrupted: the summary covers the whole runs before the interrupt.\n")
	}
	b.WriteString(strings.Repeat("=", 76) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// verdict is the line that says whether N was enough.
func (st *RepeatServerStats) verdict(rule string) string {
	n := len(st.Runs)
	switch {
	case n < 2:
		return fmt.Sprintf("N = %d: one run states no interval; repeat at least twice (--repeat 3 or more).", n)
	case st.Enough:
		return fmt.Sprintf("N = %d was enough: for every metric %s.", n, rule)
	}
	s := fmt.Sprintf("N = %d was not enough for %d metrics (%s): %s.", n, len(st.NotEnough), rule, strings.Join(st.NotEnough, ", "))
	if st.Needed > n {
		s += fmt.Sprintf(" About %d runs would be, at the spread measured.", st.Needed)
	}
	return s
}
