package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	names := []string{"max_num_seqs", "max_num_batched_tokens", "tensor_parallel", "tensor_parallel_size",
		"enable-prefix-caching", "quiet", "rate_fraction", "diurnal", "hardware"}
	for _, tt := range []struct{ typed, want string }{
		{"max_num_sqs", "max_num_seqs"},
		{"tensor_parallel_sizes", "tensor_parallel_size"},
		{"enable-prefix-cache", "enable-prefix-caching"},
		{"quite", "quiet"},
		{"rate_fractoin", "rate_fraction"},
		{"diurnl", "diurnal"},
		{"hardwre", "hardware"},
		{"max_num_sequences", ""},
		{"xyzzy", ""},
		{"quiet", ""}, // a known name is no typo
	} {
		if got := Closest(tt.typed, names); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

func TestClosestTiesAndBounds(t *testing.T) {
	if got := Closest("ab", []string{"ac", "aa"}); got != "aa" {
		t.Errorf("tie: got %q, want the first in sorted order %q", got, "aa")
	}
	long := string(make([]byte, maxLen+1))
	if got := Closest(long, []string{long + "x"}); got != "" {
		t.Errorf("names over %d bytes: got %q, want none", maxLen, got)
	}
}

func TestNear(t *testing.T) {
	names := []string{"qwen2.5-7b", "llama-2-70b-chat-hf", "llama-2-7b-hf", "llama-3.1-70b-instruct", "llama-3.1-8b-instruct",
		"qwen3-14b", "qwen3-8b", "mixtral-8x7b-v0.1"}
	for _, tt := range []struct {
		typed string
		n     int
		want  []string
	}{
		// Three shared words (llama 70b instruct; llama 2 70b) beat two, and
		// among equals the fewer edits go first.
		{"llama-2-70b-instruct", 3, []string{"llama-3.1-70b-instruct", "llama-2-70b-chat-hf", "llama-3.1-8b-instruct"}},
		// A typo comes first, then the names sharing a word by edit distance.
		{"qwen3-14", 2, []string{"qwen3-14b", "qwen3-8b"}},
		{"chat-8b", 5, []string{"qwen3-8b", "llama-2-70b-chat-hf", "llama-3.1-8b-instruct"}},
		{"gpt-5", 3, nil},
		{"qwen-5", 3, nil},                        // shares only a one-byte word
		{"llama-2", 1, []string{"llama-2-7b-hf"}}, // the one-byte word counts beside a longer one
		{"qwen3-14b", 1, []string{"qwen3-8b"}},    // itself is no suggestion
	} {
		if got := Near(tt.typed, names, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Near(%q, %d) = %q, want %q", tt.typed, tt.n, got, tt.want)
		}
	}
}
