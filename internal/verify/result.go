package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"servesim/internal/calibrate"
	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/render"
	"servesim/internal/sweep"
)

// SharePrecision is the relative precision this check states for a fitted
// GPU share (FLOP/s or bandwidth) from its short probes: a share the
// plan mis-set is recovered within it.
const SharePrecision = 0.10

// Result is the page of a verification.
type Result struct {
	Plan  string `json:"plan"`
	Model string `json:"model"`
	GPU   string `json:"gpu"`
	SLO   string `json:"slo"`
	// PredictedMaxRateRPS is the plan's answer; MeasuredMaxRateRPS the
	// highest probed rate that met the SLO on the server (0: none did) and
	// MeasuredFailRateRPS the lowest that failed above it (0: none did);
	// CorrectedMaxRateRPS the plan's search again on the fitted model.
	PredictedMaxRateRPS float64 `json:"predicted_max_rate_rps"`
	PredictedKneeRPS    float64 `json:"predicted_knee_rps,omitempty"`
	MeasuredMaxRateRPS  float64 `json:"measured_max_rate_rps"`
	MeasuredFailRateRPS float64 `json:"measured_fail_rate_rps,omitempty"`
	CorrectedMaxRateRPS float64 `json:"corrected_max_rate_rps"`
	CorrectedKneeRPS    float64 `json:"corrected_knee_rps,omitempty"`
	// Error is predicted / corrected − 1: how far the plan was off.
	Error          float64    `json:"plan_error"`
	SharePrecision float64    `json:"share_precision"`
	Holds          bool       `json:"plan_holds"`
	Verdict        string     `json:"verdict"`
	Probes         []Probe    `json:"probes"`
	Coefficients   []Coef     `json:"coefficients"`
	FitTTFTMAPE    [2]float64 `json:"fit_ttft_mape"` // the plan's model, the fitted one, on the probes
	FitE2EMAPE     [2]float64 `json:"fit_e2e_mape"`
	Traces         []string   `json:"traces"`
}

// Probe is one probed rate on the server.
type Probe struct {
	RateRPS       float64  `json:"rate_rps"`
	Status        string   `json:"status"`
	SLOMet        bool     `json:"slo_met"`
	ThroughputRPS float64  `json:"throughput_rps"`
	LatencyMs     *float64 `json:"latency_ms,omitempty"` // the SLO's primary latency
	Failures      []string `json:"slo_failures,omitempty"`
}

// Coef is one latency-model coefficient, as planned and as fitted.
type Coef struct {
	Name    string  `json:"name"`
	Planned float64 `json:"planned"`
	Fitted  float64 `json:"fitted"`
}

func newResult(c Config, p *plan, dep deploy.Config, probes *sweep.Doc, fitted calibrate.Fitted, again *sweep.Doc) *Result {
	r := &Result{Plan: c.Plan, Model: dep.Model, GPU: dep.GPU, SLO: p.doc.SLO, PredictedMaxRateRPS: p.answer.MaxRateRPS,
		PredictedKneeRPS: p.kneeRPS, SharePrecision: SharePrecision, Traces: probeTraces(c.Prefix, c.probeRates(p.answer.MaxRateRPS))}
	metric, stat := p.slo.Primary()
	for _, row := range probes.Rows {
		pr := Probe{RateRPS: row.RateRPS, Status: row.Status, SLOMet: row.Met(), ThroughputRPS: row.ThroughputRPS, Failures: row.SLOFailures}
		if v, ok := row.Latency(metric, stat); ok {
			pr.LatencyMs = &v
		}
		r.Probes = append(r.Probes, pr)
	}
	for _, pr := range r.Probes {
		if pr.SLOMet && pr.RateRPS > r.MeasuredMaxRateRPS {
			r.MeasuredMaxRateRPS = pr.RateRPS
		}
	}
	for _, pr := range r.Probes {
		if !pr.SLOMet && pr.RateRPS > r.MeasuredMaxRateRPS && (r.MeasuredFailRateRPS == 0 || pr.RateRPS < r.MeasuredFailRateRPS) {
			r.MeasuredFailRateRPS = pr.RateRPS
		}
	}
	if a := again.Answer; a != nil && len(a.MaxRates) == 1 {
		r.CorrectedMaxRateRPS = a.MaxRates[0].MaxRateRPS
		for _, k := range a.Knees {
			r.CorrectedKneeRPS = k.RateRPS
		}
	}
	res := fitted.Result
	names := latency.PhysicsBetaNames()
	for i, b := range res.Beta {
		name := fmt.Sprintf("beta[%d]", i)
		if strings.EqualFold(string(res.Kind), string(latency.KindPhysics)) && i < len(names) {
			name = names[i]
		}
		start := math.NaN()
		if i < len(res.StartBeta) {
			start = res.StartBeta[i]
		}
		if start != b {
			r.Coefficients = append(r.Coefficients, Coef{Name: name, Planned: start, Fitted: b})
		}
	}
	r.FitTTFTMAPE = [2]float64{res.Start.TTFTMAPE, res.Fit.TTFTMAPE}
	r.FitE2EMAPE = [2]float64{res.Start.E2EMAPE, res.Fit.E2EMAPE}
	r.verdict()
	return r
}

// verdict judges the plan: it holds when the corrected answer is within
// the stated precision of the predicted one and no probe contradicts it.
func (r *Result) verdict() {
	if r.CorrectedMaxRateRPS > 0 {
		r.Error = r.PredictedMaxRateRPS/r.CorrectedMaxRateRPS - 1
	}
	contradicted := (r.MeasuredFailRateRPS > 0 && r.MeasuredFailRateRPS <= r.PredictedMaxRateRPS) ||
		r.MeasuredMaxRateRPS > r.PredictedMaxRateRPS*(1+SharePrecision)
	r.Holds = r.CorrectedMaxRateRPS > 0 && math.Abs(r.Error) <= SharePrecision && !contradicted
	switch {
	case r.CorrectedMaxRateRPS == 0:
		r.Verdict = fmt.Sprintf("the plan does not hold: on the fitted model no rate meets %s (the plan said %s req/s)", r.SLO, render.Sig3(r.PredictedMaxRateRPS))
	case r.Holds:
		r.Verdict = fmt.Sprintf("the plan holds: %s req/s under %s, corrected %s req/s (%+.0f%%)", render.Sig3(r.PredictedMaxRateRPS), r.SLO,
			render.Sig3(r.CorrectedMaxRateRPS), 100*(r.CorrectedMaxRateRPS/r.PredictedMaxRateRPS-1))
	default:
		r.Verdict = fmt.Sprintf("the plan does not hold: it said %s req/s under %s; the server sustains %s req/s (corrected answer, %+.0f%%)",
			render.Sig3(r.PredictedMaxRateRPS), r.SLO, render.Sig3(r.CorrectedMaxRateRPS), 100*(r.CorrectedMaxRateRPS/r.PredictedMaxRateRPS-1))
	}
}

// write renders the result in format.
func write(w io.Writer, format string, r *Result) error {
	var text string
	switch format {
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		text = string(b) + "\n"
	case "markdown":
		text = r.markdown()
	case "html":
		text = r.html()
	default:
		text = r.text()
	}
	_, err := io.WriteString(w, text)
	return err
}

// tables are the page's two tables: capacities and coefficients.
func (r *Result) tables() (capHead []string, capRows [][]string, coefHead []string, coefRows [][]string) {
	capHead = []string{"capacity under " + r.SLO, "req/s"}
	rate := func(x float64) string {
		if x == 0 {
			return "none"
		}
		return render.Sig3(x)
	}
	capRows = [][]string{{"predicted (the plan)", rate(r.PredictedMaxRateRPS)}}
	measured := "≥ " + rate(r.MeasuredMaxRateRPS)
	if r.MeasuredMaxRateRPS == 0 {
		measured = "< lowest probe"
	}
	if r.MeasuredFailRateRPS > 0 {
		measured += ", < " + rate(r.MeasuredFailRateRPS)
	}
	capRows = append(capRows, []string{"measured (probes)", measured}, []string{"corrected (fitted model)", rate(r.CorrectedMaxRateRPS)})
	if r.PredictedKneeRPS > 0 || r.CorrectedKneeRPS > 0 {
		capRows = append(capRows, []string{"knee of the latency curve: plan, fitted", rate(r.PredictedKneeRPS) + ", " + rate(r.CorrectedKneeRPS)})
	}
	for _, p := range r.Probes {
		lat := "-"
		if p.LatencyMs != nil {
			lat = render.Sig3(*p.LatencyMs) + " ms"
		}
		met := "meets the SLO"
		if !p.SLOMet {
			why := p.Failures
			if p.Status != sweep.StatusOK && !slices.Contains(why, p.Status) {
				why = append([]string{p.Status}, why...)
			}
			met = "fails: " + strings.Join(why, "; ")
		}
		capRows = append(capRows, []string{fmt.Sprintf("probe at %s req/s: %s, %s", render.Sig3(p.RateRPS), lat, met), render.Sig3(p.ThroughputRPS)})
	}
	coefHead = []string{"coefficient", "plan", "fitted", "change"}
	for _, c := range r.Coefficients {
		coefRows = append(coefRows, []string{c.Name, render.Sig3(c.Planned), render.Sig3(c.Fitted), fmt.Sprintf("%+.1f%%", 100*(c.Fitted/c.Planned-1))})
	}
	coefRows = append(coefRows, []string{"TTFT MAPE on the probes", render.Pct(r.FitTTFTMAPE[0]), render.Pct(r.FitTTFTMAPE[1]), ""},
		[]string{"E2E MAPE on the probes", render.Pct(r.FitE2EMAPE[0]), render.Pct(r.FitE2EMAPE[1]), ""})
	return capHead, capRows, coefHead, coefRows
}

func (r *Result) text() string {
	ch, cr, fh, fr := r.tables()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s on %s; shares stated to ±%.0f%%\n\n", r.Verdict, r.Model, r.GPU, 100*r.SharePrecision)
	b.WriteString(render.TextTable(ch, cr, []bool{false, true}))
	b.WriteString("\n")
	b.WriteString(render.TextTable(fh, fr, []bool{false, true, true, true}))
	return b.String()
}

func (r *Result) markdown() string {
	ch, cr, fh, fr := r.tables()
	var b strings.Builder
	fmt.Fprintf(&b, "### Is the plan true on this server?\n\n**%s**  \n%s on %s; shares stated to ±%.0f%%\n\n", r.Verdict, r.Model, r.GPU, 100*r.SharePrecision)
	for _, t := range []struct {
		h    []string
		rows [][]string
	}{{ch, cr}, {fh, fr}} {
		b.WriteString("| " + strings.Join(t.h, " | ") + " |\n|" + strings.Repeat(" --- |", len(t.h)) + "\n")
		for _, row := range t.rows {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (r *Result) html() string {
	ch, cr, fh, fr := r.tables()
	var b strings.Builder
	render.PageHead(&b, "Is the plan true on this server?")
	class := "poor"
	if r.Holds {
		class = "good"
	}
	fmt.Fprintf(&b, "<p class=\"headline\">%s %s</p>\n<p class=\"muted\">%s on %s; shares stated to ±%.0f%%</p>\n",
		render.Badge(class, map[bool]string{true: "holds", false: "does not hold"}[r.Holds]), render.Esc(r.Verdict),
		render.Esc(r.Model), render.Esc(r.GPU), 100*r.SharePrecision)
	render.Table(&b, ch, cr, []bool{false, true}, false)
	render.Table(&b, fh, fr, []bool{false, true, true, true}, false)
	b.WriteString("</body>\n</html>\n")
	return b.String()
}
