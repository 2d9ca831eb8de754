package fit

import (
	"fmt"
	"math"

	"servesim/internal/des/latency"
	"servesim/internal/nnls"
)

// KernelFit is the kernel part of a deployment's physics model fitted to a
// kernel profile (Profile): the GPU's efficiencies and knee, the mixed-batch factor,
// the per-layer kernel floor and the per-sequence kernel time (the host,
// link and overhead terms stay 0: they are Universal), and how well each
// group of kernels is reproduced.
type KernelFit struct {
	Beta   []float64             // a full physics vector
	Groups map[string]GroupError // "dense", "attention", "moe"
}

// GroupError is the error of a fitted group over its profile rows, relative
// to the step each row belongs to (the row plus the dense ops of a step
// with as many tokens; for dense and sampling rows, the row itself).
type GroupError struct {
	Rows         int
	RMSRel       float64 // root mean square of (fit − measured)/measured
	MaxRel       float64
	MeanAbsRel   float64
	WorstAt      string // the row of the largest error
	WorstMeasure float64
}

// maxAttentionContext bounds the attention rows fitted: contexts beyond it
// never occur in the runs and would pull the fit away from the ones that do.
const maxAttentionContext = 8192

// profileRow is one measurement against the model's raw quantities.
type profileRow struct {
	q     latency.PhysicsStep
	n     float64 // sequences in the row (sampling: sampled; attention: scheduled)
	y     float64 // measured µs
	scale float64 // the step it belongs to, µs (errors are relative to it)
	at    string
}

// Kernels fits the kernel coefficients of a physics model pm (of the
// deployment, any coefficients) to a profile measured per rank. dp is the
// number of data-parallel ranks folded into the deployment's one instance:
// a profile row measured at a rank's shape is the step with dp times its
// decodes, tokens and touched experts (but the same prefill), and takes
// the same time.
//
// The dense GEMMs and the LM head fix the GPU's three shares (bandwidth,
// FLOP/s, knee), searched on a grid (5% steps, then 1% steps around the
// best; the knee in 5% steps) with
// the per-layer and per-sequence floors solved in closed form at each
// point; the attention rows then fix prefill attention's share, the
// mixed-batch factor and attention's own floors by non-negative least
// squares, the decodes' KV read priced at the bandwidth share found. Every
// row is weighed by its relative error.
func Kernels(pm *latency.Physics, mc *latency.ModelConfig, p *Profile, dp int) (*KernelFit, error) {
	if dp < 1 {
		return nil, fmt.Errorf("fit: kernels: data parallelism %d", dp)
	}
	f := float64(dp)
	L := float64(mc.Layers)
	var dense, sample, moe []profileRow
	for _, t := range p.DenseTokens() {
		s := latency.Step{DecodeCount: int(f * t)}
		y := p.DenseStep(t, mc.Layers)
		dense = append(dense, profileRow{q: pm.Quantities(&s), y: y, scale: y, at: fmt.Sprintf("tokens %g", t)})
	}
	for _, pt := range p.PerSequence["lm_head"] {
		s := latency.Step{DecodeCount: int(f * pt.X)}
		y := p.SampleStep(pt.X)
		sample = append(sample, profileRow{q: pm.Quantities(&s), n: pt.X, y: y, scale: y, at: fmt.Sprintf("%g sequences", pt.X)})
	}
	attn := attentionRows(pm, mc, p, dp)
	if mc.IsMoE() {
		if len(p.MoE) == 0 {
			return nil, fmt.Errorf("fit: kernels: %s is a mixture of experts but the profile %s has no moe.csv", mc.Name, p)
		}
		for _, m := range p.MoE {
			s := latency.Step{DecodeCount: int(f * float64(m.Tokens))}
			q := pm.Quantities(&s)
			q.ExpertW *= f * float64(m.Experts) / pm.ExpertsTouched(f*float64(m.Tokens))
			y := float64(mc.MoELayers) * m.Us
			moe = append(moe, profileRow{q: q, y: y, scale: y + p.DenseStep(float64(m.Tokens), mc.Layers),
				at: fmt.Sprintf("%d tokens on %d experts", m.Tokens, m.Experts)})
		}
	}
	if len(dense) == 0 {
		return nil, fmt.Errorf("fit: kernels: the profile %s has no dense rows", p)
	}
	b := make([]float64, latency.PhNumBetas)
	g := &KernelFit{Beta: b, Groups: map[string]GroupError{}}
	gf := fitGEMMs(dense, sample, moe, L, float64(mc.MoELayers))
	b[latency.PhBwEff], b[latency.PhFlopsEff], b[latency.PhKnee] = gf.bw, gf.fl, gf.knee
	af, err := fitAttention(attn, gf.bw, L)
	if err != nil {
		return nil, err
	}
	b[latency.PhAttnEff], b[latency.PhKVEff], b[latency.PhMixedKV], b[latency.PhMixedKVWide] = af.eff, af.kv, af.mixed, af.wide
	// The expert kernels' floor runs in the MoE layers: spread over all.
	b[latency.PhLayerUs] = gf.layerUs + af.layerUs + gf.moeUs*gf.moeLayers/L
	b[latency.PhSeqUs] = gf.seqUs + af.seqUs
	b[latency.PhPrefillSeqUs] = af.prefillUs
	b[latency.PhLinkEff] = 1 // the link is universal; a placeholder in range
	g.Groups["dense"] = stat(append(dense, sample...), gf.predict)
	if len(attn) > 0 {
		g.Groups["attention"] = stat(attn, af.predict)
	}
	if len(moe) > 0 {
		g.Groups["moe"] = stat(moe, gf.predict)
	}
	return g, nil
}

// gemmFit is the dense part of a GPU fit.
type gemmFit struct {
	bw, fl, knee   float64
	layerUs, seqUs float64 // per-layer floor of the dense ops, per sampled sequence of the sampler
	moeUs          float64 // per-MoE-layer floor of the expert kernels
	layers         float64
	moeLayers      float64
}

// predict is a dense, sampling or MoE row's time under the fit.
func (g *gemmFit) predict(r *profileRow) float64 {
	ub, uf := 1/g.bw, 1/g.fl
	q := &r.q
	switch {
	case r.n > 0: // sampling: LM head and sampler
		return latency.Knee(q.LMW*ub, q.LMF*uf, g.knee) + r.n*g.seqUs
	case q.ExpertW > 0 && q.DenseW == 0:
		return latency.Knee(q.ExpertW*ub, q.ExpertF*uf, g.knee) + g.moeLayers*g.moeUs
	}
	return latency.Knee(q.DenseW*ub, q.DenseF*uf, g.knee) + q.Elem*ub + g.layers*g.layerUs
}

// fitGEMMs searches the bandwidth and FLOP shares and the knee that
// reproduce the dense, sampling and MoE rows best; MoE rows carry only
// their expert quantities.
func fitGEMMs(dense, sample, moe []profileRow, layers, moeLayers float64) gemmFit {
	for i := range moe {
		q := &moe[i].q
		*q = latency.PhysicsStep{ExpertW: q.ExpertW, ExpertF: q.ExpertF}
	}
	best := gemmFit{layers: layers, moeLayers: moeLayers}
	bestErr := math.Inf(1)
	try := best
	eval := func(k, eb, ef int) {
		try.knee, try.bw, try.fl = float64(k)/20, float64(eb)/100, float64(ef)/100
		try.layerUs = floorFit(dense, func(r *profileRow) float64 {
			return latency.Knee(r.q.DenseW/try.bw, r.q.DenseF/try.fl, try.knee) + r.q.Elem/try.bw
		}, layers)
		try.seqUs = floorFit(sample, func(r *profileRow) float64 {
			return latency.Knee(r.q.LMW/try.bw, r.q.LMF/try.fl, try.knee)
		}, -1)
		try.moeUs = floorFit(moe, func(r *profileRow) float64 {
			return latency.Knee(r.q.ExpertW/try.bw, r.q.ExpertF/try.fl, try.knee)
		}, moeLayers)
		if e := sqErr(dense, try.predict) + sqErr(sample, try.predict) + sqErr(moe, try.predict); e < bestErr {
			best, bestErr = try, e
		}
	}
	// Coarse (shares in 5% steps), then fine (1% steps) around the coarse
	// optimum: the error is smooth in the shares at that scale.
	for k := 0; k <= 20; k++ {
		for eb := 20; eb <= 125; eb += 5 {
			for ef := 10; ef <= 125; ef += 5 {
				eval(k, eb, ef)
			}
		}
	}
	k0, b0, f0 := int(math.Round(best.knee*20)), int(math.Round(best.bw*100)), int(math.Round(best.fl*100))
	for k := max(k0-1, 0); k <= min(k0+1, 20); k++ {
		for eb := max(b0-5, 20); eb <= min(b0+5, 125); eb++ {
			for ef := max(f0-5, 10); ef <= min(f0+5, 125); ef++ {
				eval(k, eb, ef)
			}
		}
	}
	return best
}

// floorFit is the non-negative c minimising Σ ((base + c·x − y)/y)² over
// rows, x = per (a constant for every row) or the row's sequences (per <
// 0).
func floorFit(rows []profileRow, base func(*profileRow) float64, per float64) float64 {
	var num, den float64
	for i := range rows {
		r := &rows[i]
		x := per
		if per < 0 {
			x = r.n
		}
		w := 1 / (r.scale * r.scale)
		num += w * x * (r.y - base(r))
		den += w * x * x
	}
	if den == 0 || num <= 0 {
		return 0
	}
	return num / den
}

func sqErr(rows []profileRow, pred func(*profileRow) float64) float64 {
	var e float64
	for i := range rows {
		d := (pred(&rows[i]) - rows[i].y) / rows[i].scale
		e += d * d
	}
	return e
}

// attnFit is the attention part of a GPU fit.
type attnFit struct {
	eff, kv, mixed, wide, layerUs, seqUs, prefillUs float64
	layers                                          float64
}

func (a *attnFit) predict(r *profileRow) float64 {
	q := &r.q
	return q.Attn/a.eff + (q.KV+a.mixed*q.MixedKV+a.wide*q.MixedKVWide)/a.kv + a.layers*a.layerUs + r.n*a.seqUs + q.PrefillSeq*a.prefillUs
}

// fitAttention solves prefill attention's share, decode attention's KV
// bandwidth share, the mixed-batch factors and attention's per-layer,
// per-sequence and per-prefill floors from the attention rows: all linear in the inverse
// shares, solved by non-negative least squares. bw (the GEMMs' bandwidth
// share) prices the KV read when the rows cannot.
func fitAttention(rows []profileRow, bw, layers float64) (attnFit, error) {
	a := attnFit{eff: 0.5, kv: bw, layers: layers}
	if len(rows) == 0 {
		return a, nil
	}
	l, err := nnls.New(7)
	if err != nil {
		return a, fmt.Errorf("fit: kernels: %w", err)
	}
	x := make([]float64, 7)
	for i := range rows {
		r := &rows[i]
		x[0], x[1], x[2], x[3], x[4], x[5], x[6] = r.q.Attn, r.q.KV, r.q.MixedKV, r.q.MixedKVWide, layers, r.n, r.q.PrefillSeq
		l.Add(x, r.y, 1/(r.scale*r.scale))
	}
	theta, err := l.Solve(nnls.Options{Ridge: 1e-9})
	if err != nil {
		return a, fmt.Errorf("fit: kernels: %w", err)
	}
	share := func(inv float64, i int, dflt float64) float64 {
		lo, hi := latency.PhysicsBounds(i)
		if inv <= 0 {
			return dflt
		}
		return math.Min(hi, math.Max(lo, 1/inv))
	}
	a.eff = share(theta[0], latency.PhAttnEff, a.eff)
	a.kv = share(theta[1], latency.PhKVEff, a.kv)
	mlo, mhi := latency.PhysicsBounds(latency.PhMixedKV)
	a.mixed = math.Min(mhi, math.Max(mlo, theta[2]*a.kv))
	a.wide = math.Min(mhi, math.Max(mlo, theta[3]*a.kv))
	a.layerUs, a.seqUs, a.prefillUs = theta[4], theta[5], theta[6]
	return a, nil
}

// stat measures a group's fitted error.
func stat(rows []profileRow, pred func(*profileRow) float64) GroupError {
	st := GroupError{Rows: len(rows)}
	var sq float64
	for i := range rows {
		r := &rows[i]
		e := (pred(r) - r.y) / r.scale
		sq += e * e
		st.MeanAbsRel += math.Abs(e)
		if math.Abs(e) > st.MaxRel {
			st.MaxRel, st.WorstAt, st.WorstMeasure = math.Abs(e), r.at, r.y
		}
	}
	if len(rows) > 0 {
		st.RMSRel = math.Sqrt(sq / float64(len(rows)))
		st.MeanAbsRel /= float64(len(rows))
	}
	return st
}

// attentionRows are a profile's attention rows (contexts up to
// maxAttentionContext) against the quantities of pm, for a deployment of
// dp data-parallel ranks (see [Kernels]).
func attentionRows(pm *latency.Physics, mc *latency.ModelConfig, p *Profile, dp int) []profileRow {
	L := float64(mc.Layers)
	var rows []profileRow
	for _, a := range p.Attention {
		if a.KVPrefill > maxAttentionContext || a.KVDecode > maxAttentionContext || !finite(a.Us) {
			continue
		}
		// The row is one rank's attention; the lockstep step has dp such
		// ranks (the physics model spreads a step's work evenly over them).
		var s latency.Step
		n := float64(a.NDecode) // per rank
		if a.Chunk > 0 {
			for range dp { // every rank prefills one: the model takes balanced ranks
				s.Prefill = append(s.Prefill, latency.PrefillWork{NewTokens: a.Chunk, Context: a.KVPrefill, Target: a.KVPrefill + a.Chunk + 1})
			}
			n++
		}
		s.DecodeCount = dp * a.NDecode
		s.DecodeContextSum = int64(dp) * int64(a.NDecode) * int64(a.KVDecode)
		y := L * a.Us
		rows = append(rows, profileRow{q: pm.Quantities(&s), n: n, y: y, scale: y + p.DenseStep(float64(a.Chunk+a.NDecode), mc.Layers),
			at: fmt.Sprintf("chunk %d after %d, %d decodes at %d", a.Chunk, a.KVPrefill, a.NDecode, a.KVDecode)})
	}
	return rows
}
