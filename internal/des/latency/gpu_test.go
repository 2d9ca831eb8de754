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
		pcie   bool
	}{{"H100", true, 450, false}, {"h200-141", true, 450, false}, {"H20", true, 450, false}, {"H800", true, 200, false},
		{"GH200", true, 32, true}, {"A100-80", false, 300, false}, {"L40S", false, 32, true}, {"RTX-PRO-6000", false, 32, true},
		{"H100-PCIe", true, 64, true}, {"A100-PCIE-40GB", false, 32, true}, {"B200", false, 900, false}, {"GB200", false, 900, false}} {
		g := GPU{Name: c.name}
		if f := g.family(); f.hopper != c.hopper || g.linkGBs() != c.link || g.overPCIe() != c.pcie {
			t.Errorf("%s: hopper %v link %v PCIe %v, want %v %v %v", c.name, f.hopper, g.linkGBs(), g.overPCIe(), c.hopper, c.link, c.pcie)
		}
	}
	if got := (GPU{Name: "H100", LinkGBs: 900}).linkGBs(); got != 900 {
		t.Errorf("the file's LinkGBs: got %v, want 900", got)
	}
}

// TestLinkDefaults: an all-reduce over PCIe costs NCCL's measured 25 µs a
// call at a quarter of the link, over NVLink 8 µs at 73%; a hardware
// file's link decides over the name: faster than PCIe 5.0 x16 is NVLink.
func TestLinkDefaults(t *testing.T) {
	for _, c := range []struct {
		gpu       GPU
		share, us float64
	}{
		{GPU{Name: "H100"}, 0.73, 8},
		{GPU{Name: "A100-80"}, 0.73, 8},
		{GPU{Name: "L40S"}, 0.25, 25},
		{GPU{Name: "RTXPRO6000", LinkGBs: 64}, 0.25, 25},
		{GPU{Name: "B200", LinkGBs: 900}, 0.73, 8},
		{GPU{Name: "H100", LinkGBs: 64}, 0.25, 25}, // the file says PCIe 5.0 x16
		{GPU{Name: "H100-PCIe"}, 0.25, 25},
		{GPU{Name: "B200"}, 0.73, 8},
	} {
		b := PhysicsDefaultBeta(c.gpu)
		if b[PhLinkEff] != c.share || b[PhLinkOpUs] != c.us {
			t.Errorf("%s (link %v GB/s): share %v, %v µs a call; want %v, %v", c.gpu.Name, c.gpu.LinkGBs, b[PhLinkEff], b[PhLinkOpUs], c.share, c.us)
		}
		lo, hi := PhysicsBounds(PhLinkEff)
		if b[PhLinkEff] < lo || b[PhLinkEff] > hi {
			t.Errorf("%s: link share %v outside its bounds [%v, %v]", c.gpu.Name, b[PhLinkEff], lo, hi)
		}
		lo, hi = PhysicsBounds(PhLinkOpUs)
		if b[PhLinkOpUs] < lo || b[PhLinkOpUs] > hi {
			t.Errorf("%s: %v µs a call outside its bounds [%v, %v]", c.gpu.Name, b[PhLinkOpUs], lo, hi)
		}
	}
}
