package deploy

import (
	"errors"
	"testing"
)

// SetKey takes a key's value as a deployment file writes it, and says what
// is wrong with a bad one by the key, without a place.
func TestSetKey(t *testing.T) {
	cfg, err := SetKey(Default(), "max_num_seqs", "16")
	if err != nil || cfg.MaxNumSeqs != 16 {
		t.Fatalf("max_num_seqs 16: got %d, %v", cfg.MaxNumSeqs, err)
	}
	cfg, err = SetKey(Default(), "alpha_coeffs", "[0.5, 2]")
	if err != nil || len(cfg.AlphaCoeffs) != 2 || cfg.AlphaCoeffs[1] != 2 {
		t.Fatalf("alpha_coeffs [0.5, 2]: got %v, %v", cfg.AlphaCoeffs, err)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"max_num_seqs", "-1", "key max_num_seqs: -1 must not be negative"},
		{"max_num_seqs", "many", `key max_num_seqs: "many" is not an integer`},
		{"max_num_seqs", `"16"`, `key max_num_seqs: "16" is not an integer`},
		{"num_instances", "1.5", `key num_instances: "1.5" is not an integer`},
		{"gpu", "[1]", "key gpu: want a string, got a list"},
		{"alpha_coeffs", "1", `key alpha_coeffs: "1" is not a list`},
		{"max_num_sqs", "1", "key max_num_sqs: not a deployment key"},
	} {
		base := Default()
		got, err := SetKey(base, tc.key, tc.value)
		var ke *KeyError
		if !errors.As(err, &ke) || err.Error() != tc.want {
			t.Errorf("%s: %s: got %v, want the KeyError %q", tc.key, tc.value, err, tc.want)
			continue
		}
		if ke.ExitCode() != 2 || got.MaxNumSeqs != base.MaxNumSeqs {
			t.Errorf("%s: %s: exit code %d, config changed: %v", tc.key, tc.value, ke.ExitCode(), got.MaxNumSeqs != base.MaxNumSeqs)
		}
	}
}
