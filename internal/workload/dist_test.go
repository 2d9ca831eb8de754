package workload

import (
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestLengthDistributionsStatistics(t *testing.T) {
	const n = 40000
	phi := func(x, mu, sigma float64) float64 { return normalCDF(x, mu, sigma) }
	// Continuous laws are rounded half up and raised to ≥ 1, so for an
	// integer k ≥ 1, P(sample ≤ k) = F(k + 0.5) (clamped to the bounds).
	rounded := func(f func(float64) float64, lo, hi float64) func(float64) float64 {
		return func(k float64) float64 {
			switch {
			case k < math.Max(1, lo):
				return 0
			case k >= hi:
				return 1
			}
			return f(k + 0.5)
		}
	}
	mix := func(w, alpha, xm, mu, sigma float64) func(float64) float64 {
		return func(x float64) float64 {
			pareto := 0.0
			if x > xm {
				pareto = 1 - math.Pow(xm/x, alpha)
			}
			return w*pareto + (1-w)*phi(math.Log(x), mu, sigma)
		}
	}
	lnMean := func(mu, s float64) float64 { return math.Exp(mu + s*s/2) }
	lnVar := func(mu, s float64) float64 { return (math.Exp(s*s) - 1) * math.Exp(2*mu+s*s) }
	tests := []struct {
		name     string
		d        Distribution
		mean     float64
		variance float64 // < 0: not checked (infinite kurtosis)
		tol      float64 // relative, for mean and variance
		cdf      func(k float64) float64
	}{
		{"gaussian", Distribution{Type: DistGaussian, Params: map[string]float64{"mean": 500, "std_dev": 100, "min": 1, "max": 10000}},
			500, 100*100 + 1.0/12, 0.03, rounded(func(x float64) float64 { return phi(x, 500, 100) }, 1, 10000)},
		{"gaussian clamped", Distribution{Type: DistGaussian, Params: map[string]float64{"mean": 100, "std_dev": 100, "min": 50, "max": 150}},
			100, -1, 0.02, rounded(func(x float64) float64 { return phi(x, 100, 100) }, 50, 150)},
		{"exponential", Distribution{Type: DistExponential, Params: map[string]float64{"mean": 200}},
			200, 200 * 200, 0.03, rounded(func(x float64) float64 { return 1 - math.Exp(-x/200) }, 1, math.Inf(1))},
		{"exponential bounded", Distribution{Type: DistExponential, Params: map[string]float64{"mean": 200, "max": 300}},
			-1, -1, 0, rounded(func(x float64) float64 { return 1 - math.Exp(-x/200) }, 1, 300)},
		{"lognormal", Distribution{Type: DistLognormal, Params: map[string]float64{"mu": 5, "sigma": 0.5}},
			lnMean(5, 0.5), lnVar(5, 0.5), 0.04, rounded(func(x float64) float64 { return phi(math.Log(x), 5, 0.5) }, 1, math.Inf(1))},
		{"lognormal bounded", Distribution{Type: DistLognormal, Params: map[string]float64{"mu": 5, "sigma": 1, "min": 20, "max": 400}},
			-1, -1, 0, rounded(func(x float64) float64 { return phi(math.Log(x), 5, 1) }, 20, 400)},
		{"pareto_lognormal", Distribution{Type: DistParetoLognormal, Params: map[string]float64{"alpha": 2.5, "xm": 100, "mu": 5, "sigma": 0.5, "mix_weight": 0.3}},
			0.3*2.5*100/1.5 + 0.7*lnMean(5, 0.5), -1, 0.04, rounded(mix(0.3, 2.5, 100, 5, 0.5), 1, math.Inf(1))},
		{"uniform", Distribution{Type: DistUniform, Params: map[string]float64{"min": 10, "max": 20}},
			15, (11*11 - 1) / 12.0, 0.03, func(k float64) float64 { return math.Min(1, math.Max(0, (math.Floor(k)-9)/11)) }},
		{"empirical", Distribution{Type: DistEmpirical, Params: map[string]float64{"64": 5, "512": 3, "2048": 2, "9": 0}},
			0.5*64 + 0.3*512 + 0.2*2048, 0.5*64*64 + 0.3*512*512 + 0.2*2048*2048 - math.Pow(0.5*64+0.3*512+0.2*2048, 2), 0.03,
			func(k float64) float64 {
				switch {
				case k < 64:
					return 0
				case k < 512:
					return 0.5
				case k < 2048:
					return 0.8
				}
				return 1
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newLengthSampler("d", &tt.d, "")
			if err != nil {
				t.Fatal(err)
			}
			r := NewStream(5, "test/"+tt.name)
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(s.sample(r))
			}
			mean, variance := moments(xs)
			if tt.mean >= 0 {
				assertClose(t, "mean", mean, tt.mean, tt.tol)
			}
			if tt.variance >= 0 {
				assertClose(t, "variance", variance, tt.variance, 2*tt.tol)
			}
			if d := ksDistance(xs, tt.cdf); d > ksBound(n) {
				t.Errorf("KS distance = %.4f, want <= %.4f", d, ksBound(n))
			}
			for _, x := range xs {
				if x < 1 || x != math.Trunc(x) {
					t.Fatalf("sample %g: want an integer >= 1", x)
				}
			}
		})
	}
}

func TestLengthEdgeCases(t *testing.T) {
	r := NewStream(1, "edge")
	tests := []struct {
		name string
		d    Distribution
		want int // every sample
	}{
		{"gaussian min = max", Distribution{Type: DistGaussian, Params: map[string]float64{"mean": 9, "std_dev": 5, "min": 40, "max": 40}}, 40},
		{"constant rounds", Distribution{Type: DistConstant, Params: map[string]float64{"value": 42.5}}, 43},
		{"constant never below 1", Distribution{Type: DistConstant, Params: map[string]float64{"value": -7}}, 1},
		{"gaussian below 1 raised", Distribution{Type: DistGaussian, Params: map[string]float64{"mean": -100, "std_dev": 1, "min": -200, "max": 0}}, 1},
		{"huge capped", Distribution{Type: DistConstant, Params: map[string]float64{"value": 1e300}}, MaxSampleTokens},
		{"single empirical value", Distribution{Type: DistEmpirical, Params: map[string]float64{"77": 0.1}}, 77},
	}
	for _, tt := range tests {
		s, err := newLengthSampler("d", &tt.d, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i := 0; i < 100; i++ {
			if got := s.sample(r); got != tt.want {
				t.Fatalf("%s: sample = %d, want %d", tt.name, got, tt.want)
			}
		}
	}
	ratio, _ := newLengthSampler("d", &Distribution{Type: DistConstant, Params: map[string]float64{"value": 250}}, "")
	if got := ratio.sampleRatio(r); got != 1 {
		t.Errorf("reason ratio of 250 = %g, want 1 (clamped)", got)
	}
	ratio, _ = newLengthSampler("d", &Distribution{Type: DistConstant, Params: map[string]float64{"value": 35}}, "")
	if got := ratio.sampleRatio(r); got != 0.35 {
		t.Errorf("reason ratio of 35 = %g, want 0.35", got)
	}
}

func TestEmpiricalFiles(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		want    map[int]float64 // normalised probabilities
		wantErr string
	}{
		{"pmf with header and comments", "tokens,probability\n# a comment\n64,0.5\n\n512, 0.25\n2048\t0.25\n",
			map[int]float64{64: 0.5, 512: 0.25, 2048: 0.25}, ""},
		{"observed lengths", "10\n10\n20\n10\n", map[int]float64{10: 0.75, 20: 0.25}, ""},
		{"zero weights dropped", "5 0\n6 2\n", map[int]float64{6: 1}, ""},
		{"negative weight", "5 0\n6 2\n7 -1\n", nil, "f.txt:3: weight -1 is negative: a weight is a share, 0 or more"},
		{"mixed forms", "10\n20 0.5\n", nil, "f.txt:2: mixes observed lengths and PMF rows"},
		{"bad count", "10\nabc\n", nil, `f.txt:2: "abc" is not a token count in [0, 4194304]`},
		{"bad weight", "10 x\n", nil, `f.txt:1: weight "x" is not a finite number`},
		{"too many fields", "1 2 3\n", nil, "f.txt:1: want a token count, or a token count and a weight; got 3 fields"},
		{"empty", "# nothing\n", nil, "f.txt: no data rows"},
		{"only zero weights", "5 0\n", nil, "d: empirical distribution has no positive finite weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, dir, "f.txt", tt.content)
			s, err := newLengthSampler("d", &Distribution{Type: DistEmpirical, File: "f.txt"}, dir)
			if tt.wantErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want suffix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			prev := 0.0
			got := map[int]float64{}
			for i, v := range s.values {
				got[v] = s.cdf[i] - prev
				prev = s.cdf[i]
			}
			for v, p := range tt.want {
				if math.Abs(got[v]-p) > 1e-12 {
					t.Errorf("P(%d) = %g, want %g", v, got[v], p)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("support = %v, want %v", got, tt.want)
			}
		})
	}
	_, err := newLengthSampler("d", &Distribution{Type: DistEmpirical, File: "missing.txt"}, dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing.txt")) {
		t.Errorf("missing file: error = %v, want the path named", err)
	}
}

func TestDistributionErrors(t *testing.T) {
	tests := []struct {
		d    Distribution
		want string
	}{
		{Distribution{Type: "zipf"}, `d.type: unknown distribution type "zipf" (valid: constant, empirical, exponential, gaussian, lognormal, pareto_lognormal, uniform)`},
		{Distribution{}, `d.type: missing distribution type (valid: constant, empirical, exponential, gaussian, lognormal, pareto_lognormal, uniform)`},
		{Distribution{Type: DistGaussian, Params: map[string]float64{"mean": 1, "std_dev": 1, "min": 1}}, `d.params: gaussian distribution needs parameter "max"`},
		{Distribution{Type: DistGaussian, Params: map[string]float64{"mean": 1, "std_dev": 1, "min": 5, "max": 2}}, `d.params.min: min 5 exceeds max 2`},
		{Distribution{Type: DistGaussian, Params: map[string]float64{"mean": 1, "std_dev": -1, "min": 1, "max": 2}}, `d.params.std_dev: -1 must be >= 0`},
		{Distribution{Type: DistGaussian, Params: map[string]float64{"mean": math.NaN(), "std_dev": 1, "min": 1, "max": 2}}, `d.params.mean: NaN is not finite`},
		{Distribution{Type: DistExponential, Params: map[string]float64{"mean": 0}}, `d.params.mean: 0 must be > 0`},
		{Distribution{Type: DistExponential, Params: map[string]float64{"mean": 5, "stdev": 1}}, `d.params.stdev: unknown parameter for exponential (valid: mean, min, max)`},
		{Distribution{Type: DistParetoLognormal, Params: map[string]float64{"alpha": 1, "xm": 1, "mu": 1, "sigma": 1, "mix_weight": 2}}, `d.params.mix_weight: 2 out of range [0, 1]`},
		{Distribution{Type: DistUniform, Params: map[string]float64{"min": 1.5, "max": 4}}, `d.params.min: 1.5 is not a whole number of tokens`},
		{Distribution{Type: DistEmpirical}, `d: empirical distribution needs params ("<token count>": weight) or file`},
		{Distribution{Type: DistEmpirical, Params: map[string]float64{"ten": 1}}, `d.params.ten: key "ten" is not a token count in [0, 4194304]`},
		{Distribution{Type: DistEmpirical, Params: map[string]float64{"1": 1}, File: "x"}, `d: empirical distribution takes params or file, not both`},
		{Distribution{Type: DistConstant, Params: map[string]float64{"value": 1}, File: "x"}, `d.file: file is only used by empirical distributions, not constant`},
	}
	for _, tt := range tests {
		_, err := newLengthSampler("d", &tt.d, "")
		if err == nil || err.Error() != tt.want {
			t.Errorf("%+v: error = %v, want %q", tt.d, err, tt.want)
		}
	}
}

func TestEmpiricalFromRealTrace(t *testing.T) {
	// Observed prompt lengths of a real Azure trace (testdata, CC-BY-4.0):
	// sampling them must reproduce their distribution.
	d := Distribution{Type: DistEmpirical, File: "azure_conv_context_tokens.txt"}
	s, err := newLengthSampler("d", &d, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	obs, lerr := loadEmpiricalFile("azure_conv_context_tokens.txt", "testdata")
	if lerr != nil {
		t.Fatal(lerr)
	}
	var data []float64
	for _, v := range sortedIntKeys(obs) {
		for range int(obs[v]) {
			data = append(data, float64(max(v, 1)))
		}
	}
	if len(data) != 1000 {
		t.Fatalf("observations = %d, want 1000", len(data))
	}
	const n = 20000
	r := NewStream(9, "azure")
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(s.sample(r))
	}
	wantMean, _ := moments(data)
	gotMean, _ := moments(xs)
	assertClose(t, "mean", gotMean, wantMean, 0.03)
	cdf := func(k float64) float64 {
		c := 0
		for _, x := range data {
			if x <= k {
				c++
			}
		}
		return float64(c) / float64(len(data))
	}
	if d := ksDistance(xs, cdf); d > ksBound(n) {
		t.Errorf("KS distance to the trace = %.4f, want <= %.4f", d, ksBound(n))
	}
}

func sortedIntKeys(m map[int]float64) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
