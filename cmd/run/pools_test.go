package main

import (
	"testing"

	"servesim/internal/sweep"
)

// TestHeterogeneousPD is the README's heterogeneous P/D example at a
// smaller scale: one prefill and two decode instances, each pool on an
// H100 or an A100-80. Prefill is compute-bound, so an A100 prefill pool
// (about a third of the H100's FLOPs) raises p99 TTFT; decode is
// memory-bound, so an A100 decode pool (about 60% of the H100's HBM
// bandwidth) raises p99 ITL and leaves TTFT about as it was. H100 prefill
// with A100 decode costs less than three H100s and meets the SLO the
// reverse misses.
func TestHeterogeneousPD(t *testing.T) {
	out := mustRun(t, "sweep", "--workload", "chatbot", "--num-requests", "1500", "--rate", "30",
		"--prefill-instances", "1", "--decode-instances", "2", "--pd-decider", "always",
		"--grid", "prefill_gpu=H100,A100-80", "--grid", "decode_gpu=H100,A100-80",
		"--slo", "ttft.p99<200ms,itl.p99<30ms", "--format", "json")
	d := decodeDoc(t, out)
	rows := map[string]*sweep.Row{}
	for i := range d.Rows {
		r := &d.Rows[i]
		rows[r.Param("prefill_gpu")+"/"+r.Param("decode_gpu")] = r
	}
	hh, ha, ah := rows["H100/H100"], rows["H100/A100-80"], rows["A100-80/H100"]
	if hh == nil || ha == nil || ah == nil || hh.TTFT == nil || ha.TTFT == nil || ah.TTFT == nil {
		t.Fatalf("rows %v, want every pool mix with latencies", rows)
	}
	if !(ah.TTFT.P99 > 2*hh.TTFT.P99) || !(ha.ITL.P99 > 1.5*hh.ITL.P99) {
		t.Errorf("A100 prefill: TTFT p99 %.1f ms against H100's %.1f; A100 decode: ITL p99 %.1f ms against H100's %.1f; want the prefill pool to set TTFT and the decode pool ITL",
			ah.TTFT.P99, hh.TTFT.P99, ha.ITL.P99, hh.ITL.P99)
	}
	if !(ah.ITL.P99 < 1.1*hh.ITL.P99) {
		t.Errorf("A100 prefill changed ITL p99: %.1f ms against %.1f", ah.ITL.P99, hh.ITL.P99)
	}
	if ha.GPU != "H100+A100-80" || len(ha.GPUMix) != 2 || ha.GPUs != 3 || ha.CostPerHour == nil || hh.CostPerHour == nil ||
		!(*ha.CostPerHour < *hh.CostPerHour) {
		t.Fatalf("H100 prefill + A100 decode: %s, %d GPUs (%v), cost %v; all H100: cost %v", ha.GPU, ha.GPUs, ha.GPUMix, ha.CostPerHour, hh.CostPerHour)
	}
	if !ha.Met() || ah.Met() {
		t.Errorf("SLO met: H100 prefill + A100 decode %v, the reverse %v; want true, false", ha.Met(), ah.Met())
	}
}
