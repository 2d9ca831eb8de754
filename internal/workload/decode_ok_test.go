package workload

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDecodeExampleSpec(t *testing.T) {
	spec, warn, err := Load("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(warn) != 0 {
		t.Errorf("warnings = %q, want none", warn)
	}
	if spec.Seed != 11 || spec.AggregateRate != 6 || spec.NumRequests != 500 || spec.HorizonUs != 0 || spec.Version != "2" {
		t.Errorf("top level = seed %d rate %g n %d horizon %d version %q, want 11 6 500 0 \"2\"",
			spec.Seed, spec.AggregateRate, spec.NumRequests, spec.HorizonUs, spec.Version)
	}
	chat, coder := spec.Clients[0], spec.Clients[1]
	if chat.PrefixLength != 256 || chat.TimeoutUs != 0 || chat.ClosedLoop || !chat.Streaming || chat.SLOTargetUs != 250000 {
		t.Errorf("chat = %+v", chat)
	}
	if coder.TimeoutUs != DefaultTimeoutUs || !coder.ClosedLoop || coder.MultiTurn == nil ||
		*coder.MultiTurn != (MultiTurn{MaxRounds: 4, ThinkTimeUs: 2000000, ContextGrowth: "accumulate"}) {
		t.Errorf("coder = %+v, multi-turn %+v", coder, coder.MultiTurn)
	}
	wantTargets := map[string]SLOTarget{"critical": {TTFTMs: 250, E2EMs: 4000}, "batch": {E2EMs: 30000}}
	if !reflect.DeepEqual(spec.GoodputSLOTargets, wantTargets) {
		t.Errorf("goodput targets = %+v, want %+v", spec.GoodputSLOTargets, wantTargets)
	}
	w, err := New(*spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.ContextGrowth(); got != "accumulate" {
		t.Errorf("ContextGrowth = %q, want accumulate", got)
	}
	if got := w.Loop(); got != "closed" {
		t.Errorf("Loop = %q, want closed", got)
	}
	// Rates: chat 6·0.75 = 4.5/s, coder 1.5 sessions/s.
	if w.clients[0].rate != 4.5 || w.clients[1].rate != 1.5 {
		t.Errorf("client rates = %g, %g, want 4.5, 1.5", w.clients[0].rate, w.clients[1].rate)
	}
}

func TestDecodeDefaultsAndWarnings(t *testing.T) {
	spec := `version: "1"
aggregate_rate: 2
horizon: 10000000
clients:
  - id: a
    slo_class: realtime
    rate_fraction: 1
    prefix_group: g
    think_time_us: 5
    arrival: {process: poisson, cv: 3}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 5}}
    network: {rtt_ms: 20}
  - id: b
    slo_class: interactive
    rate_fraction: 1
    prefix_group: g
    prefix_length: 70
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 5}}
  - id: c
    slo_class: batch
    rate_fraction: 1
    prefix_length: 9
    closed_loop: true
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 5}}
goodput_slo_targets:
  realtime: {ttft_ms: 100}
`
	w := mustDecode(t, spec)
	s := w.Spec
	if s.Seed != DefaultSeed {
		t.Errorf("seed = %d, want %d", s.Seed, DefaultSeed)
	}
	gotClasses := []string{s.Clients[0].SLOClass, s.Clients[1].SLOClass, s.Clients[2].SLOClass}
	if want := []string{"critical", "standard", "batch"}; !slices.Equal(gotClasses, want) {
		t.Errorf("classes = %v, want %v (v1 upgrade)", gotClasses, want)
	}
	if _, ok := s.GoodputSLOTargets["critical"]; !ok {
		t.Errorf("goodput targets = %v, want realtime renamed to critical", s.GoodputSLOTargets)
	}
	// The group's length comes from the first client that gives one (b), for a too.
	if s.Clients[0].PrefixLength != 70 || s.Clients[1].PrefixLength != 70 || s.Clients[2].PrefixLength != 0 {
		t.Errorf("prefix lengths = %d %d %d, want 70 70 0", s.Clients[0].PrefixLength, s.Clients[1].PrefixLength, s.Clients[2].PrefixLength)
	}
	if s.Clients[2].TimeoutUs != DefaultTimeoutUs || s.Clients[0].TimeoutUs != 0 {
		t.Errorf("timeouts = %d, %d, want 300s for a closed-loop client, none otherwise", s.Clients[2].TimeoutUs, s.Clients[0].TimeoutUs)
	}
	wantWarn := []string{
		`spec.yaml:1:1: version: version "1" upgraded to "2" (slo_class realtime -> critical, interactive -> standard)`,
		`spec.yaml:9:5: clients[0].think_time_us: ignored: think_time_us is used by concurrency clients (sessions use reasoning.multi_turn.think_time_us)`,
		`spec.yaml:10:5: clients[0].arrival: cv, shape and scale are ignored by the poisson process`,
		`spec.yaml:13:5: clients[0].network: accepted and ignored: the simulator does not model client networks`,
		`spec.yaml:25:5: clients[2].prefix_length: ignored: no prefix_group`,
	}
	if !slices.Equal(w.Warnings, wantWarn) {
		t.Errorf("warnings:\n got %q\nwant %q", w.Warnings, wantWarn)
	}
	// Both clients of group g start with the same 70 tokens.
	reqs := drain(w)
	var a, b *Request
	for _, r := range reqs {
		if r.ClientID == "a" && a == nil {
			a = r
		}
		if r.ClientID == "b" && b == nil {
			b = r
		}
	}
	if a == nil || b == nil || !slices.Equal(a.PromptIDs[:70], b.PromptIDs[:70]) || a.PrefixLength != 70 || a.InputTokens != 10 {
		t.Errorf("prefix sharing: a = %+v, b = %+v", a, b)
	}
}

func TestDecodeEmpiricalFileRelativeToSpec(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "lens.txt", "# observed\n100\n100\n300\n")
	path := writeFile(t, dir, "w.yaml", strings.Replace(base, "{type: constant, params: {value: 10}}", "{type: empirical, file: lens.txt}", 1))
	w := mustResolve(t, Options{SpecPath: path})
	for _, r := range drain(w) {
		if r.InputTokens != 100 && r.InputTokens != 300 {
			t.Fatalf("input tokens = %d, want 100 or 300", r.InputTokens)
		}
	}
	if w.Name != path {
		t.Errorf("Name = %q, want %q", w.Name, path)
	}
	bad := writeFile(t, dir, "bad.yaml", strings.Replace(base, "{type: constant, params: {value: 10}}", "{type: empirical, file: nope.txt}", 1))
	_, err := Resolve(Options{SpecPath: bad})
	if err == nil || !strings.HasPrefix(err.Error(), bad+":9:43: clients[0].input_distribution.file: empirical distribution: open ") {
		t.Errorf("error = %v, want the spec position and the open failure", err)
	}
}

// TestNegativeEmpiricalWeightsRefused: a negative empirical weight is
// an error at its place, in the spec or in the file.
func TestNegativeEmpiricalWeightsRefused(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "pmf.txt", "100 2\n200 -1\n300 1\n")
	inSpec := strings.Replace(base, "{type: constant, params: {value: 10}}", `{type: empirical, params: {"64": 3, "128": -0.5}}`, 1)
	inFile := strings.Replace(base, "{type: constant, params: {value: 5}}", "{type: empirical, file: pmf.txt}", 1)
	for _, c := range []struct{ spec, want string }{
		{inSpec, `:9:61: clients[0].input_distribution.params.128: weight -0.5 is negative: a weight is a share, 0 or more`},
		{inFile, `:10:44: clients[0].output_distribution.file: pmf.txt:2: weight -1 is negative: a weight is a share, 0 or more`},
	} {
		path := writeFile(t, dir, "w.yaml", c.spec)
		_, err := Resolve(Options{SpecPath: path})
		if err == nil || err.Error() != path+c.want {
			t.Errorf("got %v, want %q", err, path+c.want)
		}
	}
}
