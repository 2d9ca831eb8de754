package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"servesim/internal/sweep"
)

// SweepPages draws sweeps for people (sweep.Pages): the text table with
// the answer (SweepText) and the page (WriteSweepHTML).
type SweepPages struct{}

// Text writes SweepText.
func (SweepPages) Text(w io.Writer, d *sweep.Doc) error {
	_, err := io.WriteString(w, SweepText(d))
	return err
}

// HTML writes the page of WriteSweepHTML.
func (SweepPages) HTML(w io.Writer, d *sweep.Doc) error { return WriteSweepHTML(w, d) }

// SweepText renders a sweep for a person: what was swept, one line per
// row with the figures that decide (the CSV and JSON have them all), then
// the answer.
func SweepText(d *sweep.Doc) string {
	var b strings.Builder
	b.WriteString(sweepHeadline(d) + "\n")
	if len(d.Base) > 0 {
		b.WriteString("base: " + sweep.ParamText(d.Base) + "\n")
	}
	if d.SLO != "" {
		fmt.Fprintf(&b, "SLO: %s", d.SLO)
		if d.Find != "" {
			fmt.Fprintf(&b, "   find: %s", d.Find)
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	header, right := sweepColumns(d)
	rows := make([][]string, len(d.Rows))
	for i := range d.Rows {
		rows[i] = sweepCells(d, &d.Rows[i])
	}
	b.WriteString(table(header, rows, right))
	if a := d.Answer; a != nil {
		b.WriteString("\n")
		for _, v := range a.Verdict {
			b.WriteString(v + "\n")
		}
		for _, k := range a.Knees {
			fmt.Fprintf(&b, "knee of %s: %s req/s (%s)%s%s\n", a.Primary, fmtRate(k.RateRPS), fmtDur(k.LatencyMs*1e3), curveName(k.Curve), k.SeedText())
		}
		for _, p := range a.Pareto {
			b.WriteString(paretoText(d, a, p) + "\n")
		}
	}
	if d.Shard != "" {
		fmt.Fprintf(&b, "\nshard %s: merge every shard's JSON with `sweep merge` for the answer\n", d.Shard)
	}
	for _, p := range d.Prices {
		fmt.Fprintf(&b, "price %s: $%.2f per GPU-hour (%s)\n", p.GPU, p.USDPerHour, p.Source)
	}
	return b.String()
}

func sweepHeadline(d *sweep.Doc) string {
	what := fmt.Sprintf("%d cases", d.Cases)
	if d.Cases == 1 {
		what = "1 case"
	}
	if len(d.Keys) > 0 {
		what += " (" + strings.Join(d.Keys, " × ") + ")"
	}
	if d.Find == sweep.FindMaxRate {
		what += ", each searched for its max rate"
	}
	return fmt.Sprintf("%s: %s, %d runs", d.Command, what, len(d.Rows))
}

func curveName(ps []sweep.Param) string {
	if len(ps) == 0 {
		return ""
	}
	return " for " + sweep.ParamText(ps)
}

func paretoText(d *sweep.Doc, a *sweep.Answer, p sweep.ParetoSet) string {
	parts := make([]string, len(p.Points))
	for i, pt := range p.Points {
		v := fmtDur(pt.Value * 1e3)
		if p.Of == "max_rate" {
			v = fmtRate(pt.Value) + " req/s"
		}
		parts[i] = fmt.Sprintf("case %d $%.2f/h %s", pt.Case, pt.CostPerHour, v)
	}
	of := a.Primary
	if p.Of == "max_rate" {
		of = "max rate"
	}
	under := ""
	if len(p.Load) > 0 {
		under = " at " + sweep.ParamText(p.Load)
	}
	return fmt.Sprintf("Pareto front of cost against %s%s: %s", of, under, strings.Join(parts, "; "))
}

// shownKeys are the swept keys with a column of their own in the text and
// HTML tables: all but rate, which the rate column shows.
func shownKeys(d *sweep.Doc) []string {
	var ks []string
	for _, k := range d.Keys {
		if k != "rate" {
			ks = append(ks, k)
		}
	}
	return ks
}

func sweepColumns(d *sweep.Doc) ([]string, []bool) {
	keys := shownKeys(d)
	header := append(append([]string{"case"}, keys...), "rate", "status", "thr rps", "goodput", "attain",
		"TTFT p50", "TTFT p99", "ITL p99", "E2E p99", "KV peak", "preempt", "GPUs", "$/h")
	if hasFleet(d) {
		header = append(header, "fleet", "peak", "GPU-h", "$ run")
	}
	if d.SLO != "" {
		header = append(header, "SLO")
	}
	right := make([]bool, len(header))
	for i := range right {
		right[i] = i == 0 || i > len(keys)+2 || i == len(keys)+1
	}
	if d.SLO != "" {
		right[len(right)-1] = false
	}
	return header, right
}

func sweepCells(d *sweep.Doc, r *sweep.Row) []string {
	c := []string{strconv.Itoa(r.Case)}
	for _, k := range shownKeys(d) {
		c = append(c, r.Param(k))
	}
	lat := func(m, s string) string {
		v, ok := r.Latency(m, s)
		if !ok {
			return "-"
		}
		return fmtDur(v * 1e3)
	}
	cost := "-"
	if r.CostPerHour != nil {
		cost = strconv.FormatFloat(*r.CostPerHour, 'f', 2, 64)
	}
	status := r.Status
	if r.Role != sweep.RoleGrid {
		status += " (" + r.Role + ")"
	}
	c = append(c, fmtRate(r.RateRPS), status, sig3(r.ThroughputRPS), sig3(r.GoodputRPS), fmtPct(r.SLOAttainment),
		lat("ttft", "p50"), lat("ttft", "p99"), lat("itl", "p99"), lat("e2e", "p99"), fmtPct(r.KVUtilizationPeak),
		strconv.FormatInt(r.Preemptions, 10), strconv.Itoa(r.GPUs), cost)
	if hasFleet(d) {
		c = append(c, fleetCells(r.Fleet)...)
	}
	if d.SLO != "" {
		switch {
		case r.SLOMet == nil:
			c = append(c, "-")
		case *r.SLOMet:
			c = append(c, "met")
		default:
			c = append(c, "no: "+strings.Join(r.SLOFailures, ", "))
		}
	}
	return c
}

// hasFleet: some row ran a fleet whose replicas come and go.
func hasFleet(d *sweep.Doc) bool {
	for i := range d.Rows {
		if d.Rows[i].Fleet != nil {
			return true
		}
	}
	return false
}

// fleetCells are a row's fleet columns: static or autoscaled, the most
// ready replicas, and the GPU-hours and dollars of its nodes over the run.
func fleetCells(f *sweep.FleetRow) []string {
	if f == nil {
		return []string{"-", "-", "-", "-"}
	}
	kind := "static"
	if f.Autoscaled {
		kind = "autoscaled"
	}
	return []string{kind, strconv.Itoa(f.PeakReplicas), strconv.FormatFloat(f.GPUHours, 'f', 2, 64), strconv.FormatFloat(f.Dollars, 'f', 2, 64)}
}

// fmtRate renders a rate in requests per second with four significant
// digits (the search's rates are rounded to those).
func fmtRate(r float64) string { return strconv.FormatFloat(r, 'g', 4, 64) }
