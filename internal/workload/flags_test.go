package workload

import (
	"strings"
	"testing"
	"time"

	"servesim/internal/flagspec"
)

// TestFromFlags: a flag given sets its option, a flag absent leaves it
// nil, and --workload-spec - reads the spec from stdin.
func TestFromFlags(t *testing.T) {
	o, err := FromFlags(flagspec.Values{"workload": "chatbot", "rate": 2.5, "num-requests": int64(7),
		"horizon": time.Minute, "streaming": true, SeedFlag: int64(9)}, nil, "<stdin>")
	if err != nil {
		t.Fatal(err)
	}
	if o.Preset != "chatbot" || o.Rate == nil || *o.Rate != 2.5 || o.NumRequests == nil || *o.NumRequests != 7 ||
		o.Horizon == nil || *o.Horizon != time.Minute || o.Streaming == nil || !*o.Streaming || o.Seed == nil || *o.Seed != 9 {
		t.Errorf("FromFlags = %+v, want the values given", o)
	}
	if o.Arrival != nil || o.PromptTokens != nil || o.Timeout != nil {
		t.Errorf("FromFlags set options not given: %+v", o)
	}
	o, err = FromFlags(flagspec.Values{"workload-spec": "-"}, strings.NewReader("clients: []\n"), "<stdin>")
	if err != nil || o.SpecPath != "<stdin>" || string(o.SpecData) != "clients: []\n" {
		t.Errorf("--workload-spec -: %+v, %v; want the spec read from stdin", o, err)
	}
}

// TestFlagsDescribeFromFlags: every flag FromFlags reads is described, once.
func TestFlagsDescribeFromFlags(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Flags() {
		if seen[f.Name] {
			t.Errorf("--%s is described twice", f.Name)
		}
		seen[f.Name] = true
		if f.Category != flagspec.CatWorkload {
			t.Errorf("--%s is under %q, want %q", f.Name, f.Category, flagspec.CatWorkload)
		}
	}
	if len(seen) != 24 {
		t.Errorf("%d workload flags, want 24", len(seen))
	}
}
