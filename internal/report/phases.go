package report

import (
	"cmp"
	"fmt"
	"math"
	"servesim/internal/render"
	"slices"
	"strings"
	"time"
)

// The ramp and the steady state of the real run (docs/calibrate.md §15): where
// they part is read from the real trace alone, never from the simulation, so
// both sides are graded over the same requests.

// Phase names, in report order.
const (
	PhaseRamp   = "ramp"
	PhaseSteady = "steady"
)

// phaseMetrics are the metrics graded per phase, in report order.
func phaseMetrics() []string { return []string{MetricE2E, MetricTPOT, MetricTTFT} }

// Thresholds of the no-warm-up note (docs/calibrate.md §15).
const (
	coldFactor      = 1.25                  // first TTFT over the reference p50
	coldMinIncrease = 10 * time.Millisecond // and at least this much more
	coldMinRefs     = 3                     // fewest reference requests
)

// PhaseMetric grades one metric over one phase's matched pairs (ours).
type PhaseMetric struct {
	Count    int     `json:"count"`
	MAPE     float64 `json:"mape"`
	RealMean float64 `json:"real_mean"`
	SimMean  float64 `json:"sim_mean"`
	// MeanError is the mean of sim − real in µs over the pairs MAPE uses: the
	// bias, signed (negative under-predicts).
	MeanError float64 `json:"mean_error"`
}

// Phase is the matched requests sent in one phase and their grades.
type Phase struct {
	Requests int                     `json:"requests"`
	Metrics  map[string]*PhaseMetric `json:"metrics"`
}

// Phases splits the graded requests into the ramp and the steady state (ours,
// report key "phases").
type Phases struct {
	// SteadyInFlight is the steady level: the median, over every send of the
	// real run, of the requests in flight at that send (itself included).
	SteadyInFlight float64 `json:"steady_in_flight"`
	// RampEndUs is the send with which the in-flight count first reached
	// SteadyInFlight; requests sent at or before it are the ramp.
	RampEndUs int64     `json:"ramp_end_us"`
	Ramp      Phase     `json:"ramp"`
	Steady    Phase     `json:"steady"`
	NoWarmUp  *NoWarmUp `json:"no_warm_up,omitempty"`
}

// NoWarmUp says that nothing was excluded as warm-up while the run's first
// request was slower than the steady state explains, as a cold server's is.
type NoWarmUp struct {
	FirstRequestID int64   `json:"first_request_id"`
	FirstTTFT      float64 `json:"first_ttft_us"`
	FirstInFlight  int     `json:"first_in_flight"`
	// SteadyTTFTP50 is the real TTFT p50 of the steady-state requests at a
	// similar load and prompt length, ReferenceRequests of them.
	SteadyTTFTP50     float64 `json:"steady_ttft_p50_us"`
	ReferenceRequests int     `json:"reference_requests"`
	// SuggestedWarmupRequests would leave out every request sent before the
	// server's first token.
	SuggestedWarmupRequests int64  `json:"suggested_warmup_requests"`
	Note                    string `json:"note"`
}

// timed is one real row with usable timing, for the phase split.
type timed struct {
	rw     *row
	send   int64
	first  int64
	last   int64
	flight float64 // in flight at its send, itself included
}

// computePhases applies docs/calibrate.md §15 to the matching: the ramp end
// from the in-flight count of every timed real row (warm-up rows loaded the
// server too), then the matched pairs of each phase graded apart.
func computePhases(in *Input, m *matching, s *settings, metrics map[string]*pairs) *Phases {
	run := make([]timed, 0, len(m.rows))
	for i := range m.rows {
		rw := &m.rows[i]
		if validTiming(rw.rec) {
			run = append(run, timed{rw: rw, send: rw.rec.SendTimeUs, first: firstTime(rw.rec, s.firstToken), last: rw.rec.LastChunkTimeUs})
		}
	}
	if len(run) == 0 {
		return nil
	}
	slices.SortFunc(run, func(a, b timed) int {
		if c := cmp.Compare(a.send, b.send); c != 0 {
			return c
		}
		return cmp.Compare(a.rw.rec.RequestID, b.rw.rec.RequestID)
	})
	spans := make([]measured, len(run))
	for i, t := range run {
		spans[i] = measured{send: t.send, last: t.last}
	}
	fl := inflight(spans)
	for i := range run {
		run[i].flight = fl[i]
	}
	p := &Phases{SteadyInFlight: Percentile(fl, 50)}
	for _, t := range run {
		if t.flight >= p.SteadyInFlight {
			p.RampEndUs = t.send
			break
		}
	}
	p.Ramp.Metrics, p.Steady.Metrics = make(map[string]*PhaseMetric), make(map[string]*PhaseMetric)
	for _, name := range phaseMetrics() {
		if pr := metrics[name]; pr != nil {
			p.Ramp.Metrics[name], p.Steady.Metrics[name] = gradePhases(m, pr, p.RampEndUs)
		}
	}
	for i := range m.rows {
		if rw := &m.rows[i]; rw.bucket == bucketMatched && rw.rec.SendTimeUs <= p.RampEndUs {
			p.Ramp.Requests++
		}
	}
	p.Steady.Requests = m.matched - p.Ramp.Requests
	if s.warmupN == 0 && s.warmupDurUs == 0 && in.Header.WarmUpRequests == 0 {
		p.NoWarmUp = noWarmUp(run, p.RampEndUs)
	}
	return p
}

// gradePhases grades one metric's pairs of each phase. The pairs were added
// in trace order from matched rows, so one walk over the rows finds each
// pair's send without an index.
func gradePhases(m *matching, pr *pairs, rampEnd int64) (ramp, steady *PhaseMetric) {
	var acc [2]phaseAcc
	j := 0
	for i := range m.rows {
		if j == pr.len() {
			break
		}
		rec := m.rows[i].rec
		if m.rows[i].bucket != bucketMatched || rec.RequestID != pr.ids[j] {
			continue
		}
		k := 1
		if rec.SendTimeUs <= rampEnd {
			k = 0
		}
		acc[k].add(pr.real[j], pr.sim[j])
		j++
	}
	return acc[0].grade(), acc[1].grade()
}

// phaseAcc sums one phase's pairs for MAPE and the means, over the pairs MAPE uses.
type phaseAcc struct {
	count, n       int
	ape, real, sim float64
}

func (a *phaseAcc) add(r, s float64) {
	a.count++
	if !qualifies(r, s) {
		return
	}
	a.n++
	a.ape += math.Abs(r-s) / r
	a.real += r
	a.sim += s
}

func (a *phaseAcc) grade() *PhaseMetric {
	g := &PhaseMetric{Count: a.count}
	if a.n > 0 {
		n := float64(a.n)
		g.MAPE, g.RealMean, g.SimMean = a.ape/n, a.real/n, a.sim/n
		g.MeanError = g.SimMean - g.RealMean
	}
	return g
}

// noWarmUp compares the first ok request's TTFT with the steady-state
// requests at a load no lighter than its own and a prompt within a factor 2
// of its own: more load does not bring a first token sooner, so a first
// request well above them met a server that was still cold.
func noWarmUp(run []timed, rampEnd int64) *NoWarmUp {
	fi := slices.IndexFunc(run, func(t timed) bool { return t.rw.rec.Status == "ok" })
	if fi < 0 {
		return nil
	}
	f := run[fi]
	steadyFlight := make([]float64, 0, len(run))
	for _, t := range run {
		if t.send > rampEnd && t.rw.rec.Status == "ok" {
			steadyFlight = append(steadyFlight, t.flight)
		}
	}
	if len(steadyFlight) == 0 {
		return nil
	}
	// Similar load: at most twice the first request's, or the lightest
	// quarter of the steady state when even that is heavier.
	maxFlight := math.Max(2*f.flight, Percentile(steadyFlight, 25))
	prompt := float64(realPrompt(f.rw.rec))
	var ref []float64
	for _, t := range run {
		q := float64(realPrompt(t.rw.rec))
		if t.send > rampEnd && t.rw.rec.Status == "ok" && t.flight <= maxFlight && q >= prompt/2 && q <= 2*prompt {
			ref = append(ref, float64(t.first-t.send))
		}
	}
	if len(ref) < coldMinRefs {
		return nil
	}
	ttft, p50 := float64(f.first-f.send), Percentile(ref, 50)
	if ttft < coldFactor*p50 || ttft-p50 < float64(coldMinIncrease.Microseconds()) {
		return nil
	}
	// Everything sent before the server's first token met it cold.
	firstOut := f.first
	for _, t := range run {
		firstOut = min(firstOut, t.first)
	}
	var n int64
	for _, t := range run {
		if t.send <= firstOut {
			n = max(n, t.rw.rec.RequestID+1)
		}
	}
	w := &NoWarmUp{FirstRequestID: f.rw.rec.RequestID, FirstTTFT: ttft, FirstInFlight: int(f.flight),
		SteadyTTFTP50: p50, ReferenceRequests: len(ref), SuggestedWarmupRequests: n}
	w.Note = fmt.Sprintf("no warm-up: the first request (id %d) took %s to its first token at %d in flight, against a steady-state p50 of %s (%d requests at a similar load and prompt); nothing was excluded as warm-up, so consider --warmup-requests %d",
		w.FirstRequestID, fmtDur(ttft), w.FirstInFlight, fmtDur(p50), w.ReferenceRequests, n)
	return w
}

// phaseHeader and phaseRows are the per-phase table of every human output.
func phaseHeader() []string {
	return []string{"phase", "metric", "n", "real mean", "sim mean", "mean error", "MAPE"}
}

func phaseRight() []bool { return []bool{false, false, true, true, true, true, true} }

func (r *Report) phaseRows() [][]string {
	p := r.Phases
	if p == nil {
		return nil
	}
	var rows [][]string
	for _, ph := range []struct {
		name string
		ph   *Phase
	}{{PhaseRamp, &p.Ramp}, {PhaseSteady, &p.Steady}} {
		for _, name := range phaseMetrics() {
			g := ph.ph.Metrics[name]
			switch {
			case g == nil:
				continue
			case g.Count == 0:
				rows = append(rows, []string{ph.name, name, "0", "-", "-", "-", "-"})
				continue
			}
			e := fmtDur(g.MeanError)
			if g.MeanError > 0 {
				e = "+" + e
			}
			rows = append(rows, []string{ph.name, name, fmt.Sprint(g.Count), fmtDur(g.RealMean), fmtDur(g.SimMean), e, fmtPct(g.MAPE)})
		}
	}
	return rows
}

// phasesHeadline says where the ramp ended and how the matched requests split.
func (r *Report) phasesHeadline() string {
	p := r.Phases
	if p == nil {
		return ""
	}
	return fmt.Sprintf("phases: ramp to %s (in flight first reached its median %s), %d ramp and %d steady requests",
		fmtDur(float64(p.RampEndUs)), fmtNum(p.SteadyInFlight), p.Ramp.Requests, p.Steady.Requests)
}

// phasesText is the text block: the headline, the table indented, the note.
func (r *Report) phasesText() string {
	if r.Phases == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(r.phasesHeadline() + "\n")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(table(phaseHeader(), r.phaseRows(), phaseRight()), "\n"), "\n") {
		b.WriteString("  " + line)
	}
	b.WriteString("\n")
	if w := r.Phases.NoWarmUp; w != nil {
		b.WriteString(w.Note + "\n")
	}
	return b.String()
}

// phasesMarkdown is the Markdown section.
func (r *Report) phasesMarkdown(b *strings.Builder) {
	if r.Phases == nil {
		return
	}
	b.WriteString("\n## Ramp and steady state\n\n" + mdEscape(r.phasesHeadline()) + "\n\n")
	mdTable(b, phaseHeader(), r.phaseRows(), phaseRight())
	if w := r.Phases.NoWarmUp; w != nil {
		b.WriteString("\n" + mdEscape(w.Note) + "\n")
	}
}

// htmlPhases is the page's small per-phase table.
func (r *Report) htmlPhases(b *strings.Builder) {
	if r.Phases == nil {
		return
	}
	fmt.Fprintf(b, "<h2>Ramp and steady state</h2>\n<p>%s</p>\n", render.Esc(r.phasesHeadline()))
	render.Table(b, phaseHeader(), r.phaseRows(), phaseRight(), false)
	if w := r.Phases.NoWarmUp; w != nil {
		fmt.Fprintf(b, "<p>%s</p>\n", render.Esc(w.Note))
	}
}
