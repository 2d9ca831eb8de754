package latency

import "testing"

// TestScaledStepTime: a scaled model's step is the inner step times the
// factor; the overheads stay the inner model's; a factor of 1 is the
// model itself and a factor that is not positive is refused.
func TestScaledStepTime(t *testing.T) {
	p := qwen3H100(t, CUDAGraphs{})
	st := prompts(decodes(252, 1050), 1, 990)
	inner := p.StepTime(&st)
	for _, f := range []float64{0.8684, 1.1316, 2} {
		m, err := NewScaled(p, f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := m.StepTime(&st), int64(float64(inner)*f); got != want {
			t.Errorf("factor %g: step %d µs, want %d", f, got, want)
		}
		if m.TokenOverhead() != p.TokenOverhead() || m.EndOverhead() != p.EndOverhead() || m.QueueDelay(990) != p.QueueDelay(990) {
			t.Errorf("factor %g: overheads scaled", f)
		}
	}
	if m, _ := NewScaled(p, 1); m != Model(p) {
		t.Errorf("factor 1: got a wrapper, want the model itself")
	}
	for _, f := range []float64{0, -1} {
		if _, err := NewScaled(p, f); err == nil {
			t.Errorf("factor %g: no error", f)
		}
	}
	if m, _ := NewScaled(p, 1e-9); m.StepTime(&Step{}) != 1 {
		t.Errorf("a tiny factor: step below 1 µs")
	}
}
