package fit

import "testing"

// TestStepTimeSigma: σ is √(π/2) × the larger of the E2E and TTFT MAPE,
// of the held-out requests when there are, bounded, and 0 when nothing was
// compared.
func TestStepTimeSigma(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want float64
	}{
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02}}, 0.0251},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02}, Holdout: Errors{N: 5, E2EMAPE: 0.04}}, 0.0501},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.9}}, 0.5},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02, TTFTMAPE: 0.06}}, 0.0752},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02, TTFTMAPE: 0.01}}, 0.0251},
		{Result{Fit: Errors{N: 10, TTFTMAPE: 0.06}, Holdout: Errors{N: 5, E2EMAPE: 0.04, TTFTMAPE: 0.03}}, 0.0501},
		{Result{}, 0},
	} {
		if got := StepTimeSigma(&c.res); got != c.want {
			t.Errorf("%+v: σ %v, want %v", c.res, got, c.want)
		}
	}
}
