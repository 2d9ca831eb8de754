package deploy

import (
	"strings"
	"testing"

	"servesim/internal/des/latency"
	"servesim/internal/flagspec"
)

// TestEngineDefaults: vLLM's batch limits follow the GPU and the latency
// model, and a limit given is kept.
func TestEngineDefaults(t *testing.T) {
	for _, c := range []struct {
		name           string
		mod            func(*Config)
		seqs, tokens   int
		captureTokens  int
		decodeOnlyGrph bool
	}{
		{"H100", func(*Config) {}, 1024, 8192, 512, false},
		{"A100 (80 GiB, but an A100)", func(c *Config) { c.GPU = "A100-80" }, 256, 2048, 512, false},
		{"L40S (48 GiB)", func(c *Config) { c.GPU = "L40S" }, 256, 2048, 512, false},
		{"BLIS's model keeps BLIS's limits", func(c *Config) { c.LatencyModel = "trained-physics" }, 256, 2048, 512, false},
		{"given limits stay", func(c *Config) { c.MaxNumSeqs, c.MaxNumBatchedTokens = 64, 4096 }, 64, 4096, 128, false},
		{"V0 engine", func(c *Config) { c.VLLMVersion = "0.6.3" }, 256, 2048, 256, true},
		{"capture size given", func(c *Config) { c.MaxCUDAGraphCaptureSize = 1024 }, 1024, 8192, 1024, false},
	} {
		cfg := Default()
		c.mod(&cfg)
		r, err := Resolve(cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Instance.MaxNumSeqs != c.seqs || r.Instance.MaxNumBatchedTokens != c.tokens {
			t.Errorf("%s: %d requests, %d tokens; want %d, %d", c.name, r.Instance.MaxNumSeqs, r.Instance.MaxNumBatchedTokens, c.seqs, c.tokens)
		}
		if r.graphs.MaxCaptureTokens != c.captureTokens || r.graphs.DecodeOnly != c.decodeOnlyGrph {
			t.Errorf("%s: graphs %+v, want capture %d, decode-only %v", c.name, r.graphs, c.captureTokens, c.decodeOnlyGrph)
		}
	}
}

// stepUs is the default deployment's time for one step of n decodes at
// 1,000 tokens of context, with mod applied.
func stepUs(t *testing.T, mod func(*Config)) (int64, *Resolved) {
	t.Helper()
	cfg := Default()
	mod(&cfg)
	r, err := Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r.Instance.Latency.StepTime(&latency.Step{DecodeCount: 64, DecodeContextSum: 64_000}), r
}

// TestServingFlags: the vLLM flags that change how fast a server runs
// change the simulation, and a bad value is refused.
func TestServingFlags(t *testing.T) {
	base, r0 := stepUs(t, func(*Config) {})
	// Without graphs the host launches each layer's kernels ahead of the
	// GPU: Qwen3-14B's 64 decodes read 29.6 GB of weights, 280 µs a layer,
	// which hides the launches; one decode of Llama-3.2-1B reads 40 µs a
	// layer, and its 16 layers' launches (15 + 80 µs each) set the step.
	eager, _ := stepUs(t, func(c *Config) { c.EnforceEager = true })
	if eager != base {
		t.Errorf("--enforce-eager: a decode step of Qwen3-14B takes %d µs, want its graphed %d µs (the launches hide)", eager, base)
	}
	one := func(enforce bool) int64 {
		cfg := Default()
		cfg.Model, cfg.EnforceEager = "llama-3.2-1b", enforce
		r, err := Resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return r.Instance.Latency.StepTime(&latency.Step{DecodeCount: 1, DecodeContextSum: 100})
	}
	if graphed, launched, want := one(false), one(true), int64(16*(15+80)+300+5); launched != want || graphed >= launched {
		t.Errorf("--enforce-eager: a decode of Llama-3.2-1B takes %d µs (graphed %d), want its launches and host %d µs", launched, graphed, want)
	}
	fp8kv, r1 := stepUs(t, func(c *Config) { c.KVCacheDtype = "fp8" })
	if fp8kv >= base || r1.TotalKVBlocks < 2*r0.TotalKVBlocks-1 {
		t.Errorf("--kv-cache-dtype fp8: step %d µs (was %d), %d blocks (was %d); want faster, twice the blocks", fp8kv, base, r1.TotalKVBlocks, r0.TotalKVBlocks)
	}
	fp8w, r2 := stepUs(t, func(c *Config) { c.Quantization = "fp8" })
	// Qwen3-14B's weights take 9.3 ms to read at 85% of an H100's bandwidth.
	if base-fp8w < 4500 || r2.TotalKVBlocks <= r0.TotalKVBlocks {
		t.Errorf("--quantization fp8: step %d µs (was %d), %d blocks (was %d); want the weight read halved, more blocks", fp8w, base, r2.TotalKVBlocks, r0.TotalKVBlocks)
	}
	for _, mod := range []func(*Config){
		func(c *Config) { c.KVCacheDtype = "int3" },
		func(c *Config) { c.Quantization = "magic" },
	} {
		cfg := Default()
		mod(&cfg)
		if _, err := Resolve(cfg); err == nil || !strings.Contains(err.Error(), "is not one of") {
			t.Errorf("a bad value: %v", err)
		}
	}
}

// TestIgnoredFlagNotes: a pasted `vllm serve` flag the simulator does not
// use gets one line, saying whether it would change performance.
func TestIgnoredFlagNotes(t *testing.T) {
	notes := IgnoredFlagNotes(flagspec.Values{"trust-remote-code": true, "swap-space": "4", "max-num-seqs": 8})
	if len(notes) != 2 || !strings.Contains(notes[0], "--trust-remote-code: a vLLM flag that does not change") ||
		!strings.Contains(notes[1], "--swap-space: a vLLM flag the simulator does not model") {
		t.Errorf("notes %q", notes)
	}
	names := map[string]bool{}
	for _, f := range Flags() {
		if names[f.Name] {
			t.Errorf("--%s twice", f.Name)
		}
		names[f.Name] = true
	}
}

// TestPipelineAgainstDefaultSeqs: pipeline stages are checked against the
// max_num_seqs vLLM would default to on the GPU.
func TestPipelineAgainstDefaultSeqs(t *testing.T) {
	cfg := Default()
	cfg.GPU, cfg.PipelineParallel = "L40S", 300
	if _, err := Resolve(cfg); err == nil || !strings.Contains(err.Error(), "pipeline-parallel 300 exceeds max-num-seqs 256") {
		t.Errorf("PP 300 on an L40S: %v", err)
	}
}

// TestCommonAndSameServer: what deployments of several servers share.
func TestCommonAndSameServer(t *testing.T) {
	a, b := Default(), Default()
	a.MaxNumSeqs, b.MaxNumSeqs = 64, 64
	a.BlockSize, b.BlockSize = 32, 16
	if !SameServer([]Config{a, b}) {
		t.Error("two deployments of one server are not the same server")
	}
	b.Model, b.TP = "llama-3.1-8b-instruct", 2
	if SameServer([]Config{a, b}) {
		t.Error("two models are the same server")
	}
	c := Common([]Config{a, b})
	if c.MaxNumSeqs != 64 || c.BlockSize != Default().BlockSize || c.Model != Default().Model || c.TP != Default().TP {
		t.Errorf("common: %d seqs, block %d, model %s, TP %d; want the shared 64 and the defaults elsewhere", c.MaxNumSeqs, c.BlockSize, c.Model, c.TP)
	}
}

// TestCaptureSizeLocated: a negative capture size in a file is refused at
// its place, before the latency model sees it.
func TestCaptureSizeLocated(t *testing.T) {
	_, err := Decode("d.yaml", []byte("max_cudagraph_capture_size: -5\n"), Default())
	if err == nil || err.Error() != "d.yaml:1:29: key max_cudagraph_capture_size: -5 must not be negative" {
		t.Errorf("got %v", err)
	}
}
