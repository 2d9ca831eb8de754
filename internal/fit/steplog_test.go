package fit

import (
	"slices"
	"testing"
)

func TestStepLog(t *testing.T) {
	l := NewStepLog(2, 0)
	// Three steps: [0,10) basis (1,2) offset 5; [10,30) (3,4) 6; [30,31) (5,6) 7
	// (a zero-length step lasts 1 µs).
	for _, s := range []struct {
		at, d  int64
		b      []float64
		offset float64
	}{{0, 10, []float64{1, 2}, 5}, {10, 20, []float64{3, 4}, 6}, {30, 0, []float64{5, 6}, 7}} {
		l.Event(s.at, 0)
		l.Add(s.d, s.b, s.offset)
	}
	if l.Len() != 3 || l.StartUs(1) != 10 || l.EndUs(1) != 30 || l.EndUs(2) != 31 {
		t.Fatalf("log: %d steps, step 1 [%d, %d), step 2 ends %d; want 3, [10, 30), 31", l.Len(), l.StartUs(1), l.EndUs(1), l.EndUs(2))
	}
	tests := []struct {
		name       string
		from, to   int64
		phi        float64
		wantLo     int
		wantHi     int
		wantBasis  []float64
		wantOffset float64
	}{
		{"all", -1, 31, 1, 0, 3, []float64{9, 12}, 18},
		{"ends in (10, 30]", 10, 30, 1, 1, 2, []float64{3, 4}, 6},
		{"first scaled by a half", 5, 30, 0.5, 0, 2, []float64{3.5, 5}, 8.5},
		{"none", 31, 40, 1, 3, 3, []float64{0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := l.Steps(tt.from, tt.to)
			dst := []float64{99, 99}
			off := l.Sum(lo, hi, tt.phi, dst)
			if lo != tt.wantLo || hi != tt.wantHi || !slices.Equal(dst, tt.wantBasis) || off != tt.wantOffset {
				t.Errorf("steps [%d, %d), basis %v, offset %v; want [%d, %d), %v, %v", lo, hi, dst, off, tt.wantLo, tt.wantHi, tt.wantBasis, tt.wantOffset)
			}
		})
	}
	l.Reset()
	if l.Len() != 0 || l.Sum(0, 0, 1, []float64{1, 1}) != 0 {
		t.Errorf("after Reset: %d steps, want 0", l.Len())
	}
	l.Add(4, []float64{1, 1}, 2)
	if l.StartUs(0) != 0 || l.EndUs(0) != 4 {
		t.Errorf("after Reset the clock is at %d, want 0", l.StartUs(0))
	}
}
