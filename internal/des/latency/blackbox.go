package latency

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Blackbox is the linear model of docs/simulator.md §8.1 (BLIS "blackbox"):
//
//	StepTime = max(1, ⌊β₀ + β₁·P + β₂·D⌋) µs
//	Q(prompt) = ⌊α₀ + α₁·prompt⌋, A_tok = ⌊α₂⌋, A_end = 0
//
// with P the new prefill tokens of the step (cache misses only) and D the
// number of decode requests (one token each). The step time does not depend on
// decode context at all, so the (count, Σcontext) summary of decode requests
// is trivially exact.
type Blackbox struct {
	alpha [3]float64
	beta  [3]float64
}

// BlackboxConfig holds the coefficients of a [Blackbox]: exactly three alphas
// [α₀ µs, α₁ µs/prompt token, α₂ µs] and three betas [β₀ µs, β₁ µs/prefill
// token, β₂ µs/decode request], all finite and non-negative.
type BlackboxConfig struct {
	Alpha []float64
	Beta  []float64
}

// NewBlackbox validates the coefficients and builds the model.
func NewBlackbox(cfg BlackboxConfig) (*Blackbox, error) {
	if len(cfg.Alpha) != 3 || len(cfg.Beta) != 3 {
		return nil, fmt.Errorf("blackbox latency model: want 3 alpha and 3 beta coefficients, got %d and %d", len(cfg.Alpha), len(cfg.Beta))
	}
	if err := checkCoeffs("alpha", cfg.Alpha); err != nil {
		return nil, fmt.Errorf("blackbox latency model: %w", err)
	}
	if err := checkCoeffs("beta", cfg.Beta); err != nil {
		return nil, fmt.Errorf("blackbox latency model: %w", err)
	}
	return &Blackbox{alpha: [3]float64(cfg.Alpha), beta: [3]float64(cfg.Beta)}, nil
}

// StepTime implements [Model].
func (b *Blackbox) StepTime(s *Step) int64 {
	var p int64
	for i := range s.Prefill {
		if n := s.Prefill[i].NewTokens; n > 0 {
			p += int64(n)
		}
	}
	d := max(int64(s.DecodeCount), 0)
	if p == 0 && d == 0 {
		return 1
	}
	return floorMicros(b.beta[0]+b.beta[1]*float64(p)+b.beta[2]*float64(d), 1)
}

// QueueDelay implements [Model]: ⌊α₀ + α₁·prompt⌋.
func (b *Blackbox) QueueDelay(promptTokens int) int64 {
	return floorMicros(b.alpha[0]+b.alpha[1]*float64(max(promptTokens, 0)), 0)
}

// TokenOverhead implements [Model]: ⌊α₂⌋.
func (b *Blackbox) TokenOverhead() int64 { return floorMicros(b.alpha[2], 0) }

// EndOverhead implements [Model]: the blackbox model has none.
func (b *Blackbox) EndOverhead() int64 { return 0 }

// blackboxEntry is one fitted coefficient set of the blackbox table.
type blackboxEntry struct {
	model, gpu  string
	tp          int
	vllm        string
	alpha, beta [3]float64
}

// blackboxTable returns the fitted coefficients the spec lists (docs/simulator.md §8.1), keyed
// by canonical model name, GPU and TP; vLLM version recorded for reference.
func blackboxTable() []blackboxEntry {
	return []blackboxEntry{
		{"llama-3.1-8b-instruct", "H100", 1, "v0.11.0",
			[3]float64{10326.268, 0, 0}, [3]float64{6472.0076, 19.79721, 304.40210}},
		{"qwen3-14b", "H100", 1, "v0.11.0",
			[3]float64{8888.089, 0.18489, 0}, [3]float64{13578.187, 39.44466, 27.32278}},
	}
}

// canonicalGPUName folds GPU aliases that share a specification.
func canonicalGPUName(name string) string {
	n := strings.ToUpper(strings.TrimSpace(name))
	if n == "A100-80" {
		return "A100-SXM"
	}
	return n
}

// BlackboxCoefficients returns the fitted (alpha, beta) for a model, GPU and
// TP from the built-in table (model names as in [CanonicalModelName], GPU
// names case-insensitive with A100-80 ≡ A100-SXM). Without an entry the error
// lists the entries there are and how to pass coefficients.
func BlackboxCoefficients(model, gpu string, tp int) (alpha, beta []float64, err error) {
	m, g := CanonicalModelName(model), canonicalGPUName(gpu)
	var known []string
	for _, e := range blackboxTable() {
		if e.model == m && canonicalGPUName(e.gpu) == g && e.tp == tp {
			return slices.Clone(e.alpha[:]), slices.Clone(e.beta[:]), nil
		}
		known = append(known, fmt.Sprintf("%s on %s TP %d (vLLM %s)", e.model, e.gpu, e.tp, e.vllm))
	}
	return nil, nil, fmt.Errorf("no blackbox coefficients for model %q on GPU %q at TP %d; built-in: %s; pass --alpha-coeffs and --beta-coeffs (3 values each) or use another latency model",
		model, gpu, tp, strings.Join(known, "; "))
}

// checkCoeffs requires every coefficient to be finite and non-negative, which
// keeps every model's step time monotone in the work of the step.
func checkCoeffs(what string, c []float64) error {
	for i, v := range c {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%s coefficient %d is %v; coefficients must be finite and non-negative", what, i, v)
		}
	}
	return nil
}
