package report

import (
	"math"
	"strconv"
	"strings"
)

// fmtDur renders a duration in µs with three significant digits in us, ms or s
// (docs/calibrate.md §11): 950 us, 66.9 ms, 141 ms, 1.63 s. ASCII only.
func fmtDur(us float64) string {
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
		s := sig3(v)
		// Move up a unit when rounding reaches 1000 (999.7 us is 1.00 ms).
		if f, _ := strconv.ParseFloat(s, 64); f >= 1000 && i < len(units)-1 {
			continue
		}
		return sign + s + " " + u.name
	}
	return sign + sig3(us/1e6) + " s"
}

// sig3 formats v ≥ 0 with three significant digits, never in exponent form
// below 1e6 (large values keep their integer digits).
func sig3(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := int(math.Floor(math.Log10(v))) + 1
	dec := 3 - digits
	if dec < 0 {
		dec = 0
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	// Rounding can add a digit (9.996 → "10.00"); trim to three significant.
	if f, _ := strconv.ParseFloat(s, 64); dec > 0 && f >= math.Pow(10, float64(digits)) {
		s = strconv.FormatFloat(v, 'f', dec-1, 64)
	}
	return s
}

// fmtPct renders a fraction as a percentage with one decimal: 0.118 -> "11.8%".
func fmtPct(f float64) string {
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// fmtNum renders a plain number in its shortest form.
func fmtNum(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// fmtR renders Pearson r with three decimals.
func fmtR(r float64) string { return strconv.FormatFloat(r, 'f', 3, 64) }

// table lays out rows in columns two spaces apart; right[i] right-aligns column i.
func table(header []string, rows [][]string, right []bool) string {
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
