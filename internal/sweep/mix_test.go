package sweep

import (
	"math"
	"testing"
)

// TestMixedGPUCost: a row whose pools run on different GPU types costs the
// sum over its types, and the prices used name each type.
func TestMixedGPUCost(t *testing.T) {
	prices := DefaultPrices()
	h, _ := prices.Lookup("H100")
	a, _ := prices.Lookup("A100-80")
	r := Row{Status: StatusOK, GPU: "H100+A100-80", GPUs: 3, TokensPerSec: 1000,
		GPUMix: []GPUCount{{GPU: "H100", GPUs: 1}, {GPU: "A100-80", GPUs: 2}}}
	r.finish(SLO{}, prices)
	want := h.USDPerHour + 2*a.USDPerHour
	if r.CostPerHour == nil || math.Abs(*r.CostPerHour-want) > 1e-9 {
		t.Fatalf("cost %v, want %g", r.CostPerHour, want)
	}
	if used := prices.Used([]Row{r}); len(used) != 2 {
		t.Errorf("prices used %v, want A100-80 and H100", used)
	}
	r.GPUMix = append(r.GPUMix, GPUCount{GPU: "TPU", GPUs: 1})
	r.finish(SLO{}, prices)
	if r.CostPerHour != nil {
		t.Errorf("a GPU without a price: cost %g, want none", *r.CostPerHour)
	}
}
