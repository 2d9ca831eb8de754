package sweep

import (
	"reflect"
	"testing"
)

// A live sweep's levels split the range between its two first levels evenly.
func TestBetween(t *testing.T) {
	if got, want := Between(2, 10, 3), []float64{4, 6, 8}; !reflect.DeepEqual(got, want) {
		t.Errorf("Between(2, 10, 3): got %v, want %v", got, want)
	}
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{2.0123, 10.7891, 3, []float64{4.21, 6.4, 8.59}},
		{1.3, 31.2, 1, []float64{16.2}},
		{1, 1.001, 3, []float64{1.0002, 1.0005, 1.0008}},
		{0.9999, 1.0001, 1, []float64{1}},
	} {
		if got := Between(tc.lo, tc.hi, tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Between(%v, %v, %d): got %v, want %v (short, apart, strictly inside)", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
	if got := Between(2, 10, 0); got != nil {
		t.Errorf("Between(2, 10, 0): got %v, want none", got)
	}
}

// An overlay tags every row with its source and numbers the simulated
// cases after the real ones.
func TestOverlay(t *testing.T) {
	real := &Doc{Cases: 2, Keys: []string{"rate"}, Base: []Param{{Key: "server", Value: "s"}},
		Rows: []Row{{Case: 0}, {Case: 1}}}
	sim := &Doc{Cases: 1, Keys: []string{"rate", "gpu"}, SLO: "ttft.p99<1s", Base: []Param{{Key: "gpu", Value: "H100"}},
		Rows: []Row{{Case: 0, Params: []Param{{Key: "rate", Value: "3"}}}}}
	d := Overlay(real, sim)
	if d.Cases != 3 || !reflect.DeepEqual(d.Keys, []string{"source", "rate", "gpu"}) || d.SLO != sim.SLO {
		t.Errorf("overlay: cases %d keys %v SLO %q; want 3, [source rate gpu], the simulated SLO", d.Cases, d.Keys, d.SLO)
	}
	if r := d.Rows[2]; r.Case != 2 || r.Param("source") != "simulated" || r.Param("rate") != "3" {
		t.Errorf("simulated row: %+v", r)
	}
	if r := d.Rows[0]; r.Param("source") != "real" || len(real.Rows[0].Params) != 0 {
		t.Errorf("real row %+v; the live document must stay untouched", r)
	}
	if last := d.Base[len(d.Base)-1]; last.Key != "simulated" || last.Value != "gpu=H100" {
		t.Errorf("base: got %v, want the simulated base last", d.Base)
	}
}
