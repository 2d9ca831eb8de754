package abtest

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"servesim/internal/quantile"
)

// metricDef is one compared metric.
type metricDef struct {
	name, family, stat, unit string
	higherBetter             bool
}

// latencyStats are the statistics of every latency, in table order; the
// percentiles follow the one percentile rule (internal/quantile).
var latencyStats = []struct {
	stat string
	p    float64 // percentile; 0 = the mean
}{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"mean", 0}}

// Families of metrics, in table order.
const (
	famTTFT       = "ttft"
	famTPOT       = "tpot"
	famE2E        = "e2e"
	famThroughput = "throughput"
	famGoodput    = "goodput"
)

var latencyFamilies = []string{famTTFT, famTPOT, famE2E}

// metricDefs are the metrics compared: every latency's statistics, the
// throughputs, and goodput when there is an SLO.
func metricDefs(goodput bool) []metricDef {
	var ds []metricDef
	for _, f := range latencyFamilies {
		for _, s := range latencyStats {
			ds = append(ds, metricDef{name: f + "." + s.stat, family: f, stat: s.stat, unit: "us"})
		}
	}
	ds = append(ds,
		metricDef{name: "throughput.tok_s", family: famThroughput, stat: "tok_s", unit: "tok/s", higherBetter: true},
		metricDef{name: "throughput.req_s", family: famThroughput, stat: "req_s", unit: "req/s", higherBetter: true})
	if goodput {
		ds = append(ds, metricDef{name: "goodput.req_s", family: famGoodput, stat: "req_s", unit: "req/s", higherBetter: true})
	}
	return ds
}

// sideStats evaluates every metric of one side's units under weights: how
// many times each unit is drawn (all ones for the run as measured).
type sideStats struct {
	units []unit
	// order holds, per latency family, the ok units (with a TPOT, for
	// TPOT) sorted by that latency, and vals their latencies in that order.
	order [3][]int32
	vals  [3][]float64
	reps  int
	// lo and hi are each repeat's first send and last chunk under the
	// weights, seen whether it has a unit drawn: eval's scratch space.
	lo, hi []int64
	seen   []bool
}

func newSideStats(us []unit) *sideStats {
	s := &sideStats{units: us}
	for i, u := range us {
		s.reps = max(s.reps, u.rep+1)
		if !u.ok {
			continue
		}
		s.order[0] = append(s.order[0], int32(i))
		if u.hasTPOT {
			s.order[1] = append(s.order[1], int32(i))
		}
		s.order[2] = append(s.order[2], int32(i))
	}
	for f := range s.order {
		slices.SortStableFunc(s.order[f], func(x, y int32) int { return cmp.Compare(latencyOf(f, &us[x]), latencyOf(f, &us[y])) })
		s.vals[f] = make([]float64, len(s.order[f]))
		for k, i := range s.order[f] {
			s.vals[f][k] = latencyOf(f, &us[i])
		}
	}
	s.lo, s.hi, s.seen = make([]int64, s.reps), make([]int64, s.reps), make([]bool, s.reps)
	return s
}

// eval writes every metric (metricDefs order) for weights w into out; a
// metric without data is NaN.
func (s *sideStats) eval(w []int32, out []float64) {
	for f := range s.order {
		weightedStats(s.order[f], s.vals[f], w, out[f*len(latencyStats):(f+1)*len(latencyStats)])
	}
	base := len(latencyFamilies) * len(latencyStats)
	var tokens, reqs, good float64
	lo, hi, seen := s.lo, s.hi, s.seen
	clear(seen)
	for i := range s.units {
		u := &s.units[i]
		c := float64(w[i])
		if c == 0 || !u.ok {
			continue
		}
		tokens += c * u.tokens
		reqs += c
		if u.good {
			good += c
		}
		if !seen[u.rep] || u.send < lo[u.rep] {
			lo[u.rep] = u.send
		}
		if !seen[u.rep] || u.last > hi[u.rep] {
			hi[u.rep] = u.last
		}
		seen[u.rep] = true
	}
	var windowUs int64
	for r := range lo {
		if seen[r] {
			windowUs += hi[r] - lo[r]
		}
	}
	rate := func(x float64) float64 {
		if windowUs <= 0 {
			return math.NaN()
		}
		return x / (float64(windowUs) / 1e6)
	}
	out[base], out[base+1] = rate(tokens), rate(reqs)
	if len(out) > base+2 {
		out[base+2] = rate(good)
	}
}

// weightedStats writes the p50, p90, p99 and mean of vals (sorted; the
// value of unit order[k] is vals[k]), each counted w[order[k]] times, into
// out: the percentiles of the sample the weights stand for, by the one
// percentile rule, found in one pass without sorting again.
func weightedStats(order []int32, vals []float64, w []int32, out []float64) {
	var m int64
	var sum float64
	for k, i := range order {
		m += int64(w[i])
		sum += float64(w[i]) * vals[k]
	}
	if m == 0 {
		for k := range out {
			out[k] = math.NaN()
		}
		return
	}
	// The ranks each percentile reads: k and k+1 (the last rank at most).
	var pos [6]int64
	var frac [3]float64
	for j, s := range latencyStats[:3] {
		k, fr := quantile.Rank(m, s.p)
		pos[2*j], pos[2*j+1], frac[j] = k, min(k+1, m-1), fr
	}
	var got [6]float64
	next := 0
	var cum int64
	for k, i := range order {
		c := int64(w[i])
		if c == 0 {
			continue
		}
		for next < len(pos) && pos[next] < cum+c {
			got[next] = vals[k]
			next++
		}
		cum += c
		if next == len(pos) {
			break
		}
	}
	for j := range 3 {
		out[j] = quantile.Between(got[2*j], got[2*j+1], frac[j])
	}
	out[3] = sum / float64(m)
}

// boot is the bootstrap's outcome: every metric's value on both sides and
// the sorted relative differences B/A − 1 over the resamples.
type boot struct {
	a, b  []float64
	diffs [][]float64
}

// bootstrap resamples the sample o.Resamples times: the pairs together
// when paired, else each side on its own, from one seeded stream.
func bootstrap(s sample, nMetrics int, o Options) boot {
	sa, sb := newSideStats(s.a), newSideStats(s.b)
	bt := boot{a: make([]float64, nMetrics), b: make([]float64, nMetrics), diffs: make([][]float64, nMetrics)}
	ones := func(n int) []int32 {
		w := make([]int32, n)
		for i := range w {
			w[i] = 1
		}
		return w
	}
	sa.eval(ones(len(s.a)), bt.a)
	sb.eval(ones(len(s.b)), bt.b)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed_ab7e57))
	wa, wb := make([]int32, len(s.a)), make([]int32, len(s.b))
	ea, eb := make([]float64, nMetrics), make([]float64, nMetrics)
	draw := func(w []int32) {
		clear(w)
		for range w {
			w[rng.IntN(len(w))]++
		}
	}
	for j := range bt.diffs {
		bt.diffs[j] = make([]float64, 0, o.Resamples)
	}
	for range o.Resamples {
		draw(wa)
		if s.paired {
			copy(wb, wa)
		} else {
			draw(wb)
		}
		sa.eval(wa, ea)
		sb.eval(wb, eb)
		for j := range nMetrics {
			if d := eb[j]/ea[j] - 1; ea[j] > 0 && !math.IsNaN(d) && !math.IsInf(d, 0) {
				bt.diffs[j] = append(bt.diffs[j], d)
			}
		}
	}
	for j := range bt.diffs {
		slices.Sort(bt.diffs[j])
	}
	return bt
}

// repeatNoise is, per metric, the largest relative range (max − min) /
// mean of the metric over the repeats of one side: how far two runs of
// one configuration fell apart. Zero for a side of one run.
func repeatNoise(us []unit, reps, nMetrics int) []float64 {
	noise := make([]float64, nMetrics)
	if reps < 2 {
		return noise
	}
	s := newSideStats(us)
	w := make([]int32, len(us))
	per := make([][]float64, reps)
	for r := range reps {
		for i := range us {
			w[i] = 0
			if us[i].rep == r {
				w[i] = 1
			}
		}
		per[r] = make([]float64, nMetrics)
		s.eval(w, per[r])
	}
	for j := range nMetrics {
		lo, hi, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
		for r := range reps {
			if v := per[r][j]; !math.IsNaN(v) {
				lo, hi, sum, n = math.Min(lo, v), math.Max(hi, v), sum+v, n+1
			}
		}
		if n >= 2 && sum > 0 {
			noise[j] = (hi - lo) / (sum / float64(n))
		}
	}
	return noise
}
