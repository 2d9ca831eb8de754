package report

import (
	"errors"
	"strings"
	"testing"
)

// TestBelonging: SimResults of another trace are refused, naming both
// files and the unmatched counts of each side; a few unmatched requests
// are a warning.
func TestBelonging(t *testing.T) {
	const n = 20
	in := func(simIDs []int64, prompt int) Input {
		var x Input
		for i := range int64(n) {
			x.Trace = append(x.Trace, okRec(i, i*1000, i*1000+100, i*1000+500, 10, 5))
		}
		for _, id := range simIDs {
			x.Sim = append(x.Sim, simOf(id, 100, 500, prompt, 5))
		}
		x.TraceName, x.SimName = "real.csv", "sim.json"
		return x
	}
	ids := func(from, to int64) []int64 {
		var out []int64
		for i := from; i < to; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		in      Input
		wantErr string // "" = accepted
		warn    string
	}{
		{"same trace", in(ids(0, n), 10), "", ""},
		{"a few missing", in(ids(0, n-3), 10), "", "unmatched requests: 0 of 17 SimResults (sim.json) name a request_id real.csv lacks, 3 of 20 rows of real.csv have no SimResult"},
		{"another trace's ids", in(ids(9, n+9), 10), "", "9 of 20 SimResults"},
		{"mostly another trace's ids", in(ids(11, n+11), 10), "11 of 20 SimResults (sim.json) name a request_id real.csv lacks, 11 of 20 rows of real.csv have no SimResult", ""},
		{"half the rows", in(ids(0, 9), 10), "0 of 9 SimResults (sim.json) name a request_id real.csv lacks, 11 of 20 rows of real.csv have no SimResult", ""},
		{"same ids, other prompts", in(ids(0, n), 12), "20 of 20 matched requests of real.csv have another prompt length in sim.json", ""},
	} {
		r, err := Build(tc.in, DefaultConfig())
		if tc.wantErr != "" {
			var ie *InputError
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want an input error containing %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := strings.Join(r.Warnings, "\n")
		if tc.warn == "" && strings.Contains(got, "unmatched") || tc.warn != "" && !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.warn)
		}
	}
}
