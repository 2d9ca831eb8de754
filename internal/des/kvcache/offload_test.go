package kvcache

import "testing"

// TestOffloadThreshold: with a threshold, full blocks go to the CPU tier
// only while the GPU's utilisation is above it (2 of 4 blocks used = 0.5:
// not above 0.5, above 0.25); 0 copies at every call.
func TestOffloadThreshold(t *testing.T) {
	for _, tc := range []struct {
		threshold float64
		want      int64
	}{{0, 2}, {0.25, 2}, {0.5, 0}, {0.9, 0}} {
		c := mustNew(t, Config{Blocks: 4, BlockSize: 4, CPUBlocks: 8, CPUOffloadThreshold: tc.threshold})
		a := seqOf(8, 1)
		c.Admit(a, 0, 8)
		c.MirrorToCPU(a)
		if got := c.Stats().CPUMirrored; got != tc.want {
			t.Errorf("threshold %g at utilisation %g: %d blocks offloaded, want %d", tc.threshold, c.Utilization(), got, tc.want)
		}
	}
	if _, err := New(Config{Blocks: 4, BlockSize: 4, CPUBlocks: 8, CPUOffloadThreshold: 1.5}); err == nil {
		t.Error("threshold 1.5 accepted")
	}
}

// TestThrashing: a block reloaded from the CPU tier less than 1 ms after
// its copy counts as thrashing; one reloaded later does not. Each reload
// costs base + ⌈b / bandwidth⌉ µs, summed in CPUReloadUs.
func TestThrashing(t *testing.T) {
	for _, tc := range []struct {
		reloadAt int64
		want     int64
	}{{500, 2}, {999, 2}, {1000, 0}, {5000, 0}} {
		c := mustNew(t, Config{Blocks: 3, BlockSize: 4, CPUBlocks: 8, CPUBandwidthTokensUs: 2, CPUBaseLatencyUs: 5})
		c.SetNow(0)
		a := seqOf(8, 1)
		c.Admit(a, 0, 8)
		c.MirrorToCPU(a)
		c.Release(a)
		x := seqOf(12, 900) // evicts a's blocks from the GPU
		c.Admit(x, 0, 12)
		c.Release(x)
		c.SetNow(tc.reloadAt)
		b := seqOf(12, 1)
		if _, ok := c.Admit(b, 8, 4); !ok {
			t.Fatal("admit refused")
		}
		st := c.Stats()
		if st.CPUReloads != 2 || st.CPUThrashing != tc.want || st.CPUReloadUs != 2*(5+2) {
			t.Errorf("reload at %d µs: %d reloads, %d thrashing, %d µs; want 2, %d, 14", tc.reloadAt, st.CPUReloads, st.CPUThrashing, st.CPUReloadUs, tc.want)
		}
	}
}
