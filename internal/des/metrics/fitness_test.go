package metrics

import (
	"math"
	"strings"
	"testing"
)

// TestFitness: BLIS's normalisation (its configuration reference,
// "Fitness Evaluation"): latencies 1/(1 + µs/1000), throughputs
// x/(x + reference) with 100 requests/s and 10 000 tokens/s, summed by
// weight.
func TestFitness(t *testing.T) {
	s := &Summary{ResponsesPerSec: 25, TokensPerSec: 10000, TTFTP99Ms: 3, E2EMeanMs: 1, ITLP50Ms: 0}
	ws, err := ParseFitnessWeights("throughput:0.5, p99_ttft:0.25,tokens_per_sec:0.1,mean_e2e:0.1,p50_itl:0.05")
	if err != nil {
		t.Fatal(err)
	}
	f := ComputeFitness(s, ws)
	want := []FitnessComponent{
		{"throughput", 0.5, 25, "req/s", 0.2},
		{"p99_ttft", 0.25, 3, "ms", 0.25},
		{"tokens_per_sec", 0.1, 10000, "tok/s", 0.5},
		{"mean_e2e", 0.1, 1, "ms", 0.5},
		{"p50_itl", 0.05, 0, "ms", 1},
	}
	for i, c := range f.Components {
		if c.Metric != want[i].Metric || c.Weight != want[i].Weight || c.Raw != want[i].Raw || c.Unit != want[i].Unit ||
			math.Abs(c.Normalised-want[i].Normalised) > 1e-15 {
			t.Errorf("component %d: got %+v, want %+v", i, c, want[i])
		}
	}
	if sc := 0.5*0.2 + 0.25*0.25 + 0.1*0.5 + 0.1*0.5 + 0.05*1; math.Abs(f.Score-sc) > 1e-15 {
		t.Errorf("score %g, want %g", f.Score, sc)
	}
	if f := ComputeFitness(&Summary{}, []FitnessWeight{{"throughput", 1}}); f.Score != 0 {
		t.Errorf("no throughput scores %g, want 0", f.Score)
	}
}

func TestParseFitnessWeights(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"p99_ttft:1", ""},
		{"p99_tfft:1", `unknown fitness metric "p99_tfft" (did you mean "p99_ttft"?)`},
		{"p99_ttft", "want metric:weight"},
		{"p99_ttft:-1", "must be a number ≥ 0"},
		{"p99_ttft:NaN", "must be a number ≥ 0"},
		{"p99_ttft:1,p99_ttft:2", "given twice"},
		{"p99_ttft:0", "all zero"},
		{strings.Repeat("p99_ttft:1,", 70) + "p99_ttft:1", "at most 64"},
	} {
		_, err := ParseFitnessWeights(tc.in)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseFitnessWeights(%.40q): err %v, want %q", tc.in, err, tc.err)
		}
	}
}
