package replay

import (
	"strings"
	"testing"
	"time"

	"servesim/internal/flagspec"
	"servesim/internal/tracev2"
)

// TestFlagResolverSessionMode: the trace's client decides unless
// --session-mode is given (a contradiction is a warning) or the trace is
// ignored.
func TestFlagResolverSessionMode(t *testing.T) {
	closed := &tracev2.Header{XExt: &tracev2.Ext{Client: &tracev2.Client{SessionMode: SessionClosedLoop}}}
	for _, tc := range []struct {
		name     string
		r        FlagResolver
		h        *tracev2.Header
		want     string
		warnings int
		wantErr  string
	}{
		{"no client", FlagResolver{GivenMode: SessionFixed}, &tracev2.Header{}, SessionFixed, 0, ""},
		{"the trace's", FlagResolver{GivenMode: SessionFixed}, closed, SessionClosedLoop, 0, ""},
		{"given, contradicting", FlagResolver{GivenMode: SessionFixed, GivenModeSet: true}, closed, SessionFixed, 1, ""},
		{"ignored trace", FlagResolver{GivenMode: SessionFixed, Flags: flagspec.Values{ignoreTraceFlag: true}}, closed, SessionFixed, 0, ""},
		{"bad mode", FlagResolver{GivenMode: "open"}, closed, "", 0, "want fixed or closed-loop"},
	} {
		warnings := 0
		got, err := tc.r.SessionMode("t.csv", tc.h, func(string) { warnings++ })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want || warnings != tc.warnings {
			t.Errorf("%s: %q, %d warnings, %v; want %q, %d warnings", tc.name, got, warnings, err, tc.want, tc.warnings)
		}
	}
}

// TestClientFromFlags: the cap counts as given only when set and not -1,
// and both values are bounded.
func TestClientFromFlags(t *testing.T) {
	for _, tc := range []struct {
		v       flagspec.Values
		want    Client
		given   bool
		wantErr string
	}{
		{flagspec.Values{}, Client{}, false, ""},
		{flagspec.Values{clientCapFlag: 8, clientGapFlag: time.Millisecond}, Client{MaxConcurrency: 8, SendGapUs: 1000}, true, ""},
		{flagspec.Values{clientCapFlag: -1}, Client{}, false, ""},
		{flagspec.Values{clientCapFlag: -2}, Client{}, false, "outside"},
		{flagspec.Values{clientGapFlag: -time.Second}, Client{}, false, "outside"},
	} {
		got, given, err := ClientFromFlags(tc.v)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.v, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want || given != tc.given {
			t.Errorf("%v: %+v given %v (%v), want %+v given %v", tc.v, got, given, err, tc.want, tc.given)
		}
	}
}

// TestOpenDecisions: the two flags must agree, and the log never goes to
// stdout.
func TestOpenDecisions(t *testing.T) {
	for _, tc := range []struct {
		v       flagspec.Values
		wantErr string
	}{
		{flagspec.Values{}, ""},
		{flagspec.Values{decisionsOutFlag: "d.jsonl"}, "needs --trace-level decisions"},
		{flagspec.Values{traceLevelFlag: "all"}, "want none or decisions"},
		{flagspec.Values{traceLevelFlag: decisionsLevel, decisionsOutFlag: "-"}, "needs --decisions-out FILE"},
		{flagspec.Values{counterfactualK: 3}, ""},
		{flagspec.Values{counterfactualK: -1}, "--counterfactual-k -1: want 0..1024"},
		{flagspec.Values{counterfactualK: 1025}, "want 0..1024"},
	} {
		out, err := OpenDecisions(tc.v)
		if tc.wantErr == "" {
			if err != nil || out != nil {
				t.Errorf("%v: %v, %v; want nothing opened", tc.v, out, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want %q", tc.v, err, tc.wantErr)
		}
	}
}
