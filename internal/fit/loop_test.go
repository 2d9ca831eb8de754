package fit

import (
	"context"
	"math"
	"testing"
)

// lineReplayer is a replay whose equations are those of y = 3·x at a few
// points, whatever θ, and whose objective is |θ − 3|: every solve lands on
// 3, so each loop option shows in the iterates.
func lineReplayer(seen *[][]float64) Replayer[float64] {
	return func(_ context.Context, _ int, theta []float64, eqs bool) (Pass[float64], error) {
		*seen = append(*seen, append([]float64(nil), theta...))
		p := Pass[float64]{Objective: math.Abs(theta[0] - 3), Value: theta[0]}
		if eqs {
			for x := 1.0; x <= 4; x++ {
				p.Equations = append(p.Equations, Equation{X: []float64{x}, Y: 3 * x, W: 1, Sigma: 1})
			}
		}
		return p, nil
	}
}

func TestIterateOptions(t *testing.T) {
	ctx := context.Background()
	var seen [][]float64
	// Damping ½ halves the distance to the solve each pass; KeepBest
	// keeps the last (closest) iterate; the floor lifts the start's
	// first step.
	out, err := Iterate(ctx, Loop{Iterations: 3, Ridge: 1e-12, RidgeToCurrent: true, Damping: 0.5, Keep: KeepBest, Lower: []float64{2}}, []float64{0}, lineReplayer(&seen))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 2, 2.5}
	for i, w := range want {
		if math.Abs(seen[i][0]-w) > 1e-6 {
			t.Errorf("iterate %d = %v, want %v", i, seen[i][0], w)
		}
	}
	if out.Index != 2 || out.Passes != 3 || math.Abs(out.Theta[0]-2.5) > 1e-6 || math.Abs(out.Start.Objective-3) > 1e-9 {
		t.Errorf("kept iterate %d (θ %v) after %d passes, start objective %v; want 2 (2.5) after 3, 3", out.Index, out.Theta, out.Passes, out.Start.Objective)
	}
	// KeepMean with a tolerance: the first solve is exact, the second
	// does not move, so the loop stops converged and replays the mean of
	// the second half of the solves once more.
	seen = nil
	out, err = Iterate(ctx, Loop{Iterations: 10, Tolerance: 1e-3, Ridge: 1e-12}, []float64{1}, lineReplayer(&seen))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Converged || out.Passes != 3 || out.Index != -1 || math.Abs(out.Theta[0]-3) > 1e-6 {
		t.Errorf("converged %v, passes %d, index %d, θ %v; want true, 3, -1, 3", out.Converged, out.Passes, out.Index, out.Theta)
	}
}
