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
		{"instances beyond any machine", func(c *Config) { c.Instances = 100_000_000 }, "deployment: 100000000 instances exceed 1048576"},
		{"instances at int's top", func(c *Config) { c.Instances = math.MaxInt }, "instances exceed 1048576"},
		{"P/D pools overflowing", func(c *Config) {
			c.PrefillInstances, c.DecodeInstances, c.PDDecider = math.MaxInt, math.MaxInt, "always"
		}, "instances exceed 1048576"},
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

// TestMemoryBoundFromYAML: the same bound holds for a deployment file.
func TestMemoryBoundFromYAML(t *testing.T) {
	c, err := Decode("dep.yaml", []byte("num_instances: 100000000\n"), Default())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "100000000 instances exceed") {
		t.Errorf("err = %v, want the instance bound", err)
	}
}
