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

// searcher is one max-rate search of one case, under one variant of its
// interval (nil: the case as it is): the rows it ran and, by rate, the row
// of each rate tried.
type searcher struct {
	ex     *executor
	c      Case
	v      *Variant
	digits int
	tried  map[float64]*Row
	rows   []Row
}

func (ex *executor) searcher(c Case, v *Variant) *searcher {
	return &searcher{ex: ex, c: c, v: v, digits: searchDigits(ex.plan.Spec.Precision), tried: map[float64]*Row{}}
}

// add records rows already run (a variant's rows at the rates the case's
// own search tried).
func (s *searcher) add(rows ...Row) {
	s.rows = append(s.rows, rows...)
	for i := range s.rows {
		s.tried[s.rows[i].RateRPS] = &s.rows[i]
	}
}

// run evaluates the rates not tried yet, at once.
func (s *searcher) run(ctx context.Context, role string, rates ...float64) error {
	var todo []float64
	for _, r := range rates {
		r = roundSig(r, s.digits)
		if _, ok := s.tried[r]; !ok && r > 0 && !containsF(todo, r) {
			todo = append(todo, r)
		}
	}
	out, err := s.ex.evalAll(ctx, s.c, todo, role, s.v)
	if err != nil {
		return err
	}
	s.add(out...)
	return nil
}

func (s *searcher) met(r float64) bool {
	row := s.tried[roundSig(r, s.digits)]
	return row != nil && row.Met()
}

// search finds the highest rate at which case c meets the SLO.
func (ex *executor) search(ctx context.Context, c Case) ([]Row, error) {
	p := ex.plan
	s := ex.searcher(c, nil)
	probe, err := ex.eval(ctx, c, p.ProbeRate, RoleProbe, nil)
	if err != nil {
		return nil, err
	}
	s.rows = append(s.rows, probe)
	if probe.Status == StatusInfeasible {
		return s.rows, nil
	}
	mu := probe.ThroughputRPS
	if !(mu > 0) {
		return nil, fmt.Errorf("case %d: no request completed at the probe rate %g req/s: cannot measure the capacity to search from", c.Index, p.ProbeRate)
	}
	lo, hi := roundSig(mu/searchLoDiv, s.digits), roundSig(mu*searchHiMul, s.digits)
	if err := s.run(ctx, RoleSearch, lo, hi); err != nil {
		return nil, err
	}
	lo, ok, err := s.narrow(ctx, lo, hi, mu)
	if err != nil || !ok {
		return sorted(s.rows), err // !ok: no rate meets the SLO; Analyze says so
	}
	var curve []float64
	for _, f := range curveFractions {
		curve = append(curve, lo*f)
	}
	if err := s.run(ctx, RoleCurve, curve...); err != nil {
		return nil, err
	}
	return sorted(s.rows), nil
}

// narrow brackets the max rate between lo and hi (phase 2: hi doubles
// while it meets the SLO, lo falls while it does not, down to mu·10⁻⁴)
// and narrows the bracket to the precision (phase 3). It returns the
// highest passing rate, or false when no rate meets the SLO.
func (s *searcher) narrow(ctx context.Context, lo, hi, mu float64) (float64, bool, error) {
	for steps := 0; s.met(hi) && steps < searchMaxSteps; steps++ {
		lo, hi = hi, roundSig(hi*2, s.digits)
		if err := s.run(ctx, RoleSearch, hi); err != nil {
			return 0, false, err
		}
	}
	for steps := 0; !s.met(lo) && steps < searchMaxSteps; steps++ {
		hi, lo = lo, roundSig(lo/searchDownStep, s.digits)
		if lo < mu*searchFloor {
			return 0, false, nil
		}
		if err := s.run(ctx, RoleSearch, lo); err != nil {
			return 0, false, err
		}
	}
	for steps := 0; hi/lo-1 > s.ex.plan.Spec.Precision && steps < searchMaxSteps; steps++ {
		ratio := hi / lo
		var pts []float64
		for i := 1; i <= searchPoints; i++ {
			pts = append(pts, lo*math.Pow(ratio, float64(i)/float64(searchPoints+1)))
		}
		before := len(s.rows)
		if err := s.run(ctx, RoleSearch, pts...); err != nil {
			return 0, false, err
		}
		if len(s.rows) == before {
			break // the rounding leaves no rate between lo and hi
		}
		for _, r := range pts {
			r = roundSig(r, s.digits)
			if !s.met(r) && r < hi {
				hi = r
			}
		}
		for _, r := range pts {
			r = roundSig(r, s.digits)
			if s.met(r) && r > lo && r < hi {
				lo = r
			}
		}
	}
	return lo, true, nil
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
