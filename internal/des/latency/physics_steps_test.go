package latency

import (
	"math"
	"testing"
)

// qwen3H100 is the physics model of Qwen3-14B on one H100 at its defaults.
func qwen3H100(t *testing.T, graphs CUDAGraphs) *Physics {
	t.Helper()
	m, err := LookupModel("qwen3-14b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := LookupGPU("H100")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPhysics(PhysicsConfig{Model: m, GPU: g, TP: 1, Graphs: graphs})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// decodes is a step of n decodes at ctx tokens of context each.
func decodes(n, ctx int) Step { return Step{DecodeCount: n, DecodeContextSum: int64(n * ctx)} }

// prompts adds k whole prompts of n tokens to s.
func prompts(s Step, k, n int) Step {
	for range k {
		s.Prefill = append(s.Prefill, PrefillWork{NewTokens: n, Target: n})
	}
	return s
}

// TestPhysicsStepsOnH100 checks the default physics model against the
// steps of a real vLLM 0.23 server (Qwen3-14B on one H100, contexts of
// about 1,050 tokens, prompts of about 990), read from the per-chunk
// timestamps of its streams: each within 6% (the defaults give −4.7% to
// +3.6%).
func TestPhysicsStepsOnH100(t *testing.T) {
	p := qwen3H100(t, CUDAGraphs{})
	for _, c := range []struct {
		name   string
		step   Step
		realMs float64
	}{
		{"2 decodes", decodes(2, 1050), 11.4},
		{"253 decodes", decodes(253, 1050), 27.8},
		{"a prompt and 2 decodes", prompts(decodes(2, 1050), 1, 990), 39.6},
		{"a prompt and 252 decodes", prompts(decodes(252, 1050), 1, 990), 75.7},
		{"two prompts and 252 decodes", prompts(decodes(252, 1050), 2, 990), 75.7 + 41},
		{"the 8,192-token budget and 233 decodes", prompts(prompts(decodes(233, 1050), 7, 990), 1, 8192-233-7*990), 363},
	} {
		got := float64(p.StepTime(&c.step)) / 1000
		if e := got/c.realMs - 1; math.Abs(e) > 0.06 {
			t.Errorf("%s: %.1f ms, real %.1f ms (%+.0f%%)", c.name, got, c.realMs, 100*e)
		}
	}
}

// TestPhysicsPromptTail: on Hopper, a step whose prompt is the 9-token
// uncached tail of a prompt the prefix cache served runs as one CUDA
// graph and costs little more than its decodes alone (the share of an
// attention tile the tail fills of the mixed-batch penalty: under 5%,
// where a whole prompt's penalty and launches add 40%); on a GPU without
// FlashAttention 3 it pays the mixed-batch penalty and the per-layer
// launches in full.
func TestPhysicsPromptTail(t *testing.T) {
	p := qwen3H100(t, CUDAGraphs{})
	tail := decodes(252, 1050)
	tail.Prefill = []PrefillWork{{NewTokens: 9, Context: 981, Target: 990}}
	base := decodes(252, 1050)
	if got, whole := p.StepTime(&tail), p.StepTime(&base); float64(got) > 1.05*float64(whole) {
		t.Errorf("a 9-token tail and 252 decodes take %d µs; the decodes alone %d µs", got, whole)
	}
	if q := p.Quantities(&tail); q.EagerLayers != 0 || q.MixedKV > 0.1*q.KV {
		t.Errorf("tail step on H100: eager layers %v, mixed KV %v of %v", q.EagerLayers, q.MixedKV, q.KV)
	}
	m, _ := LookupModel("qwen3-14b")
	l40, err := LookupGPU("L40S")
	if err != nil {
		t.Fatal(err)
	}
	fa2, err := NewPhysics(PhysicsConfig{Model: m, GPU: l40, TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	if q := fa2.Quantities(&tail); q.EagerLayers != 40 || q.MixedKV != q.KV || q.PrefillSeq != 1 {
		t.Errorf("tail step on L40S: eager layers %v, mixed KV %v of %v, prefill requests %v", q.EagerLayers, q.MixedKV, q.KV, q.PrefillSeq)
	}
}

// TestPhysicsGraphRegime: which steps on Hopper run without a graph.
func TestPhysicsGraphRegime(t *testing.T) {
	long := prompts(decodes(2, 100), 1, 990) // 992 tokens > 512 captured
	short := prompts(decodes(2, 100), 1, 100)
	dec := decodes(64, 100)
	oneTok := prompts(decodes(64, 100), 1, 1)
	for _, c := range []struct {
		name   string
		graphs CUDAGraphs
		step   Step
		eager  bool
	}{
		{"decode-only under a full graph", CUDAGraphs{}, dec, false},
		{"a short mixed step under a full graph (FlashAttention 3)", CUDAGraphs{}, short, false},
		{"a step beyond the largest captured size", CUDAGraphs{}, long, true},
		{"a larger capture size takes it in", CUDAGraphs{MaxCaptureTokens: 1024}, long, false},
		{"enforce-eager: decodes too", CUDAGraphs{Eager: true}, dec, true},
		{"V0: every step that prefills", CUDAGraphs{DecodeOnly: true}, short, true},
		{"V0: decodes under a graph", CUDAGraphs{DecodeOnly: true}, dec, false},
		{"V0: a one-token prompt chunk too runs eagerly", CUDAGraphs{DecodeOnly: true}, oneTok, true},
		{"V1: a one-token prompt chunk is a decode row", CUDAGraphs{}, oneTok, false},
	} {
		p := qwen3H100(t, c.graphs)
		q := p.Quantities(&c.step)
		if got := q.LaunchLayers > 0; got != c.eager || q.EagerLayers != 0 {
			t.Errorf("%s: launched layer by layer %v, want %v (split layers %v, want 0 on Hopper)", c.name, got, c.eager, q.EagerLayers)
		}
	}
	m, _ := LookupModel("qwen3-14b")
	g, _ := LookupGPU("H100")
	if _, err := NewPhysics(PhysicsConfig{Model: m, GPU: g, TP: 1, Graphs: CUDAGraphs{MaxCaptureTokens: -1}}); err == nil {
		t.Error("a negative capture size was accepted")
	}
}

// TestPhysicsLaunchesHide: a step that runs without a CUDA graph takes the
// longer of its GPU work and its host's launches, layer by layer: a long
// prompt hides them, a small step under --enforce-eager is bound by them,
// and a step that prefills on a GPU without FlashAttention 3 (attention
// between graph pieces) pays its per-layer cost in full whatever its size.
func TestPhysicsLaunchesHide(t *testing.T) {
	long := prompts(decodes(2, 1050), 1, 990)
	p := qwen3H100(t, CUDAGraphs{})
	_, beta := p.Coefficients()
	host := beta[PhStepUs]
	q := p.Quantities(&long)
	if got, want := PhysicsTime(&q, beta), GPUTime(&q, beta)+host+3*beta[PhSeqUs]+beta[PhPrefillSeqUs]; math.Abs(got-want) > 1e-6 || p.LaunchBound(&q) {
		t.Errorf("a 990-token prompt beyond the captured size: %.1f µs, want its GPU work and host %.1f (launch bound %v)", got, want, p.LaunchBound(&q))
	}
	m, err := LookupModel("llama-3.2-1b")
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := LookupGPU("H100")
	eager, err := NewPhysics(PhysicsConfig{Model: m, GPU: h100, TP: 1, Graphs: CUDAGraphs{Eager: true}})
	if err != nil {
		t.Fatal(err)
	}
	small := decodes(1, 100)
	q = eager.Quantities(&small)
	launch := float64(m.Layers) * (beta[PhLayerUs] + beta[PhEagerLayerUs])
	if got := PhysicsTime(&q, beta) - host - beta[PhSeqUs]; math.Abs(got-launch) > 1e-6 || !eager.LaunchBound(&q) || GPUTime(&q, beta) >= launch {
		t.Errorf("one decode of a 1B model under enforce-eager: %.1f µs beside the host's, want its launches %.1f (GPU %.1f)", got, launch, GPUTime(&q, beta))
	}
	l40, _ := LookupGPU("L40S")
	qm, _ := LookupModel("qwen3-14b")
	fa2, err := NewPhysics(PhysicsConfig{Model: qm, GPU: l40, TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	lb := PhysicsDefaultBeta(l40)
	q = fa2.Quantities(&long)
	split := float64(qm.Layers) * lb[PhEagerLayerUs]
	if got := PhysicsTime(&q, lb) - GPUTime(&q, lb); q.LaunchLayers != 0 || math.Abs(got-(split+lb[PhStepUs]+3*lb[PhSeqUs]+lb[PhPrefillSeqUs])) > 1e-6 {
		t.Errorf("a prompt on L40S: %.1f µs beyond its GPU work, want the per-layer cost %.1f in full and the host's (launched layers %v)", got, split, q.LaunchLayers)
	}
}

// TestPhysicsOneTokenQuery: the last prompt token a decode instance
// recomputes after a KV transfer is a query of one token, a decode row to
// the attention backend: beside decodes it costs what one more decode
// does, on FlashAttention 2 as on 3 (no mixed-batch penalty, no per-layer
// cost of a step outside a graph, no prefill request's own work).
func TestPhysicsOneTokenQuery(t *testing.T) {
	m, _ := LookupModel("qwen3-14b")
	for _, name := range []string{"L40S", "H100"} {
		g, err := LookupGPU(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPhysics(PhysicsConfig{Model: m, GPU: g, TP: 1})
		if err != nil {
			t.Fatal(err)
		}
		one := decodes(64, 1000)
		one.Prefill = []PrefillWork{{NewTokens: 1, Context: 1000, Target: 1001}}
		q := p.Quantities(&one)
		if q.MixedKV != 0 || q.EagerLayers != 0 || q.LaunchLayers != 0 || q.PrefillSeq != 0 || q.Attn != 0 {
			t.Errorf("%s: a one-token query beside 64 decodes: mixed KV %v, eager layers %v, launched %v, prefill requests %v, prefill attention %v; want a decode batch",
				name, q.MixedKV, q.EagerLayers, q.LaunchLayers, q.PrefillSeq, q.Attn)
		}
		row := decodes(65, 1000)
		if got, dec := p.StepTime(&one), p.StepTime(&row); got != dec {
			t.Errorf("%s: a one-token query at 1,000 tokens of context and 64 decodes take %d µs; 65 decodes %d µs", name, got, dec)
		}
		two := decodes(64, 1000)
		two.Prefill = []PrefillWork{{NewTokens: 2, Context: 998, Target: 1000}}
		if name == "L40S" && p.Quantities(&two).EagerLayers == 0 {
			t.Errorf("L40S: a two-token chunk beside decodes ran as a decode batch")
		}
	}
}
