package latency

import (
	"strings"
	"testing"
)

// TestUnknownNamesSuggest: a mistyped model or GPU is named with the
// nearest known one; a name like none gets no guess.
func TestUnknownNamesSuggest(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := LookupModel("qwen3-14"); return err }(), `unknown model "qwen3-14" (did you mean "qwen3-14b"?); known models: `},
		{func() error { _, err := LookupModel("gpt-9"); return err }(), `unknown model "gpt-9"; known models: `},
		{func() error { _, err := LookupGPU("h10"); return err }(), `unknown GPU "h10" (did you mean "H100"?); known GPUs: `},
	} {
		if tt.err == nil || !strings.HasPrefix(tt.err.Error(), tt.want) {
			t.Errorf("got %v, want it to start with %q", tt.err, tt.want)
		}
	}
}
