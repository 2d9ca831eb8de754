package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"p50 even n interpolates", []float64{1, 2, 3, 4}, 50, 2.5},
		{"p90 rank 2.7", []float64{1, 2, 3, 4}, 90, 3.7},
		{"p99 rank 2.97", []float64{1, 2, 3, 4}, 99, 3.97},
		{"p95 rank 3.8", []float64{15, 20, 35, 40, 50}, 95, 48},
		{"unsorted input", []float64{3, 1, 2}, 50, 2},
		{"single value", []float64{7}, 99, 7},
		{"all equal", []float64{5, 5, 5}, 90, 5},
		{"numpy linear 1..10 p90", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9.1},
		{"numpy linear 1..10 p95", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 9.55},
		{"p100 is max", []float64{4, 9, 1}, 100, 9},
		{"empty gives 0", nil, 50, 0},
	}
	for _, tt := range tests {
		if got := Percentile(tt.xs, tt.p); !near(got, tt.want) {
			t.Errorf("%s: Percentile(%v, %v) = %v, want %v", tt.name, tt.xs, tt.p, got, tt.want)
		}
	}
}

// TestPercentileRuleGolden locks the percentile rule of calibrate's figures
// to linear interpolation between closest ranks (NumPy "linear", package
// quantile): a change of the rule changes this golden.
func TestPercentileRuleGolden(t *testing.T) {
	inputs := [][]float64{
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		{10, 1, 7, 3},
		{42},
		{1, 1000, 1e6},
		{0.5, 0.25, 0.125, 2, 8, 32, 128},
	}
	var b strings.Builder
	b.WriteString("# Percentile rule: rank = p/100*(n-1), linear interpolation (NumPy default).\n")
	for _, xs := range inputs {
		fmt.Fprintf(&b, "%v:", xs)
		for _, p := range []float64{50, 90, 95, 99} {
			fmt.Fprintf(&b, " p%g=%s", p, fmtNum(Percentile(xs, p)))
		}
		b.WriteString("\n")
	}
	golden(t, "percentile_rule.golden", []byte(b.String()))
}

func TestMeanMAPEBias(t *testing.T) {
	tests := []struct {
		name      string
		real, sim []float64
		mape      float64
		n         int
		bias      string
	}{
		{"zero real skipped", []float64{100, 200, 0, 50}, []float64{110, 180, 5, 50}, 0.2 / 3, 3, BiasUnder},
		{"over", []float64{100, 100}, []float64{150, 100}, 0.25, 2, BiasOver},
		{"neutral", []float64{100, 200}, []float64{110, 190}, 0.075, 2, BiasNeutral},
		{"no qualifying pair", []float64{0, 0}, []float64{1, 2}, 0, 0, ""},
		{"infinite sim skipped", []float64{100, 100}, []float64{math.Inf(1), 90}, 0.1, 1, BiasUnder},
		{"exact", []float64{3, 4, 5}, []float64{3, 4, 5}, 0, 3, BiasNeutral},
	}
	for _, tt := range tests {
		mape, n := MAPE(tt.real, tt.sim)
		if !near(mape, tt.mape) || n != tt.n {
			t.Errorf("%s: MAPE = %v over %d, want %v over %d", tt.name, mape, n, tt.mape, tt.n)
		}
		if got := Bias(tt.real, tt.sim); got != tt.bias {
			t.Errorf("%s: Bias = %q, want %q", tt.name, got, tt.bias)
		}
	}
	if got := Mean([]float64{1, 2, 3, 10}); got != 4 {
		t.Errorf("Mean = %v, want 4", got)
	}
	if got := Mean(nil); got != 0 {
		t.Errorf("Mean(nil) = %v, want 0", got)
	}
}

func TestPearson(t *testing.T) {
	tests := []struct {
		name      string
		real, sim []float64
		want      float64
	}{
		{"perfect", []float64{1, 2, 3}, []float64{2, 4, 6}, 1},
		{"inverse", []float64{1, 2, 3}, []float64{3, 2, 1}, -1},
		{"hand 0.8", []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.8},
		{"n=2 is 0", []float64{1, 2}, []float64{1, 2}, 0},
		{"n=1 is 0", []float64{1}, []float64{1}, 0},
		{"constant sim is 0", []float64{1, 2, 3}, []float64{5, 5, 5}, 0},
		{"all equal is 0", []float64{4, 4, 4}, []float64{4, 4, 4}, 0},
		// Σ formula by hand: num 66000, den sqrt(60000*74400).
		{"hand 3 pairs", []float64{100, 200, 300}, []float64{110, 190, 330}, 66000 / math.Sqrt(60000*74400)},
		// Large µs values: the sum formula cancels badly here; r must stay exact.
		{"large offset", []float64{1e12 + 1, 1e12 + 2, 1e12 + 3}, []float64{1e12 + 2, 1e12 + 4, 1e12 + 6}, 1},
	}
	for _, tt := range tests {
		got := Pearson(tt.real, tt.sim)
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Pearson = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestGradeBoundaries(t *testing.T) {
	tests := []struct {
		mape, r float64
		want    string
	}{
		{0.0999, 0.951, GradeExcellent},
		{0.10, 0.99, GradeGood}, // MAPE not < 0.10
		{0.05, 0.95, GradeGood}, // r not > 0.95
		{0.1999, 0.851, GradeGood},
		{0.20, 0.99, GradeFair}, // MAPE not < 0.20
		{0.05, 0.85, GradeFair}, // r not > 0.85
		{0.3499, 0.701, GradeFair},
		{0.35, 0.99, GradePoor}, // MAPE not < 0.35
		{0.01, 0.70, GradePoor}, // r not > 0.70
		{0, 0, GradePoor},       // n < 3 gives r = 0
	}
	for _, tt := range tests {
		if got := Grade(tt.mape, tt.r); got != tt.want {
			t.Errorf("Grade(%v, %v) = %s, want %s", tt.mape, tt.r, got, tt.want)
		}
	}
	for _, g := range []string{GradePoor, GradeFair, GradeGood, GradeExcellent} {
		if gradeRank(g) < 0 {
			t.Errorf("gradeRank(%s) unknown", g)
		}
	}
	if !(gradeRank(GradePoor) < gradeRank(GradeFair) && gradeRank(GradeFair) < gradeRank(GradeGood) && gradeRank(GradeGood) < gradeRank(GradeExcellent)) {
		t.Error("grade ranks out of order")
	}
}

func TestCompare(t *testing.T) {
	c := comparePairs(&pairs{real: []float64{100, 200, 300}, sim: []float64{110, 190, 330}})
	w, q := c.WorkloadLevel, c.RequestLevel
	checks := []struct {
		name      string
		got, want float64
	}{
		{"real_mean", w.RealMean, 200}, {"sim_mean", w.SimMean, 210}, {"mean_error", w.MeanError, 10},
		{"mean_percent_error", w.MeanPercentError, 0.05},
		{"real_p50", w.RealP50, 200}, {"sim_p50", w.SimP50, 190}, {"p50_error", w.P50Error, -10},
		{"p50_percent_error", w.P50PercentError, 0.05}, {"median = p50", w.SimMedian, 190},
		{"real_p90", w.RealP90, 280}, {"sim_p90", w.SimP90, 302}, {"p90_error", w.P90Error, 22},
		{"p90_percent_error", w.P90PercentError, 22.0 / 280},
		{"real_p99", w.RealP99, 298}, {"sim_p99", w.SimP99, 190 + 0.98*140},
		{"mape", q.MAPE, (0.1 + 0.05 + 0.1) / 3}, {"pearson", q.PearsonR, 66000 / math.Sqrt(60000*74400)},
	}
	for _, ch := range checks {
		if !near(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if q.BiasDirection != BiasOver || q.Quality != GradeExcellent || c.Count != 3 {
		t.Errorf("bias %q quality %q count %d, want over-predict excellent 3", q.BiasDirection, q.Quality, c.Count)
	}
	// n = 1: every percentile is the value, r = 0, grade poor.
	one := comparePairs(&pairs{real: []float64{50}, sim: []float64{40}})
	if one.WorkloadLevel.RealP99 != 50 || one.WorkloadLevel.SimP50 != 40 || one.RequestLevel.PearsonR != 0 || one.RequestLevel.Quality != GradePoor {
		t.Errorf("n=1: got %+v", one)
	}
	// real ≤ 0 gives percent error 0, not a division by zero.
	zero := comparePairs(&pairs{real: []float64{0, 0, 0}, sim: []float64{1, 2, 3}})
	if zero.WorkloadLevel.MeanPercentError != 0 || zero.RequestLevel.MAPE != 0 || zero.RequestLevel.BiasDirection != "" {
		t.Errorf("zero real: got %+v", zero)
	}
}

func TestFmtDur(t *testing.T) {
	tests := []struct {
		us   float64
		want string
	}{
		{0, "0 us"}, {950, "950 us"}, {66910, "66.9 ms"}, {141030, "141 ms"}, {1630000, "1.63 s"},
		{999.7, "1.00 ms"}, {9996, "10.0 ms"}, {12.345, "12.3 us"}, {-5706, "-5.71 ms"}, {612418000, "612 s"},
		{1.5, "1.50 us"},
	}
	for _, tt := range tests {
		if got := fmtDur(tt.us); got != tt.want {
			t.Errorf("fmtDur(%v) = %q, want %q", tt.us, got, tt.want)
		}
	}
}
