package latency

import (
	"strings"
	"testing"
)

// Synthetic models and GPUs with small round numbers, so every expected value
// below is worked out by hand from the spec's formulas (docs/simulator.md §8), independently of
// the code under test.

// tinyDense: H 8, L 2, n_h 2, n_kv 1, d_h 4 (d_kv 4), F 16, V 32, bf16.
const tinyDenseJSON = `{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
	"num_key_value_heads": 1, "intermediate_size": 16, "vocab_size": 32, "torch_dtype": "bfloat16",
	"hidden_act": "silu", "max_position_embeddings": 64}`

// tinyInterleaved: H 8, L 4, n_h 2, n_kv 2, d_h 4 (d_kv 8), dense F 12,
// 4 experts, k 2, F_moe 6, shared 5, interleave step 1.
const tinyInterleavedJSON = `{"hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2,
	"num_key_value_heads": 2, "intermediate_size": 6, "intermediate_size_mlp": 12, "num_local_experts": 4,
	"num_experts_per_tok": 2, "shared_expert_intermediate_size": 5, "interleave_moe_layer_step": 1,
	"torch_dtype": "bfloat16", "vocab_size": 32}`

// tinyDeepSeek: as tinyInterleaved but DeepSeek style: first layer dense
// (F 12), the other 3 MoE (4 experts, k 2, F_moe 6, shared 5).
const tinyDeepSeekJSON = `{"hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2,
	"num_key_value_heads": 2, "intermediate_size": 12, "n_routed_experts": 4, "num_experts_per_tok": 2,
	"moe_intermediate_size": 6, "shared_expert_intermediate_size": 5, "first_k_dense_replace": 1,
	"torch_dtype": "bfloat16", "vocab_size": 32, "tie_word_embeddings": true}`

func mustModel(t testing.TB, js string) *ModelConfig {
	t.Helper()
	m, err := ParseModelConfig("tiny", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// unitGPU does 1 FLOP/µs and 1 byte/µs; fastComputeGPU 1000 FLOP/µs.
var (
	unitGPU        = GPU{Name: "unit", TFlopsPeak: 1e-6, BwPeakTBs: 1e-6, MfuPrefill: 0.5, MfuDecode: 0.25, MemoryGiB: 8}
	fastComputeGPU = GPU{Name: "fast-compute", TFlopsPeak: 1e-3, BwPeakTBs: 1e-6, MfuPrefill: 0.5, MfuDecode: 0.25, MemoryGiB: 32}
)

// The step used by most hand computations: prefill requests (n=3, c=0, s=3)
// and (n=2, c=4, s=10); two decode requests with contexts 4 and 5 (Σ 9).
func handStep() *Step {
	return &Step{Prefill: []PrefillWork{{NewTokens: 3, Context: 0, Target: 3}, {NewTokens: 2, Context: 4, Target: 10}},
		DecodeCount: 2, DecodeContextSum: 9}
}

func TestTrainedPhysicsHand(t *testing.T) {
	// tinyDense at TP 1, 1 FLOP/µs, 1 byte/µs:
	//   cTok  = L·2H(2H+2d_kv) + L·6H·F = 2·16·24 + 2·6·8·16 = 768 + 1536 = 2304
	//   cAttn = L·4·n_h·d_h = 2·4·2·4 = 64
	//   prefill T_p = 5, Σ n(s+n/2) = 3·4.5 + 2·11 = 35.5
	//   T_pf_compute = 5·2304 + 35.5·64 = 13792;  T_pf_kv = L·2·d_kv·2·T_p = 32·5 = 160
	//   T_dc_compute = 2·2304 + 9·64 = 5184;      T_dc_kv = 32·(9 + 2) = 352
	//   T_weight = [L·H(2H+2d_kv) + L·3H·F]·2 = (384 + 768)·2 = 2304;  T_tp = 0
	//   L = 2, N_req = 4
	// β = [0.5, 0.25, 2, 3, 10, 7, 100, 0, 4, 1.5, 0]:
	//   0.5·13792 + 4·160 + 0.25·5184 + 1.5·352 + 2·2304 + 10·2 + 7·4 + 100 = 14116
	// 9 betas: decode uses 0.25·max(5184, 352) = 1296 and drops 1.5·352 = 528 → 13588
	// 8 or 7 betas: prefill 0.5·max(13792, 160) = 6896 drops 4·160 = 640 → 12948
	// fractional β = [0.3, 0.1, 1.1, 3, 10.25, 7.5, 100.2, 0, 4, 1.7, 0]:
	//   4137.6 + 640 + 518.4 + 598.4 + 2534.4 + 20.5 + 30 + 100.2 = 8579.5 → 8579
	dense := mustModel(t, tinyDenseJSON)
	// tinyInterleaved at TP 2 (BLIS basis: n_MoE = ⌊4/2⌋ = 2, L_dense = 2):
	//   cTok = L·2H(2H+2d_kv)/2 + L_d·6H·F/2 + n_MoE·(k·6H·F_moe + 6H·F_s)/2
	//        = 4·16·32/2 + 2·6·8·12/2 + 2·(2·288 + 240)/2 = 1024 + 576 + 816 = 2416
	//   cAttn = L·4·(n_h/2)·d_h = 4·4·1·4 = 64
	//   T_pf_compute = 5·2416 + 35.5·64 = 14352; T_pf_kv = L·2·(d_kv/2)·2·5 = 64·5 = 320
	//   T_dc_compute = 2·2416 + 9·64 = 5408;    T_dc_kv = 64·11 = 704
	//   T_weight = [4·8·32/2 + 2·3·8·12/2 + 2·(4/2)·3·8·6 + 2·3·8·5/2]·2 = (512 + 288 + 576 + 120)·2 = 2992
	//   T_tp = (L + L_d + n_MoE)·(T_p + T_d)·H·2·2·(1/2) = 8·7·8·2 = 896
	// β = [0.5, 0.25, 2, 3, 10, 7, 100, 20, 4, 1.5, 0.6]:
	//   7176 + 1280 + 1352 + 1056 + 5984 + 3·896 + 40 + 28 + 100 + 20·2 = 19744
	inter := mustModel(t, tinyInterleavedJSON)

	full := []float64{0.5, 0.25, 2, 3, 10, 7, 100, 0, 4, 1.5, 0}
	alpha := []float64{1, 2, 3}
	tests := []struct {
		name  string
		model *ModelConfig
		tp    int
		beta  []float64
		step  *Step
		want  int64
	}{
		{"dense 11 betas", dense, 1, full, handStep(), 14116},
		{"dense 10 betas (β_EP = β₄, no MoE)", dense, 1, full[:10], handStep(), 14116},
		{"dense 9 betas: decode max", dense, 1, full[:9], handStep(), 13588},
		{"dense 8 betas: both max", dense, 1, full[:8], handStep(), 12948},
		{"dense 7 betas", dense, 1, full[:7], handStep(), 12948},
		{"dense fractional floors", dense, 1, []float64{0.3, 0.1, 1.1, 3, 10.25, 7.5, 100.2, 0, 4, 1.7, 0}, handStep(), 8579},
		// Decode only, one request with context 4: 0.25·(2304 + 4·64) + 1.5·32·5 + 4608 + 20 + 7 + 100 = 5615
		{"dense decode only", dense, 1, full, &Step{DecodeCount: 1, DecodeContextSum: 4}, 5615},
		// Zero-token prefill entries do no work: same as decode only.
		{"zero-token prefill ignored", dense, 1, full, &Step{Prefill: []PrefillWork{{NewTokens: 0, Context: 7, Target: 9}}, DecodeCount: 1, DecodeContextSum: 4}, 5615},
		{"empty step", dense, 1, full, &Step{}, 1},
		{"interleaved MoE at TP 2", inter, 2, []float64{0.5, 0.25, 2, 3, 10, 7, 100, 20, 4, 1.5, 0.6}, handStep(), 19744},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: tt.model, GPU: unitGPU, TP: tt.tp, Alpha: alpha, Beta: tt.beta})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.StepTime(tt.step); got != tt.want {
				t.Errorf("StepTime = %d, want %d (basis %v)", got, tt.want, m.Basis(tt.step))
			}
		})
	}
}

func TestTrainedPhysicsReference(t *testing.T) {
	// qwen3-14b on one H100 with the iter29 coefficients, one decode request
	// with 1000 tokens of context (peak 989.5e6 FLOP/µs, 3.35e6 bytes/µs):
	//   T_weight = [40·5120·(10240 + 2048) + 40·3·5120·17408]·2 / 3.35e6
	//            = (2516582400 + 10695475200)·2 / 3.35e6 = 7887.7956 µs
	//   T_dc_kv  = 40·2·1024·2·(1000 + 1) / 3.35e6 = 48.9413 µs
	//   β₂ᵦ·T_dc_kv + β₃·T_weight + β₅·40 + β₆·1 + β₇
	//     = 95.2939 + 10747.3272 + 1283.8187 + 4.4168 + 126.0248 = 12256.88 → 12256
	// (β₂ₐ = 0 removes decode compute; TP 1 has no all-reduce.)
	mc, err := LookupModel("qwen3-14b")
	if err != nil {
		t.Fatal(err)
	}
	h100, err := LookupGPU("H100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: mc, GPU: h100, TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.StepTime(&Step{DecodeCount: 1, DecodeContextSum: 1000}); got != 12256 {
		t.Errorf("StepTime = %d, want 12256", got)
	}
	// α = [15563.199579, 777.3455, 45.907545] truncated: Q 15563, A_end 777, A_tok 45.
	if q, e, a := m.QueueDelay(512), m.EndOverhead(), m.TokenOverhead(); q != 15563 || e != 777 || a != 45 {
		t.Errorf("Q, A_end, A_tok = %d, %d, %d; want 15563, 777, 45", q, e, a)
	}
	alpha, beta := m.Coefficients()
	if len(alpha) != 3 || len(beta) != 11 || beta[BetaMoELayer] != 481.8613888 || beta[BetaEP] != 0.752037 {
		t.Errorf("Coefficients() = %v, %v", alpha, beta)
	}
}

func TestRooflineHand(t *testing.T) {
	// tinyDense, TP 1. Per request FLOPs = t·aTok + (t·c + t(t−1)/2)·aCtx with
	//   aTok = L·[2(H² + 2H·d_kv) + 2H² + 2H] + L·4H·F = 2·(2·128 + 128 + 16) + 2·512 = 800 + 1024 = 1824
	//   aCtx = L·(4·n_h·d_h + 5·n_h) = 2·(32 + 10) = 84
	// prefill (3, c 0): 3·1824 + 3·84 = 5724; (2, c 4): 2·1824 + 9·84 = 4404 → 10128
	// decode c 4, 5: 2·1824 + 9·84 = 4404
	// unit GPU: compute = 10128/0.5 + 4404/0.25 = 20256 + 17616 = 37872 µs
	// bytes: weights = [L(H(H+2d_kv) + H²) + L·2H·F]·2 = (2·(8·16 + 64) + 2·2·8·16)·2
	//   = (384 + 512)·2 = 1792; per new token 2L·d_kv·2 + L·H·2 = 32 + 32 = 64, per
	//   context token 2L·d_kv·2 = 32: (5 + 2)·64 + (4 + 9)·32 = 448 + 416 = 864;
	//   memory = 1792 + 864 = 2656 µs
	// StepTime = ⌊max(37872, 2656)⌋ = 37872; on the fast-compute GPU compute is
	// 37.872 µs and memory wins: 2656.
	// Decode only (c 4, 5): compute 17616, memory 1792 + 2·64 + 9·32 = 2208.
	dense := mustModel(t, tinyDenseJSON)
	// tinyDeepSeek, TP 2 (L_dense 1, L_moe 3): aTok = 4·(2·(64+128) + 128 + 16) + 1·4·8·12 +
	//   3·(4·8·6·2 + 4·8·5) = 2112 + 384 + 3·544 = 4128; aCtx = 4·(32 + 10) = 168.
	//   Σ FLOPs: prefill 5·4128 + 9·168... prefill (3,0): 3·4128 + 3·168 = 12888, (2,4): 8256 + 1512 = 9768;
	//   decode: 2·4128 + 9·168 = 9768. compute = (22656/0.5 + 9768/0.25)/2 = (45312 + 39072)/2 = 42192
	//   n_eff = 4·(1 − (2/4)^7) = 3.96875; weights = [4·(8·24 + 64) + 2·8·12 + 3·(2·8·6·3.96875 + 2·8·5)]·2
	//   = (1024 + 192 + 1143 + 240)·2 = 5198; dynamic = 7·(2·4·8·2 + 4·8·2) + 13·(2·4·8·2) = 7·192 + 13·128 = 3008
	//   memory = (5198 + 3008)/2 = 4103
	deep := mustModel(t, tinyDeepSeekJSON)
	tests := []struct {
		name  string
		model *ModelConfig
		gpu   GPU
		tp    int
		step  *Step
		want  int64
	}{
		{"dense compute-bound", dense, unitGPU, 1, handStep(), 37872},
		{"dense memory-bound", dense, fastComputeGPU, 1, handStep(), 2656},
		{"dense decode only", dense, unitGPU, 1, &Step{DecodeCount: 2, DecodeContextSum: 9}, 17616},
		{"dense decode only memory-bound", dense, fastComputeGPU, 1, &Step{DecodeCount: 2, DecodeContextSum: 9}, 2208},
		{"moe compute-bound TP 2", deep, unitGPU, 2, handStep(), 42192},
		{"moe memory-bound TP 2", deep, fastComputeGPU, 2, handStep(), 4103},
		{"empty step", dense, unitGPU, 1, &Step{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewRoofline(RooflineConfig{Model: tt.model, GPU: tt.gpu, TP: tt.tp})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.StepTime(tt.step); got != tt.want {
				t.Errorf("StepTime = %d, want %d", got, tt.want)
			}
			if m.QueueDelay(100) != 0 || m.TokenOverhead() != 0 || m.EndOverhead() != 0 {
				t.Errorf("roofline overheads are not zero")
			}
		})
	}
}

func TestRooflineFP8Peak(t *testing.T) {
	// 1-byte weights run at the FP8 peak when the GPU has one. Decode of one
	// request with context 0 on tinyDense: FLOPs = aTok = 1824 (see above).
	// GPU peak 1e-6 TFLOPs (1 FLOP/µs), FP8 4 FLOP/µs, mfuDecode 0.25,
	// bandwidth huge: compute = 1824/(4·0.25) = 1824 µs with FP8, 7296 without.
	fp8 := mustModel(t, strings.Replace(tinyDenseJSON, `"torch_dtype": "bfloat16"`, `"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "fp8"}`, 1))
	dense := mustModel(t, tinyDenseJSON)
	g := GPU{Name: "g", TFlopsPeak: 1e-6, TFlopsFP8: 4e-6, BwPeakTBs: 1, MfuPrefill: 1, MfuDecode: 0.25}
	for _, tt := range []struct {
		model *ModelConfig
		gpu   GPU
		want  int64
	}{{fp8, g, 1824}, {dense, g, 7296}, {fp8, GPU{Name: "nofp8", TFlopsPeak: 1e-6, BwPeakTBs: 1, MfuPrefill: 1, MfuDecode: 0.25}, 7296}} {
		m, err := NewRoofline(RooflineConfig{Model: tt.model, GPU: tt.gpu, TP: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.StepTime(&Step{DecodeCount: 1}); got != tt.want {
			t.Errorf("weights %v bytes on %s: StepTime = %d, want %d", tt.model.WeightBytes, tt.gpu.Name, got, tt.want)
		}
	}
}

func TestBlackbox(t *testing.T) {
	// llama-3.1-8b-instruct on H100 TP 1 (docs/simulator.md §8.1): β = [6472.0076, 19.79721, 304.40210].
	//   P = 5 (3 + 2), D = 2: 6472.0076 + 98.98605 + 608.8042 = 7179.79785 → 7179
	//   α = [10326.268, 0, 0]: Q = 10326 at any prompt, A_tok = 0.
	// qwen3-14b: β = [13578.187, 39.44466, 27.32278]: 13578.187 + 197.2233 + 54.64556 = 13830.05586 → 13830
	//   α = [8888.089, 0.18489, 0]: Q(1000) = 8888.089 + 184.89 = 9072.979 → 9072
	tests := []struct {
		model         string
		step          *Step
		want, q1000   int64
		decodeOnlyOne int64 // one decode request: β₀ + β₂
	}{
		{"llama-3.1-8b-instruct", handStep(), 7179, 10326, 6776},
		{"Qwen/Qwen3-14B", handStep(), 13830, 9072, 13605},
	}
	for _, tt := range tests {
		m, err := New(Config{Kind: KindBlackbox, Model: tt.model, GPU: "h100"})
		if err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		if got := m.StepTime(tt.step); got != tt.want {
			t.Errorf("%s: StepTime = %d, want %d", tt.model, got, tt.want)
		}
		if got := m.QueueDelay(1000); got != tt.q1000 {
			t.Errorf("%s: QueueDelay(1000) = %d, want %d", tt.model, got, tt.q1000)
		}
		// Decode context does not matter to the blackbox model.
		for _, ctx := range []int64{0, 1, 1 << 20} {
			if got := m.StepTime(&Step{DecodeCount: 1, DecodeContextSum: ctx}); got != tt.decodeOnlyOne {
				t.Errorf("%s: one decode with context %d: %d, want %d", tt.model, ctx, got, tt.decodeOnlyOne)
			}
		}
		if m.TokenOverhead() != 0 || m.EndOverhead() != 0 || m.StepTime(&Step{}) != 1 {
			t.Errorf("%s: A_tok %d, A_end %d, empty step %d; want 0, 0, 1", tt.model, m.TokenOverhead(), m.EndOverhead(), m.StepTime(&Step{}))
		}
	}
	// User coefficients: β = [0.5, 0.25, 0.75], α = [1.9, 0.5, 2.99]:
	// P 5, D 2: 0.5 + 1.25 + 1.5 = 3.25 → 3; Q(3) = 1.9 + 1.5 = 3.4 → 3; A_tok 2.
	m, err := NewBlackbox(BlackboxConfig{Alpha: []float64{1.9, 0.5, 2.99}, Beta: []float64{0.5, 0.25, 0.75}})
	if err != nil {
		t.Fatal(err)
	}
	if s, q, a := m.StepTime(handStep()), m.QueueDelay(3), m.TokenOverhead(); s != 3 || q != 3 || a != 2 {
		t.Errorf("user blackbox: StepTime %d, Q(3) %d, A_tok %d; want 3, 3, 2", s, q, a)
	}
	// All-zero coefficients still give at least 1 µs.
	z, err := NewBlackbox(BlackboxConfig{Alpha: []float64{0, 0, 0}, Beta: []float64{0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := z.StepTime(handStep()); got != 1 {
		t.Errorf("zero blackbox StepTime = %d, want 1", got)
	}
}

func TestConstructorErrors(t *testing.T) {
	dense := mustModel(t, tinyDenseJSON)
	qwen, err := LookupModel("qwen3-14b")
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := LookupGPU("H100")
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"blackbox alpha length", func() error {
			_, err := NewBlackbox(BlackboxConfig{Alpha: []float64{1}, Beta: []float64{1, 2, 3}})
			return err
		}, "want 3 alpha and 3 beta"},
		{"blackbox negative", func() error {
			_, err := NewBlackbox(BlackboxConfig{Alpha: []float64{1, 2, 3}, Beta: []float64{1, -2, 3}})
			return err
		}, "beta coefficient 1 is -2"},
		{"physics alpha without beta", func() error {
			_, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: dense, GPU: unitGPU, TP: 1, Alpha: []float64{1, 2, 3}})
			return err
		}, "given together"},
		{"physics 6 betas", func() error {
			_, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: dense, GPU: unitGPU, TP: 1, Alpha: []float64{1, 2, 3}, Beta: make([]float64, 6)})
			return err
		}, "7 to 11 beta"},
		{"physics 12 betas", func() error {
			_, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: dense, GPU: unitGPU, TP: 1, Alpha: []float64{1, 2, 3}, Beta: make([]float64, 12)})
			return err
		}, "7 to 11 beta"},
		{"physics NaN", func() error {
			b := make([]float64, 7)
			b[3] = nan()
			_, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: dense, GPU: unitGPU, TP: 1, Alpha: []float64{1, 2, 3}, Beta: b})
			return err
		}, "beta coefficient 3 is NaN"},
		{"physics nil model", func() error {
			_, err := NewTrainedPhysics(TrainedPhysicsConfig{GPU: unitGPU, TP: 1})
			return err
		}, "no model config"},
		{"physics TP 0", func() error {
			_, err := NewTrainedPhysics(TrainedPhysicsConfig{Model: dense, GPU: unitGPU})
			return err
		}, "tensor parallelism must be ≥ 1"},
		{"heads not divisible", func() error {
			_, err := NewRoofline(RooflineConfig{Model: qwen, GPU: h100, TP: 3})
			return err
		}, "40 attention heads are not divisible by TP 3"},
		{"roofline without MFU", func() error {
			_, err := NewRoofline(RooflineConfig{Model: dense, GPU: GPU{Name: "x", TFlopsPeak: 1, BwPeakTBs: 1}, TP: 1})
			return err
		}, "needs positive mfuPrefill"},
		{"hand-built model without layers", func() error {
			_, err := NewRoofline(RooflineConfig{Model: &ModelConfig{Name: "x", Hidden: 8, Heads: 2, KVHeads: 2, HeadDim: 4, FFN: 8, DtypeBytes: 2, WeightBytes: 2}, GPU: unitGPU, TP: 1})
			return err
		}, "layers must be in [1,"},
		{"New: roofline with coefficients", func() error {
			_, err := New(Config{Kind: KindRoofline, Model: "qwen3-14b", GPU: "H100", Alpha: []float64{1, 2, 3}, Beta: []float64{1, 2, 3}})
			return err
		}, "roofline takes no coefficients"},
		{"New: alpha without beta", func() error {
			_, err := New(Config{Model: "qwen3-14b", GPU: "H100", Alpha: []float64{1, 2, 3}})
			return err
		}, "given together"},
		{"New: unknown kind", func() error {
			_, err := New(Config{Kind: "vidur", Model: "qwen3-14b", GPU: "H100"})
			return err
		}, `unknown latency model "vidur"`},
		{"New: negative TP", func() error {
			_, err := New(Config{Model: "qwen3-14b", GPU: "H100", TP: -1})
			return err
		}, "must be ≥ 1"},
		{"New: blackbox without table entry", func() error {
			_, err := New(Config{Kind: KindBlackbox, Model: "qwen3-14b", GPU: "H100", TP: 2})
			return err
		}, "qwen3-14b on H100 TP 1 (vLLM v0.11.0); pass --alpha-coeffs and --beta-coeffs"},
	}
	for _, tt := range tests {
		err := tt.err()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

func TestNewFactory(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string // concrete type
		step int64  // StepTime of one decode request with 1000 context
	}{
		// Default kind is physics: one decode at context 1000 on Qwen3-14B,
		// H100. Dense GEMMs: weights 2·13212057600 B / 3.35e6 B/µs = 7887.80
		// µs at peak, /0.85 = 9279.76 (the FLOP time, 26.7045/0.74, hides
		// under it: a step's knee is 0); LM head 464.42/0.85 = 546.38;
		// element-wise 2.0297/0.85 = 2.39; KV 48.907/0.85 = 57.54;
		// 40 layers · 15 + 300 per step + 5 per request = 905 → 10791.
		{Config{Model: "qwen3-14b", GPU: "H100"}, "*latency.Physics", 10791},
		// BLIS's model by name; see TestTrainedPhysicsReference for 12256.
		{Config{Kind: "TRAINED-PHYSICS", Model: "Qwen/Qwen3-14B", GPU: "h100", TP: 1}, "*latency.TrainedPhysics", 12256},
		// User coefficients override: 7 betas [0,0,0,0,0,0,5] → 5 µs per step; α₀ = 9.
		{Config{Kind: KindTrainedPhysics, Model: "qwen3-14b", GPU: "H100", Alpha: []float64{9, 0, 0}, Beta: []float64{0, 0, 0, 0, 0, 0, 5}}, "*latency.TrainedPhysics", 5},
		// qwen3-14b on H100 roofline, one decode at context 1000: memory-bound
		// (compute is about 68 µs): weights (40·(5120·7168 + 5120²) + 40·2·5120·17408)·2
		// = 19293798400 bytes; new token 2·40·1024·2 + 40·5120·2 = 573440; context
		// 1000·2·40·1024·2 = 163840000; 19458211840/3.35e6 = 5808.42 → 5808
		{Config{Kind: KindRoofline, Model: "qwen3-14b", GPU: "H100"}, "*latency.Roofline", 5808},
		// Blackbox ignores context: β₀ + β₂ = 13578.187 + 27.32278 → 13605
		{Config{Kind: KindBlackbox, Model: "qwen3-14b", GPU: "H100"}, "*latency.Blackbox", 13605},
		// Blackbox with user coefficients needs no known model or GPU.
		{Config{Kind: KindBlackbox, Model: "my-own-model", Alpha: []float64{0, 0, 0}, Beta: []float64{10, 1, 2}}, "*latency.Blackbox", 12},
		// A model from a file and a GPU from a hardware file.
		{Config{Kind: KindRoofline, Model: "testdata/tiny-model", GPU: "unit", HardwareFile: "testdata/gpus.json"}, "*latency.Roofline", -1},
	}
	for _, tt := range tests {
		m, err := New(tt.cfg)
		if err != nil {
			t.Errorf("New(%+v): %v", tt.cfg, err)
			continue
		}
		if got := typeName(m); got != tt.want {
			t.Errorf("New(%+v) is %s, want %s", tt.cfg, got, tt.want)
		}
		if tt.step >= 0 {
			if got := m.StepTime(&Step{DecodeCount: 1, DecodeContextSum: 1000}); got != tt.step {
				t.Errorf("New(%+v).StepTime = %d, want %d", tt.cfg, got, tt.step)
			}
		}
	}
	// tiny-model (= tinyDense) on the unit GPU: one decode at context 1000:
	// compute (1824 + 1000·84)/0.25 = 343296; memory 1792 + 64 + 32000 = 33856.
	m, err := New(Config{Kind: KindRoofline, Model: "testdata/tiny-model/config.json", GPU: "testdata/gpus.json", HardwareFile: ""})
	if err == nil {
		t.Errorf("a two-GPU hardware file given as the GPU should need a name, got model %v", m)
	}
	m, err = New(Config{Kind: KindRoofline, Model: "testdata/tiny-model/config.json", GPU: "unit", HardwareFile: "testdata/gpus.json"})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.StepTime(&Step{DecodeCount: 1, DecodeContextSum: 1000}); got != 343296 {
		t.Errorf("tiny roofline StepTime = %d, want 343296", got)
	}
}

func typeName(m Model) string {
	switch m.(type) {
	case *TrainedPhysics:
		return "*latency.TrainedPhysics"
	case *Roofline:
		return "*latency.Roofline"
	case *Blackbox:
		return "*latency.Blackbox"
	case *Physics:
		return "*latency.Physics"
	}
	return "unknown"
}
