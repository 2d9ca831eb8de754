package deploy

import (
	"reflect"
	"strings"
	"testing"
)

// Every GPU a deployment runs on is counted: each data-parallel rank holds
// its own TP × PP shards, and every instance of every pool has them all.
func TestGPUs(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want int
	}{
		{"the default", func(c *Config) {}, 1},
		{"TP 2 × DP 2", func(c *Config) { c.TP, c.DataParallel = 2, 2 }, 4},
		{"TP 2 × PP 2 × DP 2, 3 instances", func(c *Config) { c.TP, c.PipelineParallel, c.DataParallel, c.Instances = 2, 2, 2, 3 }, 24},
		{"P/D 1 + 2 of TP 2 × DP 2", func(c *Config) { c.TP, c.DataParallel, c.PrefillInstances, c.DecodeInstances = 2, 2, 1, 2 }, 12},
		{"P/D 2 of TP 4 + 3 of TP 1", func(c *Config) { c.PrefillInstances, c.DecodeInstances, c.PrefillTP = 2, 3, 4 }, 11},
		{"2 instances of TP 2 + 3 encoders of TP 1", func(c *Config) { c.Instances, c.TP, c.EncodeInstances, c.EncodeTP = 2, 2, 3, 1 }, 7},
	} {
		c := Default()
		tc.set(&c)
		if got := c.GPUs(); got != tc.want {
			t.Errorf("%s: %d GPUs, want %d", tc.name, got, tc.want)
		}
	}
	mixed := Default()
	mixed.PrefillInstances, mixed.DecodeInstances, mixed.DecodeGPU, mixed.DecodeTP = 1, 3, "A100-80", 2
	if gpus, counts := mixed.GPUMix(); !reflect.DeepEqual(gpus, []string{"H100", "A100-80"}) || !reflect.DeepEqual(counts, []int{1, 6}) {
		t.Errorf("GPU mix %v × %v, want [H100 A100-80] × [1 6]", gpus, counts)
	}
	mixed.EncodeInstances, mixed.EncodeGPU = 2, "L40S"
	if gpus, counts := mixed.GPUMix(); !reflect.DeepEqual(gpus, []string{"H100", "A100-80", "L40S"}) || !reflect.DeepEqual(counts, []int{1, 6, 2}) {
		t.Errorf("GPU mix with encoders %v × %v, want [H100 A100-80 L40S] × [1 6 2]", gpus, counts)
	}
	mixed.DecodeGPU, mixed.EncodeGPU = "H100", ""
	if gpus, _ := mixed.GPUMix(); gpus != nil {
		t.Errorf("one GPU type: mix %v, want none", gpus)
	}
	c := Default()
	c.TP, c.DataParallel = 2, 2
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Describe(); !strings.Contains(d, "on 4 × H100 (TP 2 × DP 2)") {
		t.Errorf("Describe() = %q, want the 4 GPUs of TP 2 × DP 2", d)
	}
}
