package render

import (
	"math"
	"slices"
	"strconv"
)

// Axis maps data values to pixels, linearly or logarithmically.
type Axis struct {
	Lo, Hi  float64 // data domain (Lo > 0 when Log)
	Log     bool
	P0, P1  float64 // pixel range
	Latency bool    // values are µs: ticks are labelled as durations
}

// At maps a value to its pixel.
func (a Axis) At(v float64) float64 {
	lo, hi := a.Lo, a.Hi
	if a.Log {
		v = math.Log10(math.Max(v, a.Lo))
		lo, hi = math.Log10(a.Lo), math.Log10(a.Hi)
	}
	if hi == lo {
		return (a.P0 + a.P1) / 2
	}
	return a.P0 + (v-lo)/(hi-lo)*(a.P1-a.P0)
}

// LatencyAxis picks a duration axis for values in µs: logarithmic when
// max/min > 100, else linear from 0.
func LatencyAxis(p0, p1 float64, sets ...[]float64) Axis {
	lo, hi := math.Inf(1), math.Inf(-1)
	minPos := math.Inf(1)
	n := 0
	for _, vals := range sets {
		n += len(vals)
		for _, v := range vals {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			if v > 0 {
				minPos = math.Min(minPos, v)
			}
		}
	}
	a := Axis{P0: p0, P1: p1, Latency: true}
	if n == 0 {
		a.Lo, a.Hi = 0, 1
		return a
	}
	if !math.IsInf(minPos, 1) && hi/minPos > 100 {
		a.Log = true
		a.Lo = math.Pow(10, math.Floor(math.Log10(minPos)))
		a.Hi = math.Pow(10, math.Ceil(math.Log10(hi)))
		return a
	}
	a.Linear(lo, hi)
	return a
}

// Linear sets a linear domain from 0 (or lo when negative) to hi, both
// rounded out to a nice step.
func (a *Axis) Linear(lo, hi float64) {
	lo = math.Min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	step := NiceStep((hi - lo) / 5)
	a.Lo, a.Hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
}

// NiceStep rounds x up to 1, 2 or 5 times a power of ten.
func NiceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// Ticks are the values that get a grid line and a label.
func (a Axis) Ticks() []float64 {
	var out []float64
	if a.Log {
		decades := math.Log10(a.Hi / a.Lo)
		for d := a.Lo; d <= a.Hi*1.0001; d *= 10 {
			out = append(out, d)
			if decades <= 2 {
				for _, m := range []float64{2, 5} {
					if d*m < a.Hi {
						out = append(out, d*m)
					}
				}
			}
		}
		slices.Sort(out)
		return out
	}
	step := NiceStep((a.Hi - a.Lo) / 5)
	for v := a.Lo; v <= a.Hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// Label is a tick's text: a duration with its unit, or a plain number.
func (a Axis) Label(v float64) string {
	if a.Latency {
		return TickDur(v)
	}
	return Num(roundSig(v, 6))
}

// Px renders a pixel coordinate with one decimal.
func Px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
