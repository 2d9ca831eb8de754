package sweep

import "slices"

// Overlay puts a simulated sweep's rows beside a live one's in one
// document, every row tagged source=real or source=simulated, so the page
// draws the two curves (and their knees) on the same plots.
func Overlay(real, sim *Doc) *Doc {
	d := *real
	tag := func(rows []Row, source string, first int) []Row {
		out := make([]Row, len(rows))
		for i, r := range rows {
			r.Case += first
			r.Params = append([]Param{{Key: "source", Value: source}}, r.Params...)
			out[i] = r
		}
		return out
	}
	d.Rows = append(tag(real.Rows, "real", 0), tag(sim.Rows, "simulated", real.Cases)...)
	d.Cases = real.Cases + sim.Cases
	d.Keys = []string{"source"}
	for _, k := range append(append([]string{}, real.Keys...), sim.Keys...) {
		if !slices.Contains(d.Keys, k) {
			d.Keys = append(d.Keys, k)
		}
	}
	d.Base = append(d.Base, Param{Key: "simulated", Value: ParamText(sim.Base)})
	if d.SLO == "" {
		d.SLO = sim.SLO
	}
	return &d
}

// Between are n rates evenly spaced strictly between lo and hi: the
// levels of a live sweep between its synchronous and its throughput level.
func Between(lo, hi float64, n int) []float64 {
	var out []float64
	for i := 1; i <= n; i++ {
		out = append(out, lo+(hi-lo)*float64(i)/float64(n+1))
	}
	return out
}
