package latency

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// allModels builds every kind of model for every embedded model on every
// embedded GPU and valid TP in {1, 2, 4, 8}. The blackbox model uses fixed
// coefficients (its table covers two models only).
func allModels(t testing.TB) map[string]Model {
	t.Helper()
	out := map[string]Model{}
	bb, err := NewBlackbox(BlackboxConfig{Alpha: []float64{100, 0.5, 10}, Beta: []float64{5000, 20, 30}})
	if err != nil {
		t.Fatal(err)
	}
	out["blackbox"] = bb
	for _, name := range KnownModels() {
		mc, err := LookupModel(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, gpuName := range KnownGPUs() {
			g, _ := LookupGPU(gpuName)
			for _, tp := range []int{1, 2, 4, 8} {
				if mc.Heads%tp != 0 || (mc.KVHeads >= tp && mc.KVHeads%tp != 0) {
					continue
				}
				key := fmt.Sprintf("%s/%s/tp%d", name, gpuName, tp)
				p, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: mc, GPU: g, TP: tp})
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				out["physics/"+key] = p
				r, err := NewRoofline(RooflineConfig{Model: mc, GPU: g, TP: tp})
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				out["roofline/"+key] = r
			}
		}
	}
	return out
}

func randomStep(rng *rand.Rand) *Step {
	s := &Step{}
	for range rng.IntN(4) {
		ctx := rng.IntN(8192)
		n := 1 + rng.IntN(2048)
		s.Prefill = append(s.Prefill, PrefillWork{NewTokens: n, Context: ctx, Target: ctx + n + rng.IntN(512)})
	}
	s.DecodeCount = rng.IntN(300)
	for range s.DecodeCount {
		s.DecodeContextSum += int64(1 + rng.IntN(16384))
	}
	return s
}

// grow returns a copy of s with some work added: a token to a prefill, a new
// prefill, a decode request, or decode context.
func grow(s *Step, rng *rand.Rand) *Step {
	g := &Step{Prefill: append([]PrefillWork(nil), s.Prefill...), DecodeCount: s.DecodeCount, DecodeContextSum: s.DecodeContextSum}
	switch op := rng.IntN(4); {
	case op == 0 && len(g.Prefill) > 0:
		i := rng.IntN(len(g.Prefill))
		g.Prefill[i].NewTokens += 1 + rng.IntN(64)
		g.Prefill[i].Target = max(g.Prefill[i].Target, g.Prefill[i].Context+g.Prefill[i].NewTokens)
	case op == 1:
		g.Prefill = append(g.Prefill, PrefillWork{NewTokens: 1 + rng.IntN(64), Context: rng.IntN(100), Target: 200})
	case op == 2:
		g.DecodeCount++
		g.DecodeContextSum += int64(rng.IntN(5000))
	default:
		if g.DecodeCount == 0 {
			g.DecodeCount = 1
		}
		g.DecodeContextSum += int64(1 + rng.IntN(5000))
	}
	return g
}

// TestStepTimeMonotone: for every model, StepTime ≥ 1 and adding work never
// makes a step shorter.
func TestStepTimeMonotone(t *testing.T) {
	models := allModels(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for name, m := range models {
		if got := m.StepTime(&Step{}); got != 1 {
			t.Errorf("%s: empty step %d, want 1", name, got)
		}
		for range 60 {
			s := randomStep(rng)
			base := m.StepTime(s)
			if base < 1 {
				t.Fatalf("%s: StepTime(%+v) = %d < 1", name, s, base)
			}
			g := grow(s, rng)
			if more := m.StepTime(g); more < base {
				t.Fatalf("%s: adding work lowered the step time %d → %d\nfrom %+v\nto   %+v", name, base, more, s, g)
			}
		}
	}
}

// TestDecodeSummaryExact compares StepTime on the (count, Σcontext) summary
// with an independent per-request evaluation of the spec's formulas over
// random splits of the decode contexts: linearity in each context is what
// makes the summary exact.
func TestDecodeSummaryExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h100, _ := LookupGPU("H100")
	l40s, _ := LookupGPU("L40S")
	checked := 0
	for _, name := range KnownModels() {
		mc, _ := LookupModel(name)
		for _, g := range []GPU{h100, l40s} {
			for _, tp := range []int{1, 2, 4} {
				if mc.Heads%tp != 0 || (mc.KVHeads >= tp && mc.KVHeads%tp != 0) {
					continue
				}
				p, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: mc, GPU: g, TP: tp})
				if err != nil {
					t.Fatal(err)
				}
				r, err := NewRoofline(RooflineConfig{Model: mc, GPU: g, TP: tp})
				if err != nil {
					t.Fatal(err)
				}
				for range 20 {
					s := randomStep(rng)
					for range 3 { // several splits of the same sum
						ctxs := splitSum(rng, s.DecodeContextSum, s.DecodeCount)
						checkNear(t, name+" physics", p.StepTime(s), refPhysics(mc, g, tp, DefaultPhysicsBeta(), s.Prefill, ctxs))
						checkNear(t, name+" roofline", r.StepTime(s), refRoofline(mc, g, tp, s.Prefill, ctxs))
						checked++
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d comparisons", checked)
	}
}

// splitSum draws n non-negative integers summing to sum.
func splitSum(rng *rand.Rand, sum int64, n int) []int64 {
	out := make([]int64, n)
	left := sum
	for i := range n - 1 {
		if left > 0 {
			out[i] = rng.Int64N(left + 1)
		}
		left -= out[i]
	}
	if n > 0 {
		out[n-1] = left
	}
	rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// checkNear accepts got == ⌊want⌋, or ±1 when want sits within float rounding
// of an integer boundary (summation order differs).
func checkNear(t *testing.T, what string, got int64, want float64) {
	t.Helper()
	w := int64(math.Floor(max(want, 1)))
	if got == w {
		return
	}
	if math.Abs(want-math.Round(want)) < 1e-7*max(1, want) && (got-w == 1 || w-got == 1) {
		return
	}
	t.Fatalf("%s: StepTime %d, per-request reference %.9f", what, got, want)
}

// refPhysics evaluates docs/simulator.md §8.3 request by request (DP 1).
func refPhysics(m *ModelConfig, g GPU, tp int, beta []float64, pf []PrefillWork, decode []int64) float64 {
	if len(pf) == 0 && len(decode) == 0 {
		return 1
	}
	L, H := float64(m.Layers), float64(m.Hidden)
	nh, dh, dkv := float64(m.Heads), float64(m.HeadDim), float64(m.KVHeads*m.HeadDim)
	TP := float64(tp)
	kvPerGPU := dkv / TP
	if m.KVHeads < tp {
		kvPerGPU = dh
	}
	var nMoE, lDense, k, N float64
	lDense = L
	if m.IsMoE() {
		nMoE = L
		if m.InterleaveMoEStep > 0 {
			nMoE = float64(m.Layers / (m.InterleaveMoEStep + 1))
		}
		lDense = L - nMoE
		k, N = float64(m.ExpertsPerToken), float64(m.Experts)
	}
	peak := g.TFlopsPeak * 1e6
	if m.WeightBytes == 1 && g.TFlopsFP8 > 0 {
		peak = g.TFlopsFP8 * 1e6
	}
	bw := g.BwPeakTBs * 1e6
	ffn := func(tokens float64) float64 {
		return lDense*tokens*6*H*float64(m.FFN)/TP + nMoE*(tokens*k/TP)*6*H*float64(m.ExpertFFN) + nMoE*tokens*6*H*float64(m.SharedFFN)/TP
	}
	var tp0, pfc float64
	for _, w := range pf {
		n, s := float64(w.NewTokens), float64(w.Target)
		tp0 += n
		pfc += L * 4 * (nh / TP) * n * (s + n/2) * dh
	}
	pfc = (pfc + L*2*tp0*H*(2*H+2*dkv)/TP + ffn(tp0)) / peak
	pfkv := L * 2 * kvPerGPU * tp0 * 2 / bw
	td := float64(len(decode))
	var dcAttn, dckv float64
	for _, c := range decode {
		dcAttn += L * 4 * (nh / TP) * float64(c) * dh
		dckv += L * 2 * kvPerGPU * 2 * (float64(c) + 1) / bw
	}
	dcc := (dcAttn + L*2*td*H*(2*H+2*dkv)/TP + ffn(td)) / peak
	tw := (L*H*(2*H+2*dkv)/TP + lDense*3*H*float64(m.FFN)/TP + nMoE*(N/TP)*3*H*float64(m.ExpertFFN) + nMoE*3*H*float64(m.SharedFFN)/TP) * m.WeightBytes / bw
	var ttp float64
	if tp > 1 {
		units := L + lDense
		if m.IsMoE() {
			units += nMoE
		}
		ttp = units * (tp0 + td) * H * 2 * 2 * (TP - 1) / TP / bw
	}
	b := beta // 11 betas: split form
	moe := 0.0
	if m.IsMoE() && m.InterleaveMoEStep > 0 {
		moe = nMoE
	}
	return b[0]*pfc + b[8]*pfkv + b[1]*dcc + b[9]*dckv + b[2]*tw + b[3]*ttp + b[4]*L + b[5]*float64(len(pf)+len(decode)) + b[6] + b[7]*moe
}

// refRoofline evaluates docs/simulator.md §8.2 request by request.
func refRoofline(m *ModelConfig, g GPU, tp int, pf []PrefillWork, decode []int64) float64 {
	if len(pf) == 0 && len(decode) == 0 {
		return 1
	}
	L, H := float64(m.Layers), float64(m.Hidden)
	nh, dh, dkv := float64(m.Heads), float64(m.HeadDim), float64(m.KVHeads*m.HeadDim)
	TP := float64(tp)
	bpp, wbpp := m.DtypeBytes, m.WeightBytes
	kvPerGPU := dkv / TP
	if m.KVHeads < tp {
		kvPerGPU = dh
	}
	lMoE := float64(m.MoELayers)
	lDense := L - lMoE
	flops := func(c, t float64) float64 {
		ce := c
		if t > 1 {
			ce = c + (t-1)/2
		}
		f := L*(2*t*(H*H+2*H*dkv)+2*t*H*H+4*nh*t*ce*dh) + L*(5*nh*t*ce+2*t*H)
		return f + lDense*4*t*H*float64(m.FFN) + lMoE*(4*t*H*float64(m.ExpertFFN)*float64(m.ExpertsPerToken)+4*t*H*float64(m.SharedFFN))
	}
	peak := g.TFlopsPeak * 1e12
	if wbpp == 1 && g.TFlopsFP8 > 0 {
		peak = g.TFlopsFP8 * 1e12
	}
	var comp, dyn, x float64
	for _, w := range pf {
		t, c := float64(w.NewTokens), float64(w.Context)
		comp += flops(c, t) / (TP * peak * g.MfuPrefill)
		dyn += 2*L*kvPerGPU*bpp*t + 2*L*kvPerGPU*bpp*c + L*H*bpp*t/TP
		x += t
	}
	for _, c := range decode {
		comp += flops(float64(c), 1) / (TP * peak * g.MfuDecode)
		dyn += 2*L*kvPerGPU*bpp + 2*L*kvPerGPU*bpp*float64(c) + L*H*bpp/TP
		x++
	}
	var nEff float64
	if m.IsMoE() {
		N, k := float64(m.Experts), float64(m.ExpertsPerToken)
		nEff = N * (1 - math.Pow((N-k)/N, x))
	}
	w := (L*(H*(H+2*dkv)+H*H) + lDense*2*H*float64(m.FFN) + lMoE*(2*H*float64(m.ExpertFFN)*nEff+2*H*float64(m.SharedFFN))) * wbpp
	mem := (w/TP + dyn) / (g.BwPeakTBs * 1e12)
	return max(comp, mem) * 1e6
}

func TestStepTimeNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := randomStep(rng)
	for name, m := range allModels(t) {
		if n := testing.AllocsPerRun(20, func() { m.StepTime(s) }); n != 0 {
			t.Errorf("%s: StepTime allocates %v times per call", name, n)
		}
	}
}

// FuzzStepTime: for any step shape on any embedded model and GPU, with the
// physics model in every CUDA-graph regime and BLIS's models, StepTime ≥ 1
// and adding a token, a decode request or decode context never lowers it.
func FuzzStepTime(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(1), uint16(512), uint16(0), uint16(1), uint16(8), uint32(4000))
	models := KnownModels()
	gpus := KnownGPUs()
	f.Fuzz(func(t *testing.T, which, gpuIdx, tp uint8, n, ctx, n2, decode uint16, ctxSum uint32) {
		mc, err := LookupModel(models[int(which)%len(models)])
		if err != nil {
			t.Fatal(err)
		}
		g, _ := LookupGPU(gpus[int(gpuIdx)%len(gpus)])
		tpn := 1 << (tp % 4)
		var ms []Model
		for _, graphs := range []CUDAGraphs{{}, {Eager: true}, {DecodeOnly: true}} {
			if p, err := NewPhysics(PhysicsConfig{Model: mc, GPU: g, TP: tpn, Graphs: graphs}); err == nil {
				ms = append(ms, p)
			}
		}
		if p, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: mc, GPU: g, TP: tpn}); err == nil {
			ms = append(ms, p)
		}
		if r, err := NewRoofline(RooflineConfig{Model: mc, GPU: g, TP: tpn}); err == nil {
			ms = append(ms, r)
		}
		s := &Step{DecodeCount: int(decode), DecodeContextSum: int64(ctxSum)}
		if n > 0 {
			s.Prefill = append(s.Prefill, PrefillWork{NewTokens: int(n), Context: int(ctx), Target: int(ctx) + int(n)})
		}
		if n2 > 0 {
			s.Prefill = append(s.Prefill, PrefillWork{NewTokens: int(n2), Target: int(n2)})
		}
		for _, m := range ms {
			base := m.StepTime(s)
			if base < 1 {
				t.Fatalf("StepTime %d < 1", base)
			}
			more := []*Step{
				{Prefill: append(append([]PrefillWork(nil), s.Prefill...), PrefillWork{NewTokens: 1, Target: 1}), DecodeCount: s.DecodeCount, DecodeContextSum: s.DecodeContextSum},
				{Prefill: s.Prefill, DecodeCount: s.DecodeCount + 1, DecodeContextSum: s.DecodeContextSum + int64(ctx)},
				{Prefill: s.Prefill, DecodeCount: max(s.DecodeCount, 1), DecodeContextSum: s.DecodeContextSum + 1 + int64(n)},
			}
			for _, g := range more {
				if got := m.StepTime(g); got < base {
					t.Fatalf("%T: adding work lowered the step time %d → %d (%+v → %+v)", m, base, got, s, g)
				}
			}
		}
	})
}

// FuzzParseModelConfig: any input either fails cleanly or yields a config
// the models and the capacity computation accept without panicking.
func FuzzParseModelConfig(f *testing.F) {
	for _, name := range KnownModels() {
		data, err := embedded.ReadFile("data/models/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(tinyDenseJSON))
	f.Add([]byte(tinyDeepSeekJSON))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseModelConfig("fuzz", data)
		if err != nil {
			return
		}
		if m.Hidden <= 0 || m.Layers <= 0 || m.Heads <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || m.FFN <= 0 {
			t.Fatalf("accepted config with a non-positive dimension: %+v", *m)
		}
		s := &Step{Prefill: []PrefillWork{{NewTokens: 100, Target: 100}}, DecodeCount: 3, DecodeContextSum: 300}
		if p, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: m, GPU: unitGPU, TP: 1}); err == nil && p.StepTime(s) < 1 {
			t.Fatal("physics StepTime < 1")
		}
		if r, err := NewRoofline(RooflineConfig{Model: m, GPU: unitGPU, TP: 1}); err == nil && r.StepTime(s) < 1 {
			t.Fatal("roofline StepTime < 1")
		}
		if blocks, err := KVBlocks(m, fastComputeGPU, 1, 0.9, 16); err == nil {
			if blocks < 1 || MaxModelLen(m, blocks, 16) < 1 {
				t.Fatalf("blocks %d, max_model_len %d", blocks, MaxModelLen(m, blocks, 16))
			}
		}
	})
}

func BenchmarkStepTime(b *testing.B) {
	mc, err := LookupModel("qwen3-14b")
	if err != nil {
		b.Fatal(err)
	}
	h100, _ := LookupGPU("H100")
	// A typical mixed step: two prefill chunks and 200 decode requests.
	s := &Step{Prefill: []PrefillWork{{NewTokens: 512, Context: 0, Target: 512}, {NewTokens: 1336, Context: 2048, Target: 4000}},
		DecodeCount: 200, DecodeContextSum: 200 * 700}
	pm, _ := NewTrainedPhysics(TrainedPhysicsConfig{Model: mc, GPU: h100, TP: 1})
	rm, _ := NewRoofline(RooflineConfig{Model: mc, GPU: h100, TP: 1})
	moe, _ := LookupModel("qwen3-30b-a3b")
	rmoe, _ := NewRoofline(RooflineConfig{Model: moe, GPU: h100, TP: 1})
	bm, _ := New(Config{Kind: KindBlackbox, Model: "qwen3-14b", GPU: "H100"})
	ph, _ := NewPhysics(PhysicsConfig{Model: mc, GPU: h100, TP: 1})
	l40, _ := LookupGPU("L40S")
	phFA2, _ := NewPhysics(PhysicsConfig{Model: mc, GPU: l40, TP: 1})
	phMoE, _ := NewPhysics(PhysicsConfig{Model: moe, GPU: h100, TP: 1})
	for _, bc := range []struct {
		name string
		m    Model
	}{{"physics", ph}, {"physics-fa2", phFA2}, {"physics-moe", phMoE}, {"trained-physics", pm}, {"roofline", rm}, {"roofline-moe", rmoe}, {"blackbox", bm}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for b.Loop() {
				sink += bc.m.StepTime(s)
			}
			_ = sink
		})
	}
}
