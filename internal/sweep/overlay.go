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
// Each is rounded to the fewest significant digits, three at least, that
// keep the rates apart and strictly between lo and hi, so that they read
// short in tables and in the levels' file names (8.31, not
// 8.309601508941244) and every level keeps a name of its own.
func Between(lo, hi float64, n int) []float64 {
	var exact []float64
	for i := 1; i <= n; i++ {
		exact = append(exact, lo+(hi-lo)*float64(i)/float64(n+1))
	}
	for digits := 3; digits < 17 && len(exact) > 0; digits++ {
		out := make([]float64, len(exact))
		ok := true
		for i, r := range exact {
			out[i] = roundSig(r, digits)
			prev := lo
			if i > 0 {
				prev = out[i-1]
			}
			ok = ok && out[i] > prev && out[i] < hi
		}
		if ok {
			return out
		}
	}
	return exact
}
