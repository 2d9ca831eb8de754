package deploy

import (
	"math"
	"strings"
	"testing"
)

// TestSizeBounds: every size that makes the simulator allocate is refused
// with the flag's name before anything is allocated, whatever the machine.
func TestSizeBounds(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"instances beyond any machine", func(c *Config) { c.Instances = 100_000_000 }, "deployment: num-instances 100000000 exceeds 1048576, the most instances one simulation holds"},
		{"instances at int's top", func(c *Config) { c.Instances = math.MaxInt }, "num-instances 9223372036854775807 exceeds 1048576"},
		{"P/D pools overflowing", func(c *Config) {
			c.PrefillInstances, c.DecodeInstances, c.PDDecider = math.MaxInt, math.MaxInt, "always"
		}, "prefill-instances 9223372036854775807 exceeds 1048576"},
		{"instances beyond this machine", func(c *Config) { c.Instances = 500_000 }, "deployment: 500000 instances of 15909 KV blocks need about 786.4 GiB of memory to simulate, more than 75% of the"},
		{"KV blocks beyond a cache", func(c *Config) { c.TotalKVBlocks = 2_000_000_000 }, "total-kv-blocks 2000000000 exceeds 1073741823, the most a KV cache can hold"},
		{"lightllm tokens beyond a cache", func(c *Config) { c.TotalKVBlocks, c.Batching = 100_000_000, "lightllm" },
			"batching lightllm holds KV per token, and total-kv-blocks 100000000 × block-size 16 exceeds 1073741823"},
		{"block size", func(c *Config) { c.BlockSize = 1_000_000_000 }, "block-size 1000000000 exceeds 65536 tokens"},
		{"max-model-len at int's top", func(c *Config) { c.MaxModelLen = math.MaxInt }, "max-model-len 9223372036854775807 needs 576460752303423488 KV blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.edit(&c)
			_, err := Resolve(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestMemoryBound: a deployment whose instances' KV caches would take more
// than three quarters of the memory available is refused, naming both.
func TestMemoryBound(t *testing.T) {
	c := Default()
	c.Instances = 100
	r := &Resolved{Config: c}
	need := footprint(100, 15909)
	if err := r.checkSizes(15909, uint64(need/memoryShare)+1, true); err != nil {
		t.Errorf("just enough memory: %v", err)
	}
	err := r.checkSizes(15909, 100<<20, true)
	want := "deployment: 100 instances of 15909 KV blocks need about 161 MiB of memory to simulate, more than 75% of the 100 MiB this machine has available; lower num-instances or total-kv-blocks"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err := r.checkSizes(15909, 0, false); err != nil {
		t.Errorf("unknown memory: %v, want only the fixed bounds", err)
	}
	if avail, ok := availableMemory(); ok && avail < 1<<20 {
		t.Errorf("availableMemory = %d bytes: implausibly small", avail)
	}
}

// TestBoundsFromYAML: the fixed bounds, and the values that must agree
// with others, hold for a deployment file, at their place.
func TestBoundsFromYAML(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"num_instances: 100000000\n", "dep.yaml:1:16: key num_instances: 100000000 exceeds 1048576, the most instances one simulation holds"},
		{"total_kv_blocks: 1e12\n", "dep.yaml:1:18: key total_kv_blocks: 1000000000000 exceeds 1073741823, the most a KV cache can hold"},
		{"pipeline_parallel: 4\nmax_num_seqs: 2\n", "dep.yaml:2:15: pipeline-parallel 4 exceeds max-num-seqs 2"},
		{"prefill_instances: 1\n", "dep.yaml:1:20: prefill-instances 1 and decode-instances 0: P/D needs both pools"},
		{"num_instances: [2]\n", "dep.yaml:1:16: key num_instances: want an integer, got a list"},
	} {
		_, err := Decode("dep.yaml", []byte(c.yaml), Default())
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: err = %v, want %q", c.yaml, err, c.want)
		}
	}
	// A flag that fixes the file's value: no error from the file.
	l, err := NewLayers("", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.file, l.data = "dep.yaml", []byte("pipeline_parallel: 300\nmax_num_seqs: 256\n")
	l.flags = map[string]any{"max-num-seqs": 512}
	if cfg, err := l.On(Default()); err != nil || cfg.PipelineParallel != 300 || cfg.MaxNumSeqs != 512 {
		t.Errorf("the flag's max_num_seqs: %v", err)
	}
	l.flags = map[string]any{"max-num-seqs": 8}
	if _, err := l.On(Default()); err != nil {
		t.Errorf("a flag's value is left to Resolve, without a place in the file: %v", err)
	}
	l.flags = nil
	if _, err := l.On(Default()); err == nil || err.Error() != "dep.yaml:2:15: pipeline-parallel 300 exceeds max-num-seqs 256" {
		t.Errorf("the file alone: %v", err)
	}
}
