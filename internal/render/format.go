package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Dur renders a duration in µs with three significant digits in us, ms or s
// (docs/calibrate.md §11): 950 us, 66.9 ms, 141 ms, 1.63 s. ASCII only.
func Dur(us float64) string {
	if math.IsNaN(us) || math.IsInf(us, 0) {
		return "n/a"
	}
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	if us == 0 {
		return "0 us"
	}
	units := []struct {
		name  string
		scale float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}}
	for i, u := range units {
		v := us / u.scale
		s := Sig3(v)
		// Move up a unit when rounding reaches 1000 (999.7 us is 1.00 ms).
		if f, _ := strconv.ParseFloat(s, 64); f >= 1000 && i < len(units)-1 {
			continue
		}
		return sign + s + " " + u.name
	}
	return sign + Sig3(us/1e6) + " s"
}

// Sig3 formats v ≥ 0 with three significant digits, never in exponent form
// below 1e6 (large values keep their integer digits).
func Sig3(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := int(math.Floor(math.Log10(v))) + 1
	dec := max(3-digits, 0)
	s := strconv.FormatFloat(v, 'f', dec, 64)
	// Rounding can add a digit (9.996 → "10.00"); trim to three significant.
	if f, _ := strconv.ParseFloat(s, 64); dec > 0 && f >= math.Pow(10, float64(digits)) {
		s = strconv.FormatFloat(v, 'f', dec-1, 64)
	}
	return s
}

// TickDur labels a tick of a duration axis (µs) for a person: "0" for
// zero, otherwise the value in the largest unit it reaches, without
// trailing zeros: 250 us, 50 ms, 1.2 s, 150 s.
func TickDur(us float64) string {
	if us == 0 {
		return "0"
	}
	if math.IsNaN(us) || math.IsInf(us, 0) {
		return "n/a"
	}
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	unit, scale := "us", 1.0
	switch {
	case us >= 1e6: // seconds upwards: minutes would mix units on one axis (100 s, 2.5 min, 200 s)
		unit, scale = "s", 1e6
	case us >= 1e3:
		unit, scale = "ms", 1e3
	}
	return sign + Num(roundSig(us/scale, 3)) + " " + unit
}

// Span renders a duration in µs as a person reads it: "0" for zero,
// below a minute as Dur does (3.50 s), then in minutes and seconds (3 min 4 s), then hours
// and minutes (2 h 5 min).
func Span(us float64) string {
	if us == 0 {
		return "0"
	}
	if math.IsNaN(us) || math.IsInf(us, 0) || us < 60e6 {
		return Dur(us)
	}
	s := int64(math.Round(us / 1e6))
	if s < 3600 {
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	m := (s + 30) / 60
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(n-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// Pct renders a fraction as a percentage with one decimal: 0.118 -> "11.8%".
func Pct(f float64) string {
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// Num renders a plain number in its shortest form.
func Num(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// TextTable lays out rows in columns two spaces apart; right[i]
// right-aligns column i.
func TextTable(header []string, rows [][]string, right []bool) string {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		var l strings.Builder
		for i, c := range cells {
			if i > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if right[i] {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
	return b.String()
}
