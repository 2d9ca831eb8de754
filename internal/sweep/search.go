package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// The max-rate search of one deployment.
//
//  1. Probe: run at Plan.ProbeRate, far beyond any capacity; the throughput
//     served, μ, is about the most the deployment can serve.
//  2. Bracket: lo = μ/16 should meet the SLO and hi = 1.25·μ should not
//     (beyond capacity no run is steady). While hi meets it, hi doubles;
//     while lo fails, lo is divided by 8, down to μ/10⁴, below which no
//     rate meets the SLO.
//  3. Narrow: until hi/lo − 1 ≤ the precision, run two rates that split
//     [lo, hi] in three equal ratios, at once; hi becomes the lowest
//     failing rate and lo the highest passing rate below it.
//  4. Curve: run 20, 40, 60, 80 and 90% of lo to draw the latency curve
//     and find its knee.
//
// Rates are rounded to searchDigits significant digits (enough for the
// precision), so that every row can be repeated by hand with --rate.
// The answer (Analyze) is read back from the rows: the max rate is the
// highest passing rate below the lowest failing one, whichever rows found
// them, so a merge of shards gives the same answer.
const (
	searchLoDiv    = 16
	searchHiMul    = 1.25
	searchDownStep = 8
	searchFloor    = 1e-4
	searchMaxSteps = 60
	searchPoints   = 2 // rates per narrowing round; fixed, so rows never depend on the machine
)

var curveFractions = []float64{0.2, 0.4, 0.6, 0.8, 0.9}

// searchDigits is the number of significant digits of searched rates.
func searchDigits(precision float64) int {
	return max(3, int(math.Ceil(-math.Log10(precision)))+2)
}

func roundSig(v float64, digits int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	return f
}

// search finds the highest rate at which case c meets the SLO.
func (ex *executor) search(ctx context.Context, c Case) ([]Row, error) {
	p := ex.plan
	digits := searchDigits(p.Spec.Precision)
	tried := map[float64]*Row{}
	var rows []Row
	// run evaluates the rates not tried yet, at once.
	run := func(role string, rates ...float64) error {
		var todo []float64
		for _, r := range rates {
			r = roundSig(r, digits)
			if _, ok := tried[r]; !ok && r > 0 && !containsF(todo, r) {
				todo = append(todo, r)
			}
		}
		out, err := ex.evalAll(ctx, c, todo, role)
		if err != nil {
			return err
		}
		rows = append(rows, out...)
		for i := range rows {
			tried[rows[i].RateRPS] = &rows[i]
		}
		return nil
	}
	met := func(r float64) bool { row := tried[roundSig(r, digits)]; return row != nil && row.Met() }

	probe, err := ex.eval(ctx, c, p.ProbeRate, RoleProbe)
	if err != nil {
		return nil, err
	}
	rows = append(rows, probe)
	if probe.Status == StatusInfeasible {
		return rows, nil
	}
	mu := probe.ThroughputRPS
	if !(mu > 0) {
		return nil, fmt.Errorf("case %d: no request completed at the probe rate %g req/s: cannot measure the capacity to search from", c.Index, p.ProbeRate)
	}
	lo, hi := roundSig(mu/searchLoDiv, digits), roundSig(mu*searchHiMul, digits)
	if err := run(RoleSearch, lo, hi); err != nil {
		return nil, err
	}
	for steps := 0; met(hi) && steps < searchMaxSteps; steps++ {
		lo, hi = hi, roundSig(hi*2, digits)
		if err := run(RoleSearch, hi); err != nil {
			return nil, err
		}
	}
	for steps := 0; !met(lo) && steps < searchMaxSteps; steps++ {
		hi, lo = lo, roundSig(lo/searchDownStep, digits)
		if lo < mu*searchFloor {
			return sorted(rows), nil // no rate meets the SLO; Analyze says so
		}
		if err := run(RoleSearch, lo); err != nil {
			return nil, err
		}
	}
	for steps := 0; hi/lo-1 > p.Spec.Precision && steps < searchMaxSteps; steps++ {
		ratio := hi / lo
		var pts []float64
		for i := 1; i <= searchPoints; i++ {
			pts = append(pts, lo*math.Pow(ratio, float64(i)/float64(searchPoints+1)))
		}
		before := len(rows)
		if err := run(RoleSearch, pts...); err != nil {
			return nil, err
		}
		if len(rows) == before {
			break // the rounding leaves no rate between lo and hi
		}
		for _, r := range pts {
			r = roundSig(r, digits)
			if !met(r) && r < hi {
				hi = r
			}
		}
		for _, r := range pts {
			r = roundSig(r, digits)
			if met(r) && r > lo && r < hi {
				lo = r
			}
		}
	}
	var curve []float64
	for _, f := range curveFractions {
		curve = append(curve, lo*f)
	}
	if err := run(RoleCurve, curve...); err != nil {
		return nil, err
	}
	return sorted(rows), nil
}

func sorted(rows []Row) []Row {
	SortRows(rows)
	return rows
}

func containsF(xs []float64, v float64) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}
