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
		{func() error { _, err := LookupModel("qwen3-14"); return err }(), `unknown model "qwen3-14" (did you mean "qwen3-14b"?); known models near it: qwen3-14b, qwen3-8b, qwen3-32b, `},
		{func() error { _, err := LookupModel("gpt-9"); return err }(), `unknown model "gpt-9"; known models: codellama-34b-instruct-hf, `},
		// Names that resemble the typed one, aliases included; not all of them.
		{func() error { _, err := LookupModel("acme/llama-2-70b-instruct"); return err }(), `unknown model "acme/llama-2-70b-instruct" (did you mean "llama-3-70b-instruct"?); known models near it: llama-3-70b-instruct, llama-3.1-70b-instruct, llama-3.3-70b-instruct, llama-3.2-1b-instruct, llama-3.2-3b-instruct, llama-2-70b-chat (33 in all: --list-models); `},
		{func() error { _, err := LookupGPU("h10"); return err }(), `unknown GPU "h10" (did you mean "H100"?); known GPUs: `},
	} {
		if tt.err == nil || !strings.HasPrefix(tt.err.Error(), tt.want) {
			t.Errorf("got %v, want it to start with %q", tt.err, tt.want)
		}
	}
}
