package deploy

import (
	"strings"
	"testing"
)

// TestDecodeAliases: a table test per alias key; each sets the field its
// deployment key sets.
func TestDecodeAliases(t *testing.T) {
	tests := []struct {
		yaml string
		get  func(Config) any
		want any
	}{
		{"hardware: A100-80\n", func(c Config) any { return c.GPU }, "A100-80"},
		{"hardware_config: hw.json\n", func(c Config) any { return c.HardwareFile }, "hw.json"},
		{"tp: 4\n", func(c Config) any { return c.TP }, 4},
		{"tensor_parallel_size: 2\n", func(c Config) any { return c.TP }, 2},
		{"pp: 2\n", func(c Config) any { return c.PipelineParallel }, 2},
		{"pipeline_parallel_size: 3\n", func(c Config) any { return c.PipelineParallel }, 3},
		{"dp: 2\n", func(c Config) any { return c.DataParallel }, 2},
		{"data_parallel_size: 4\n", func(c Config) any { return c.DataParallel }, 4},
		{"max_num_running_reqs: 64\n", func(c Config) any { return c.MaxNumSeqs }, 64},
		{"max_num_scheduled_tokens: 8192\n", func(c Config) any { return c.MaxNumBatchedTokens }, 8192},
		{"block_size_in_tokens: 32\n", func(c Config) any { return c.BlockSize }, 32},
		{"enable_prefix_caching: false\n", func(c Config) any { return c.EnablePrefixCaching }, false},
		{"enable_chunked_prefill: false\n", func(c Config) any { return c.EnableChunkedPrefill }, false},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		got, err := Decode("d.yaml", []byte(tt.yaml), Default())
		if err != nil {
			t.Errorf("Decode(%q): %v", tt.yaml, err)
			continue
		}
		if g := tt.get(got); g != tt.want {
			t.Errorf("Decode(%q): got %v, want %v", tt.yaml, g, tt.want)
		}
		covered[strings.TrimSpace(strings.Split(tt.yaml, ":")[0])] = true
	}
	for _, names := range KeyAliases() {
		for _, a := range names {
			if !covered[a] {
				t.Errorf("alias %s has no case in this table", a)
			}
		}
	}
}

func TestDecodeAliasErrors(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"tensor_parallel: 2\ntp: 4\n", "d.yaml:2:1: keys tp and tensor_parallel (line 1) name the same setting, tensor_parallel: give one"},
		{"tp: 2\ntp: 4\n", `d.yaml:2:1: key "tp" is given twice (first on line 1)`},
		{"model: x\nmax_num_sequences: 3\n", `d.yaml:2:1: unknown key "max_num_sequences"`},
		{"tensor_parallel_sizes: 3\n", `d.yaml:1:1: unknown key "tensor_parallel_sizes" (did you mean "tensor_parallel_size"?)`},
		{"tp: two\n", `d.yaml:1:5: key tensor_parallel: "two" is not an integer`},
		{"num_instances: 2.9\n", `d.yaml:1:16: key num_instances: "2.9" is not an integer`},
		{"tensor_parallel: 1.99\n", `d.yaml:1:18: key tensor_parallel: "1.99" is not an integer`},
		{"total_kv_blocks: 999.9\n", `d.yaml:1:18: key total_kv_blocks: "999.9" is not an integer`},
		{"class_priorities: {a: 0.5}\n", `d.yaml:1:23: key class_priorities: "0.5" is not an integer`},
		{"- a\n", "d.yaml:1:1: want a mapping of deployment keys, got a list"},
	} {
		_, err := Decode("d.yaml", []byte(tt.yaml), Default())
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%q) = %v, want %q", tt.yaml, err, tt.want)
		}
	}
	if got, err := Decode("d.yaml", []byte("# only a comment\n"), Default()); err != nil || got.GPU != "H100" {
		t.Errorf("Decode of an empty document = %+v, %v; want the base", got, err)
	}
}

// TestResolveSwitches: prefix caching and chunked prefill reach the
// simulator, and chunked prefill off follows vLLM's start-up rules.
func TestResolveSwitches(t *testing.T) {
	c := Default()
	c.EnablePrefixCaching = false
	r, err := Resolve(c)
	if err != nil || !r.Instance.KV.NoPrefixCaching || r.Instance.NoChunkedPrefill {
		t.Fatalf("prefix caching off: %+v, %v", r.Instance.KV, err)
	}

	c = Default()
	c.EnableChunkedPrefill = false
	r, err = Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	// The default budget rises to max_model_len (40960 for qwen3-14b).
	if !r.Instance.NoChunkedPrefill || r.Instance.MaxNumBatchedTokens != 40960 || r.MaxNumBatchedTokens != 40960 {
		t.Errorf("chunked prefill off: budget %d (%d), NoChunkedPrefill %v; want 40960", r.Instance.MaxNumBatchedTokens, r.MaxNumBatchedTokens, r.Instance.NoChunkedPrefill)
	}
	c.MaxNumBatchedTokens = 8192
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "max-num-batched-tokens 8192 is smaller than max-model-len 40960") {
		t.Errorf("an explicit budget below max_model_len: %v, want vLLM's refusal", err)
	}
	c.MaxModelLen = 8192
	if r, err := Resolve(c); err != nil || r.Instance.MaxNumBatchedTokens != 8192 {
		t.Errorf("budget = max_model_len: %v", err)
	}
	c = Default()
	c.EnableChunkedPrefill, c.Batching = false, "sarathi"
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "sarathi") {
		t.Errorf("sarathi without chunked prefill: %v, want a refusal", err)
	}
	c.Batching = "orca"
	if r, err := Resolve(c); err != nil || r.Instance.NoChunkedPrefill || r.Instance.MaxNumBatchedTokens != bigGPUBatchedTokens {
		t.Errorf("orca (never chunks) without chunked prefill: %v", err)
	}
}
