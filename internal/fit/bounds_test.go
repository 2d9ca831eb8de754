package fit

import (
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
)

// TestPhysicsOnBound: a free share that ends on its range's edge is named.
func TestPhysicsOnBound(t *testing.T) {
	g, _ := latency.LookupGPU("H100")
	beta := latency.PhysicsDefaultBeta(g)
	if b := physicsOnBound(beta); len(b) != 0 {
		t.Errorf("the defaults: %v", b)
	}
	_, hi := latency.PhysicsBounds(latency.PhFlopsEff)
	beta[latency.PhFlopsEff] = hi
	b := physicsOnBound(beta)
	if len(b) != 1 || b[0].Name != "flops_eff" || b[0].Lower || !strings.Contains(b[0].String(), "flops_eff ended on its upper bound (1.25") {
		t.Errorf("FLOP/s share on its upper bound: %v", b)
	}
}

// TestFittedYAMLModelFree: a fit over several servers writes the
// coefficients and no server.
func TestFittedYAMLModelFree(t *testing.T) {
	d := deploy.Default()
	d.LatencyModel, d.AlphaCoeffs = "physics", []float64{1000, 0, 0}
	d.BetaCoeffs = latency.PhysicsDefaultBeta(latency.GPU{})
	for _, free := range []bool{false, true} {
		b, err := FittedYAML(d, "c", free)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, k := range []string{"model:", "gpu:", "tensor_parallel:"} {
			if strings.Contains(s, "\n"+k) == free {
				t.Errorf("model-free %v: %s present %v:\n%s", free, k, !free, s)
			}
		}
		if !strings.Contains(s, "beta_coeffs:") || !strings.Contains(s, "latency_model: physics") {
			t.Errorf("model-free %v: no coefficients:\n%s", free, s)
		}
	}
}
