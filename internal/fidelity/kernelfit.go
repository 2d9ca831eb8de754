package fidelity

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"servesim/internal/des/latency"
	"servesim/internal/nnls"
)

// KernelFit is the GPU part of a kernel-physics model fitted to a kernel
// profile: the coefficients of the KP* kernel positions (KPGemmWeight to
// KPSampleSeq; the link and host positions stay 0) and how well each group
// of kernels is reproduced.
type KernelFit struct {
	Beta   []float64          // full kernel-physics vector, kernel positions filled
	Groups map[string]FitStat // "dense", "attention", "sample", "moe"
}

// FitStat is the error of a fitted group over its profile rows, relative
// to the step each row belongs to (the row plus the dense ops of a step
// with as many tokens; for dense and sampling rows, the row itself).
type FitStat struct {
	Rows         int
	RMSRel       float64 // root mean square of (fit − measured)/measured
	MaxRel       float64
	MeanAbsRel   float64
	WorstAt      string // the row of the largest error
	WorstMeasure float64
}

// kernelGroups lists the coefficient positions each profile group fits.
func kernelGroups() map[string][]int {
	return map[string][]int{
		// Constant and token-linear terms of one model are collinear in the
		// dense rows: the weight read carries the per-step constant
		// (embedding, final norm) and the GEMM FLOPs the element-wise
		// traffic, so KPStep and KPTokenLayer stay 0.
		"dense":     {latency.KPGemmWeight, latency.KPGemmCompute, latency.KPGemmKnee1, latency.KPGemmKnee2, latency.KPGemmKnee3},
		"attention": {latency.KPAttnLayer, latency.KPPrefillFlops, latency.KPPrefillSeq, latency.KPDecodeKV, latency.KPDecodeSeq, latency.KPMixedKV, latency.KPMixedKVWide},
		"sample":    {latency.KPLMHeadWeight, latency.KPLMHeadCompute, latency.KPSampleSeq},
		"moe":       {latency.KPMoEWeight, latency.KPMoECompute, latency.KPMoELayer},
	}
}

// maxAttentionContext bounds the attention rows fitted: contexts beyond it
// never occur in the runs and would pull the fit away from the ones that do.
const maxAttentionContext = 8192

// FitKernels fits the kernel coefficients of km (a kernel-physics model of
// the deployment, any coefficients) to a profile measured per rank. dp is
// the number of data-parallel ranks folded into the deployment's one
// instance: a profile row measured at a rank's shape is the step with dp
// times its decodes, tokens and touched experts (but the same prefill: see
// the attention rows), and takes the same time.
// Each group is fitted on relative error by non-negative least squares.
func FitKernels(km *latency.KernelPhysics, mc *latency.ModelConfig, p *Profile, dp int) (*KernelFit, error) {
	if dp < 1 {
		return nil, fmt.Errorf("fidelity: kernel fit: data parallelism %d", dp)
	}
	f := float64(dp)
	L := mc.Layers
	kf := &KernelFit{Beta: make([]float64, latency.KPNumBetas), Groups: map[string]FitStat{}}
	// Each row's error is weighed against the whole step it belongs to
	// (scale: the row plus the dense ops of a step with its tokens), so a
	// kernel that is a small part of every step (attention over a short
	// context) does not pull the fit away from the ones that dominate.
	type row struct {
		basis latency.KernelBasis
		y     float64
		at    string
		scale float64
	}
	groups := map[string][]row{}

	for _, t := range p.DenseTokens() {
		s := latency.Step{DecodeCount: int(f * t)}
		y := p.DenseStep(t, L)
		groups["dense"] = append(groups["dense"], row{km.Basis(&s), y, fmt.Sprintf("tokens %g", t), y})
	}
	for _, a := range p.Attention {
		if a.KVPrefill > maxAttentionContext || a.KVDecode > maxAttentionContext || !finite(a.Us) {
			continue
		}
		// A prefill lives on one rank, and the ranks step together (expert
		// parallelism), so the step takes as long as the rank that holds
		// it: the folded step has this one prefill and every rank's
		// decodes.
		var s latency.Step
		if a.Chunk > 0 {
			s.Prefill = append(s.Prefill, latency.PrefillWork{NewTokens: a.Chunk, Context: a.KVPrefill, Target: a.KVPrefill + a.Chunk + 1})
		}
		s.DecodeCount = dp * a.NDecode
		s.DecodeContextSum = int64(dp) * int64(a.NDecode) * int64(a.KVDecode)
		y := float64(L) * a.Us
		groups["attention"] = append(groups["attention"], row{km.Basis(&s), y,
			fmt.Sprintf("chunk %d after %d, %d decodes at %d", a.Chunk, a.KVPrefill, a.NDecode, a.KVDecode),
			y + p.DenseStep(float64(a.Chunk+a.NDecode), L)})
	}
	for _, pt := range p.PerSequence["lm_head"] {
		s := latency.Step{DecodeCount: int(f * pt.X)}
		y := p.SampleStep(pt.X)
		groups["sample"] = append(groups["sample"], row{km.Basis(&s), y, fmt.Sprintf("%g sequences", pt.X), y})
	}
	if mc.IsMoE() {
		if len(p.MoE) == 0 {
			return nil, fmt.Errorf("fidelity: kernel fit: %s is a mixture of experts but the profile %s has no moe.csv", mc.Name, p)
		}
		for _, m := range p.MoE {
			var b latency.KernelBasis
			b[latency.KPMoEWeight], b[latency.KPMoECompute] = km.MoEBasis(f*float64(m.Tokens), f*float64(m.Experts))
			b[latency.KPMoELayer] = float64(mc.MoELayers)
			y := float64(mc.MoELayers) * m.Us
			groups["moe"] = append(groups["moe"], row{b, y, fmt.Sprintf("%d tokens on %d experts", m.Tokens, m.Experts),
				y + p.DenseStep(float64(m.Tokens), L)})
		}
	}
	kg := kernelGroups()
	for _, name := range slices.Sorted(maps.Keys(kg)) {
		cols, rows := kg[name], groups[name]
		if len(rows) == 0 {
			continue
		}
		l, err := nnls.New(len(cols))
		if err != nil {
			return nil, fmt.Errorf("fidelity: kernel fit %s: %w", name, err)
		}
		a := make([]float64, len(cols))
		for _, r := range rows {
			for j, c := range cols {
				a[j] = r.basis[c]
			}
			l.Add(a, r.y, 1/(r.scale*r.scale))
		}
		theta, err := l.Solve(nnls.Options{Ridge: 1e-9})
		if err != nil {
			return nil, fmt.Errorf("fidelity: kernel fit %s: %w", name, err)
		}
		st := FitStat{Rows: len(rows)}
		var sq float64
		for _, r := range rows {
			var pred float64
			for j, c := range cols {
				pred += theta[j] * r.basis[c]
			}
			e := (pred - r.y) / r.scale
			sq += e * e
			st.MeanAbsRel += math.Abs(e)
			if math.Abs(e) > st.MaxRel {
				st.MaxRel, st.WorstAt, st.WorstMeasure = math.Abs(e), r.at, r.y
			}
		}
		st.RMSRel = math.Sqrt(sq / float64(len(rows)))
		st.MeanAbsRel /= float64(len(rows))
		kf.Groups[name] = st
		for j, c := range cols {
			kf.Beta[c] = theta[j]
		}
	}
	return kf, nil
}
