package latency

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustKernel(t testing.TB, m *ModelConfig, g GPU, tp int, alpha, beta []float64) *KernelPhysics {
	t.Helper()
	k, err := NewKernelPhysics(KernelPhysicsConfig{Model: m, GPU: g, TP: tp, Alpha: alpha, Beta: beta})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKernelPhysicsBasisHand works every basis of the hand step out from
// the formulas on tinyDense, 1 FLOP/µs and 1 byte/µs.
func TestKernelPhysicsBasisHand(t *testing.T) {
	m := mustModel(t, tinyDenseJSON)
	// Dense GEMM parameters: L·H·(n_h·d_h + 2d_kv + n_h·d_h) + L·3·H·F
	//   = 2·8·(8 + 8 + 8) + 2·3·8·16 = 384 + 768 = 1152; W_g/BW = 2304 µs;
	//   T* = 2304 / (2·1152) = 1 token. The hand step has T = 5 + 2 = 7, x = 7.
	// Prefill attention Σ n(c + n/2) = 3·1.5 + 2·5 = 14.5, times
	//   L·4·n_h·d_h = 64 → 928. Decode KV: L·2·d_kv·2 bytes = 32 per token
	//   of context, Σc = 9 → 288. Sampled: the first prefill finishes (3 of
	//   target 3), the second does not (4 + 2 < 10), plus 2 decodes = 3.
	// LM head: V·H·2 bytes = 512 µs; 2·V·H = 512 FLOPs per sampled row.
	want := KernelBasis{
		KPStep: 1, KPGemmWeight: 2304, KPGemmCompute: 2304 * 7, KPGemmKnee1: 2304 * 6.5, KPGemmKnee2: 2304 * 6,
		KPGemmKnee3: 2304 * 5, KPTokenLayer: 2 * 8 * 2 * 7, KPAttnLayer: 2, KPPrefillFlops: 928, KPPrefillSeq: 4,
		KPDecodeKV: 288, KPDecodeSeq: 4, KPMixedKV: 288, KPMixedKVWide: 288 * 2.0 / 256,
		KPLMHeadWeight: 512, KPLMHeadCompute: 512 * 3, KPSampleSeq: 3,
		KPHostStep: 1, KPHostSeq: 4, KPHostPrefillSeq: 2,
	}
	k := mustKernel(t, m, unitGPU, 1, nil, nil)
	got := k.Basis(handStep())
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, want[i]) {
			t.Errorf("basis %s: got %v, want %v", KernelPhysicsBetaNames()[i], got[i], want[i])
		}
	}
	// The default coefficients are the ideal roofline: GEMMs at
	// max(W/BW, FLOPs/peak) = 2304·7, the rest at data-sheet speed.
	wantTime := 2304*7 + 224 + 928 + 288 + 512 + 1536.0
	if st := k.StepTime(handStep()); st != int64(wantTime) {
		t.Errorf("default StepTime %d, want %v", st, wantTime)
	}
	// A decode-only step has no mixed-kernel terms.
	dec := k.Basis(&Step{DecodeCount: 2, DecodeContextSum: 9})
	if dec[KPMixedKV] != 0 || dec[KPMixedKVWide] != 0 || dec[KPDecodeKV] != 288 {
		t.Errorf("decode-only step: mixed %v %v, decode KV %v", dec[KPMixedKV], dec[KPMixedKVWide], dec[KPDecodeKV])
	}
}

// TestKernelPhysicsTPAndMoE checks the collective and expert terms.
func TestKernelPhysicsTPAndMoE(t *testing.T) {
	// tinyDense at TP 2: n_coll = L + L_dense = 4 all-reduces of
	// T·H·2 bytes·2(TP−1)/TP = 16 bytes per token each → 64 per token.
	k := mustKernel(t, mustModel(t, tinyDenseJSON), unitGPU, 2, nil, nil)
	b := k.Basis(handStep())
	if b[KPLinkOps] != 4 || b[KPLinkBytes] != 64*7 {
		t.Errorf("TP 2 link: ops %v bytes %v, want 4 and 448", b[KPLinkOps], b[KPLinkBytes])
	}
	if b1 := mustKernel(t, mustModel(t, tinyDenseJSON), unitGPU, 1, nil, nil).Basis(handStep()); b1[KPLinkOps] != 0 || b1[KPLinkBytes] != 0 {
		t.Errorf("TP 1 has collectives: %v %v", b1[KPLinkOps], b1[KPLinkBytes])
	}
	// tinyDeepSeek: 3 MoE layers of 4 experts (k 2, F_moe 6). A step of 7
	// tokens touches 4·(1 − (1/2)^7) = 3.96875 experts; each costs
	// 3 MoE layers·3·H·F_moe·2 bytes = 864 µs; expert FLOPs 3·2·6·8·6 = 1728
	// per token.
	moe := mustKernel(t, mustModel(t, tinyDeepSeekJSON), unitGPU, 1, nil, nil)
	b = moe.Basis(handStep())
	if math.Abs(b[KPMoEWeight]-864*3.96875) > 1e-9 || b[KPMoECompute] != 1728*7 || b[KPMoELayer] != 3 {
		t.Errorf("MoE: weight %v compute %v layers %v", b[KPMoEWeight], b[KPMoECompute], b[KPMoELayer])
	}
	if w, c := moe.MoEBasis(10, 2); w != 864*2 || c != 1728*10 {
		t.Errorf("MoEBasis(10, 2) = %v, %v", w, c)
	}
	if w, c := k.MoEBasis(10, 2); w != 0 || c != 0 {
		t.Errorf("dense MoEBasis = %v, %v", w, c)
	}
}

// TestKernelPhysicsCoefficients: StepTime is the floored dot product with
// the betas, alphas give Q, A_end and A_tok, and bad vectors are refused.
func TestKernelPhysicsCoefficients(t *testing.T) {
	m := mustModel(t, tinyDenseJSON)
	beta := make([]float64, KPNumBetas)
	for i := range beta {
		beta[i] = float64(i%5) * 0.25
	}
	k := mustKernel(t, m, unitGPU, 1, []float64{1500.7, 300.2, 40.9}, beta)
	b := k.Basis(handStep())
	var want float64
	for i := range b {
		want += beta[i] * b[i]
	}
	if got := k.StepTime(handStep()); got != int64(want) {
		t.Errorf("StepTime %d, want ⌊%v⌋", got, want)
	}
	if k.QueueDelay(100) != 1500 || k.EndOverhead() != 300 || k.TokenOverhead() != 40 {
		t.Errorf("Q %d A_end %d A_tok %d", k.QueueDelay(100), k.EndOverhead(), k.TokenOverhead())
	}
	if k.StepTime(&Step{}) != 1 {
		t.Errorf("empty step %d, want 1", k.StepTime(&Step{}))
	}
	a, bb := k.Coefficients()
	if len(a) != 3 || len(bb) != KPNumBetas || bb[3] != beta[3] {
		t.Errorf("Coefficients: %v %v", a, bb)
	}
	bad := []struct {
		alpha, beta []float64
		want        string
	}{
		{[]float64{0, 0, 0}, nil, "together"},
		{[]float64{0, 0}, beta, "3 alpha"},
		{[]float64{0, 0, 0}, beta[:7], "want 25 beta"},
		{[]float64{0, 0, 0}, append(append([]float64{}, beta[:24]...), -1), "non-negative"},
		{[]float64{math.NaN(), 0, 0}, beta, "non-negative"},
	}
	for _, tt := range bad {
		_, err := NewKernelPhysics(KernelPhysicsConfig{Model: m, GPU: unitGPU, TP: 1, Alpha: tt.alpha, Beta: tt.beta})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("alpha %v beta len %d: got %v, want %q", tt.alpha, len(tt.beta), err, tt.want)
		}
	}
	if _, err := NewKernelPhysics(KernelPhysicsConfig{Model: m, GPU: unitGPU, TP: 3}); err == nil {
		t.Error("TP 3 with 2 heads accepted")
	}
	// Through New, by kind name.
	mm, err := New(Config{Kind: "kernel-physics", Model: "qwen3-14b", GPU: "H100", TP: 2})
	if _, ok := mm.(*KernelPhysics); err != nil || !ok {
		t.Errorf("New(kernel-physics) = %T, %v", mm, err)
	}
}

// TestKernelPhysicsProperties: over random steps and every embedded model,
// GPU and TP, with random non-negative coefficients, adding work never
// lowers the step time, and the decode (count, Σcontext) summary is exact
// (every decode term is linear in each context).
func TestKernelPhysicsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, name := range KnownModels() {
		mc, err := LookupModel(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, gpuName := range KnownGPUs() {
			g, _ := LookupGPU(gpuName)
			for _, tp := range []int{1, 2, 4} {
				if mc.Heads%tp != 0 || (mc.KVHeads >= tp && mc.KVHeads%tp != 0) {
					continue
				}
				beta := make([]float64, KPNumBetas)
				for i := range beta {
					beta[i] = rng.Float64() * 2
				}
				k := mustKernel(t, mc, g, tp, []float64{0, 0, 0}, beta)
				for range 20 {
					s := randomStep(rng)
					base := k.StepTime(s)
					if more := k.StepTime(grow(s, rng)); more < base {
						t.Fatalf("%s/%s/tp%d: adding work lowered the step time %d → %d", name, gpuName, tp, base, more)
					}
					// The basis is affine in Σc (midpoint of 0 and 2Σc is
					// Σc), so any split of the contexts costs the same.
					one := k.Basis(&Step{Prefill: s.Prefill, DecodeCount: s.DecodeCount, DecodeContextSum: s.DecodeContextSum})
					lo := k.Basis(&Step{Prefill: s.Prefill, DecodeCount: s.DecodeCount})
					hi := k.Basis(&Step{Prefill: s.Prefill, DecodeCount: s.DecodeCount, DecodeContextSum: 2 * s.DecodeContextSum})
					for i := range one {
						if mid := (lo[i] + hi[i]) / 2; math.Abs(mid-one[i]) > 1e-9*math.Max(1, one[i]) {
							t.Fatalf("%s: basis %d not affine in the context sum: %v vs %v", name, i, mid, one[i])
						}
					}
				}
			}
		}
	}
}
