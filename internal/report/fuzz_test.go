package report

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParseGates: the gate parser never panics, and every error points inside
// the expression (or just past its end).
func FuzzParseGates(f *testing.F) {
	for _, seed := range []string{"ttft.mape<0.15,e2e.pearson>0.9,grade>=good", "valid==true", "goodput.c.sim_slo_attainment>=90%",
		"ttft.real_p99<=1.5s", "mape<", ",", "ttft..x", "r>-1e3", "hit_rate.within!=false", "µ<1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		g, err := ParseGates(expr, nil)
		if err == nil {
			for _, x := range g.list {
				if x.Text == "" || x.op == "" {
					t.Fatalf("%q: gate without text or op: %+v", expr, x)
				}
			}
			return
		}
		var se *GateSyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("%q: error %T %v, want GateSyntaxError", expr, err, err)
		}
		if n := utf8.RuneCountInString(expr); se.Column < 1 || se.Column > n+1 {
			t.Fatalf("%q: column %d outside 1..%d", expr, se.Column, n+1)
		}
	})
}
