package latency

import "testing"

// TestGPUFamily pins the one table that classifies GPUs by name: FlashAttention 3
// on Hopper only, the interconnect by generation, and the hardware file's
// LinkGBs over the table.
func TestGPUFamily(t *testing.T) {
	for _, c := range []struct {
		name   string
		hopper bool
		link   float64
	}{{"H100", true, 450}, {"h200-141", true, 450}, {"H20", true, 450}, {"H800", true, 200},
		{"GH200", true, 32}, {"A100-80", false, 300}, {"L40S", false, 32}, {"RTX-PRO-6000", false, 32}} {
		g := GPU{Name: c.name}
		if f := g.family(); f.hopper != c.hopper || g.linkGBs() != c.link {
			t.Errorf("%s: hopper %v link %v, want %v %v", c.name, f.hopper, g.linkGBs(), c.hopper, c.link)
		}
	}
	if got := (GPU{Name: "H100", LinkGBs: 900}).linkGBs(); got != 900 {
		t.Errorf("the file's LinkGBs: got %v, want 900", got)
	}
}
