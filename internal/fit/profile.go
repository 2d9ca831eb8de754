package fit

import (
	"cmp"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// Profile is one layerwise kernel profile of LLMServingSim's profiler
// (profiler/perf/<hardware>/<model>/<variant>/tp<N>/): CUDA kernel times of
// a one-layer model driven with synthetic batches, in µs.
//
//   - Dense: per layer-op name (qkv_proj, o_proj, gate_up_proj, down_proj,
//     act_fn, layernorm, rotary_emb, qk_norm, and the once-per-model
//     embedding and final_layernorm), time by batch token count.
//   - Attention: one layer's attention for one prefill chunk of Chunk new
//     tokens after KVPrefill cached ones, plus NDecode decode requests of
//     KVDecode context each.
//   - PerSequence: lm_head and sampler time by sampled sequence count.
//   - MoE (MoE models only): one fused MoE layer by tokens and activated
//     experts.
type Profile struct {
	Dir         string
	Dense       map[string][]Point // sorted by X
	PerSequence map[string][]Point
	Attention   []AttentionRow
	MoE         []MoERow
}

// Point is one measured (size, time µs) pair.
type Point struct{ X, Us float64 }

// AttentionRow is one row of attention.csv.
type AttentionRow struct {
	Chunk     int     `csv:"prefill_chunk"`
	KVPrefill int     `csv:"kv_prefill"`
	NDecode   int     `csv:"n_decode"`
	KVDecode  int     `csv:"kv_decode"`
	Us        float64 `csv:"time_us"`
}

// MoERow is one row of moe.csv.
type MoERow struct {
	Tokens  int     `csv:"tokens"`
	Experts int     `csv:"activated_experts"`
	Us      float64 `csv:"time_us"`
}

// perModelOps are the dense ops that run once per step, not once per layer.
func perModelOps() []string { return []string{"embedding", "final_layernorm"} }

// normsPerLayer is how many RMSNorms a decoder layer runs (input and
// post-attention); the profile times one.
const normsPerLayer = 2

// DenseTokens returns the token counts at which every dense op was measured.
func (p *Profile) DenseTokens() []float64 {
	var xs []float64
	for _, pt := range p.Dense["qkv_proj"] {
		xs = append(xs, pt.X)
	}
	return xs
}

// DenseStep is the dense-op time of one step at t tokens (µs): every
// per-layer op times layers, the per-model ops once. Missing sizes are
// interpolated linearly (extrapolated proportionally above the largest).
// The ops are added in name order: a sum in map order would differ in its
// last bits from call to call, and so would every fit built on it.
func (p *Profile) DenseStep(t float64, layers int) float64 {
	var perLayer, once float64
	for _, name := range slices.Sorted(maps.Keys(p.Dense)) {
		v := interp(p.Dense[name], t)
		switch {
		case slices.Contains(perModelOps(), name):
			once += v
		case name == "layernorm":
			perLayer += normsPerLayer * v
		default:
			perLayer += v
		}
	}
	return float64(layers)*perLayer + once
}

// SampleStep is lm_head plus sampler time for s sampled sequences.
func (p *Profile) SampleStep(s float64) float64 {
	return interp(p.PerSequence["lm_head"], s) + interp(p.PerSequence["sampler"], s)
}

// interp is piecewise-linear interpolation in pts (sorted by X); below the
// first point it holds the first value, above the last it scales the last
// value proportionally (throughput-bound extrapolation).
func interp(pts []Point, x float64) float64 {
	if len(pts) == 0 {
		return 0
	}
	if x <= pts[0].X {
		return pts[0].Us
	}
	last := pts[len(pts)-1]
	if x >= last.X {
		return last.Us * x / last.X
	}
	i, _ := slices.BinarySearchFunc(pts, x, func(p Point, x float64) int { return cmp.Compare(p.X, x) })
	a, b := pts[i-1], pts[i]
	return a.Us + (b.Us-a.Us)*(x-a.X)/(b.X-a.X)
}

// name of a profile for messages.
func (p *Profile) String() string {
	parts := strings.Split(filepath.ToSlash(p.Dir), "/")
	if len(parts) > 5 {
		parts = parts[len(parts)-5:]
	}
	return strings.Join(parts, "/")
}

// finite reports a usable measurement.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 }
