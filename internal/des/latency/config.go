package latency

import (
	"fmt"
	"strings"
)

// Kind names a latency model (`--latency-model`).
type Kind string

// The latency models.
const (
	KindBlackbox       Kind = "blackbox"
	KindRoofline       Kind = "roofline"
	KindTrainedPhysics Kind = "trained-physics" // BLIS's, for parity with BLIS
)

// Kinds lists the model kinds, default first.
func Kinds() []Kind {
	return []Kind{KindPhysics, KindTrainedPhysics, KindRoofline, KindBlackbox}
}

// ParseKind reads a model kind; the empty string is the default, physics.
func ParseKind(s string) (Kind, error) {
	if s == "" {
		return KindPhysics, nil
	}
	for _, k := range Kinds() {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown latency model %q; known: physics (default), trained-physics, roofline, blackbox", s)
}

// Config is what a command line gives to build a latency model.
type Config struct {
	Kind Kind // "" = physics
	// Model is an embedded model name (HuggingFace ids accepted, e.g.
	// "Qwen/Qwen3-14B") or a path to a HuggingFace config.json or the
	// directory holding it; see [ResolveModel]. The blackbox model needs only
	// the name, and nothing at all when coefficients are given.
	Model string
	// GPU is an embedded GPU name (H100, A100-SXM, A100-80, L40S), a GPU name
	// inside HardwareFile, or a path to a hardware JSON holding one GPU; see
	// [ResolveGPU].
	GPU          string
	HardwareFile string     // optional hardware JSON (hardware_config.json format)
	TP           int        // tensor parallelism; 0 means 1
	DP           int        // data-parallel ranks in lockstep (physics only); 0 means 1
	Graphs       CUDAGraphs // the serving vLLM's CUDA-graph regime (physics only)
	// KVCacheDtype and Quantization are vLLM's --kv-cache-dtype and
	// --quantization ("" = the model's own); see [ModelConfig.Serving].
	KVCacheDtype, Quantization string
	// Alpha and Beta override the model's coefficients; both or neither.
	// blackbox: 3 and 3; trained-physics: 3 and 7 to 11; physics: 3 and
	// PhNumBetas; roofline takes none.
	Alpha, Beta []float64
}

// New builds the latency model cfg describes, resolving the model and GPU
// names or files it needs.
func New(cfg Config) (Model, error) {
	kind, err := ParseKind(string(cfg.Kind))
	if err != nil {
		return nil, err
	}
	tp := cfg.TP
	if tp == 0 {
		tp = 1
	}
	if tp < 0 {
		return nil, fmt.Errorf("latency model: tensor parallelism must be ≥ 1, got %d", cfg.TP)
	}
	if cfg.DP > 1 && kind != KindPhysics {
		return nil, fmt.Errorf("latency model %s: data parallelism needs the physics model", kind)
	}
	if (cfg.Alpha == nil) != (cfg.Beta == nil) {
		return nil, fmt.Errorf("latency model %s: alpha and beta coefficients must be given together", kind)
	}
	if kind == KindBlackbox {
		alpha, beta := cfg.Alpha, cfg.Beta
		if alpha == nil {
			if alpha, beta, err = BlackboxCoefficients(cfg.Model, cfg.GPU, tp); err != nil {
				return nil, err
			}
		}
		return NewBlackbox(BlackboxConfig{Alpha: alpha, Beta: beta})
	}
	if kind == KindRoofline && cfg.Alpha != nil {
		return nil, fmt.Errorf("latency model roofline takes no coefficients; use trained-physics or blackbox to give them")
	}
	mc, err := ResolveModel(cfg.Model)
	if err != nil {
		return nil, err
	}
	if mc, err = mc.Serving(cfg.KVCacheDtype, cfg.Quantization); err != nil {
		return nil, err
	}
	gpu, err := ResolveGPU(cfg.GPU, cfg.HardwareFile)
	if err != nil {
		return nil, err
	}
	switch kind {
	case KindRoofline:
		return NewRoofline(RooflineConfig{Model: mc, GPU: gpu, TP: tp})
	case KindPhysics:
		return NewPhysics(PhysicsConfig{Model: mc, GPU: gpu, TP: tp, DP: cfg.DP, Graphs: cfg.Graphs, Alpha: cfg.Alpha, Beta: cfg.Beta})
	}
	return NewTrainedPhysics(TrainedPhysicsConfig{Model: mc, GPU: gpu, TP: tp, Alpha: cfg.Alpha, Beta: cfg.Beta})
}
