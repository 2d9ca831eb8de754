package deploy

import (
	"strings"
	"testing"
)

func TestResolveDefault(t *testing.T) {
	r, err := Resolve(Default())
	if err != nil {
		t.Fatal(err)
	}
	// simulator.md §8.5: qwen3-14b on one H100 at 0.9 utilisation.
	if r.TotalKVBlocks != 15909 {
		t.Errorf("TotalKVBlocks = %d, want 15909", r.TotalKVBlocks)
	}
	// qwen3-14b has max_position_embeddings 40960 < 15909·16.
	if r.MaxModelLen != 40960 {
		t.Errorf("MaxModelLen = %d, want 40960", r.MaxModelLen)
	}
	if r.Instance.Latency == nil || r.Instance.KV.Blocks != 15909 || r.Instance.MaxNumSeqs != 256 {
		t.Errorf("instance config not filled: %+v", r.Instance)
	}
}

func TestResolveCapsMaxModelLenAtCapacity(t *testing.T) {
	c := Default()
	c.TotalKVBlocks = 100
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxModelLen != 1600 {
		t.Errorf("MaxModelLen = %d, want 100·16 = 1600", r.MaxModelLen)
	}
	c.MaxModelLen = 1601
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "max-model-len 1601 needs 101 KV blocks") {
		t.Errorf("err = %v, want max-model-len too large", err)
	}
}

func TestDecodeStrict(t *testing.T) {
	tests := []struct {
		yaml, want string
	}{
		{"model: llama-3.1-8b-instruct\nmax_num_seqs: 64\n", ""},
		{"model: x\nmax_num_sequences: 3\n", "dep.yaml: line 2: unknown key max_num_sequences"},
		{"max_num_seqs: many\n", "dep.yaml: line 1: cannot unmarshal !!str `many` into int"},
	}
	for _, tt := range tests {
		got, err := Decode("dep.yaml", []byte(tt.yaml), Default())
		if tt.want == "" {
			if err != nil || got.Model != "llama-3.1-8b-instruct" || got.MaxNumSeqs != 64 || got.GPU != "H100" {
				t.Errorf("Decode(%q) = %+v, %v", tt.yaml, got, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%q) error = %v, want %q", tt.yaml, err, tt.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.MaxNumSeqs = 0 }, "max-num-seqs 0 must be positive"},
		{func(c *Config) { c.GPUMemoryUtilization = 1.5 }, "gpu-memory-utilization 1.5 must be in (0, 1]"},
		{func(c *Config) { c.Model = "gpt-9" }, "gpt-9"},
		{func(c *Config) { c.GPU = "TPU" }, "TPU"},
		{func(c *Config) { c.AlphaCoeffs = []float64{1, 2, 3} }, "must be given together"},
	}
	for _, tt := range tests {
		c := Default()
		tt.mod(&c)
		_, err := Resolve(c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want it to mention %q", err, tt.want)
			continue
		}
		if ec, ok := err.(interface{ ExitCode() int }); !ok || ec.ExitCode() != 2 {
			t.Errorf("%v: want an input error with exit code 2", err)
		}
	}
}
