package suggest

import "testing"

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
