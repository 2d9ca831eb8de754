package workload

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestResolveUsageErrors(t *testing.T) {
	spec := []byte(base)
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown preset", Options{Preset: "chat", Rate: ptr(2.0)},
			`--workload: unknown preset "chat" (valid: chatbot, contentgen, distribution, multidoc, summarization)`},
		{"preset without rate", Options{Preset: "chatbot"}, `--workload: preset "chatbot" needs --rate (or --ramp-up-strategy)`},
		{"ramp half given", Options{RampStrategy: ptr("linear"), RampStartRPS: ptr(2.0)}, `--ramp-up-strategy: needs --ramp-up-start-rps and --ramp-up-end-rps (and they need it)`},
		{"ramp and rate", Options{Rate: ptr(3.0), RampStrategy: ptr("linear"), RampStartRPS: ptr(2.0), RampEndRPS: ptr(4.0)}, `--rate: cannot be combined with --ramp-up-strategy (the ramp sets the rate)`},
		{"ramp unknown", Options{RampStrategy: ptr("step"), RampStartRPS: ptr(2.0), RampEndRPS: ptr(4.0)}, `--ramp-up-strategy: unknown ramp strategy "step" (valid: linear, exponential)`},
		{"ramp zero start", Options{RampStrategy: ptr("exponential"), RampStartRPS: ptr(0.0), RampEndRPS: ptr(4.0)}, `--ramp-up-start-rps: 0 must be finite and > 0`},
		{"negative rate", Options{Rate: ptr(-1.0)}, `--rate: -1 must be > 0`},
		{"zero rate", Options{Rate: ptr(0.0)}, `--rate: 0 must be > 0`},
		{"infinite rate", Options{Rate: ptr(math.Inf(1))}, `--rate: +Inf must be > 0`},
		{"rate with spec", Options{SpecPath: "spec.yaml", SpecData: spec, Rate: ptr(2.0)},
			`--rate: cannot be combined with --workload-spec (the spec sets aggregate_rate)`},
		{"preset with spec", Options{SpecPath: "spec.yaml", SpecData: spec, Preset: "chatbot"},
			`--workload: cannot be combined with --workload-spec`},
		{"prompt flag with spec", Options{SpecPath: "spec.yaml", SpecData: spec, PromptTokens: ptr(5)},
			`--prompt-tokens: cannot be combined with --workload-spec (set it in the spec)`},
		{"slo class with spec", Options{SpecPath: "spec.yaml", SpecData: spec, SLOClass: ptr("critical")},
			`--slo-class: cannot be combined with --workload-spec (set it in the spec)`},
		{"tenant with spec", Options{SpecPath: "spec.yaml", SpecData: spec, Tenant: ptr("acme")},
			`--tenant: cannot be combined with --workload-spec (set it in the spec)`},
		{"unknown slo class", Options{SLOClass: ptr("gold")},
			`--slo-class: unknown SLO class "gold" (valid: critical, standard, sheddable, batch, background)`},
		{"rate with concurrency", Options{Rate: ptr(2.0), Concurrency: ptr(4)}, `--rate: cannot be combined with --concurrency`},
		{"preset with concurrency", Options{Preset: "chatbot", Rate: ptr(2.0), Concurrency: ptr(4)}, `--rate: cannot be combined with --concurrency`},
		{"timeout zero", Options{Timeout: ptr(time.Duration(0))}, `--timeout: 0 is not allowed (a negative value disables the timeout)`},
		{"think time without concurrency", Options{ThinkTime: ptr(time.Second)}, `--think-time: only used with --concurrency`},
		{"unknown arrival", Options{Arrival: ptr("bursty")}, `--arrival: unknown arrival process "bursty" (valid: constant, gamma, poisson, weibull)`},
		{"min above max", Options{PromptTokensMin: ptr(9000)}, `--prompt-tokens-min: 9000 exceeds --prompt-tokens-max 7000`},
		{"negative stdev", Options{OutputTokensStdev: ptr(-1)}, `--output-tokens-stdev: -1 must be >= 0`},
		{"negative num requests", Options{NumRequests: ptr(int64(-5))}, `--num-requests: -5 must be >= 0`},
		{"unbounded flags", Options{NumRequests: ptr(int64(0))}, `--num-requests: 0 (unlimited) needs --horizon`},
		{"zero horizon", Options{Horizon: ptr(time.Duration(0))}, `--horizon: 0s must be > 0`},
		{"negative concurrency", Options{Concurrency: ptr(-2)}, `--concurrency: -2 out of range [0, 1000000]`},
		{"missing spec file", Options{SpecPath: "/nonexistent/w.yaml"},
			`/nonexistent/w.yaml: read workload spec: open /nonexistent/w.yaml: no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(tt.o)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			var coded interface{ ExitCode() int }
			if !errors.As(err, &coded) || coded.ExitCode() != 2 {
				t.Errorf("want ExitCode() 2")
			}
		})
	}
}

func TestResolveFlagSynthesis(t *testing.T) {
	w := mustResolve(t, Options{})
	want := Spec{Version: "2", Seed: 42, AggregateRate: 1, NumRequests: 100, Clients: []Client{{
		ID: "distribution", RateFraction: 1, Arrival: Arrival{Process: "constant"},
		Input:     Distribution{Type: "gaussian", Params: map[string]float64{"mean": 512, "std_dev": 256, "min": 2, "max": 7000}},
		Output:    Distribution{Type: "gaussian", Params: map[string]float64{"mean": 512, "std_dev": 256, "min": 2, "max": 7000}},
		TimeoutUs: 300_000_000,
	}}}
	if !reflect.DeepEqual(w.Spec, want) {
		t.Errorf("spec\n got %+v\nwant %+v", w.Spec, want)
	}
	if w.Name != "" || len(w.Warnings) != 0 {
		t.Errorf("name %q warnings %q, want none", w.Name, w.Warnings)
	}
	reqs := drain(w)
	if len(reqs) != 100 || reqs[0].DeadlineUs != reqs[0].ArrivalUs+300_000_000 {
		t.Errorf("got %d requests, first %+v; want 100 with a 300 s deadline", len(reqs), reqs[0])
	}
}

func TestResolvePresets(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			w := mustResolve(t, Options{Preset: p.Name, Rate: ptr(3.0)})
			if w.Name != "preset:"+p.Name {
				t.Errorf("Name = %q, want preset:%s", w.Name, p.Name)
			}
			c := w.Spec.Clients[0]
			gotIn := []float64{c.Input.Params["mean"], c.Input.Params["std_dev"], c.Input.Params["min"], c.Input.Params["max"]}
			wantIn := []float64{float64(p.PromptMean), float64(p.PromptStdev), float64(p.PromptMin), float64(p.PromptMax)}
			gotOut := []float64{c.Output.Params["mean"], c.Output.Params["std_dev"], c.Output.Params["min"], c.Output.Params["max"]}
			wantOut := []float64{float64(p.OutputMean), float64(p.OutputStdev), float64(p.OutputMin), float64(p.OutputMax)}
			if !slices.Equal(gotIn, wantIn) || !slices.Equal(gotOut, wantOut) || w.Spec.AggregateRate != 3 {
				t.Errorf("input %v output %v rate %g, want %v %v 3", gotIn, gotOut, w.Spec.AggregateRate, wantIn, wantOut)
			}
		})
	}
	// The numbers of docs/workload.md §11.
	want := map[string][8]int{
		"chatbot":       {256, 100, 2, 800, 256, 100, 1, 1024},
		"summarization": {4096, 500, 100, 8192, 512, 150, 10, 2048},
		"contentgen":    {1024, 150, 10, 2048, 1024, 200, 10, 2048},
		"multidoc":      {10240, 1200, 500, 20480, 1536, 300, 50, 4096},
		"distribution":  {512, 256, 2, 7000, 512, 256, 2, 7000},
	}
	for name, nums := range want {
		p, ok := LookupPreset(name)
		got := [8]int{p.PromptMean, p.PromptStdev, p.PromptMin, p.PromptMax, p.OutputMean, p.OutputStdev, p.OutputMin, p.OutputMax}
		if !ok || got != nums || p.PrefixTokens != 0 {
			t.Errorf("preset %s = %v, want %v", name, got, nums)
		}
	}
	// An explicit token flag overrides the preset's number.
	w := mustResolve(t, Options{Preset: "chatbot", Rate: ptr(1.0), PromptTokens: ptr(300), PrefixTokens: ptr(64)})
	c := w.Spec.Clients[0]
	if c.Input.Params["mean"] != 300 || c.Input.Params["max"] != 800 || c.PrefixGroup != "shared" || c.PrefixLength != 64 {
		t.Errorf("client = %+v, want prompt mean 300, max 800, prefix shared/64", c)
	}
}

func TestResolveOptionsDetails(t *testing.T) {
	// Negative timeout disables deadlines.
	w := mustResolve(t, Options{Timeout: ptr(-time.Second), NumRequests: ptr(int64(3))})
	for _, r := range drain(w) {
		if r.DeadlineUs != 0 {
			t.Errorf("deadline = %d, want 0 (disabled)", r.DeadlineUs)
		}
	}
	// Concurrency users with think time.
	w = mustResolve(t, Options{Concurrency: ptr(4), ThinkTime: ptr(2 * time.Second), Timeout: ptr(time.Minute)})
	c := w.Spec.Clients[0]
	if c.Concurrency != 4 || c.ThinkTimeUs != 2_000_000 || c.TimeoutUs != 60_000_000 || w.Spec.AggregateRate != 0 || w.Loop() != "closed" {
		t.Errorf("concurrency client = %+v", c)
	}
	var starts []int64
	for _, r := range drain(w) {
		starts = append(starts, r.ArrivalUs)
	}
	if want := []int64{0, 500_000, 1_000_000, 1_500_000}; !slices.Equal(starts, want) {
		t.Errorf("user starts = %v, want %v (u·think/N)", starts, want)
	}
	// Spec overrides: seed, num-requests, horizon.
	w = mustResolve(t, Options{SpecPath: "spec.yaml", SpecData: []byte(base), Seed: ptr(int64(9)),
		NumRequests: ptr(int64(7)), Horizon: ptr(time.Hour)})
	if w.Spec.Seed != 9 || w.Spec.NumRequests != 7 || w.Spec.HorizonUs != 3_600_000_000 {
		t.Errorf("overrides: seed %d n %d horizon %d, want 9 7 3600000000", w.Spec.Seed, w.Spec.NumRequests, w.Spec.HorizonUs)
	}
	if n := len(drain(w)); n != 7 {
		t.Errorf("requests = %d, want 7", n)
	}
}

// TestResolveClassAndTenant: --slo-class and --tenant give every request
// of a flag-built workload its class and tenant, which a gateway's tiers,
// flows and budgets read.
func TestResolveClassAndTenant(t *testing.T) {
	w := mustResolve(t, Options{Preset: "chatbot", Rate: ptr(4.0), NumRequests: ptr(int64(5)), SLOClass: ptr("sheddable"), Tenant: ptr("jobs")})
	for _, r := range drain(w) {
		if r.SLOClass != "sheddable" || r.TenantID != "jobs" {
			t.Fatalf("request %d: class %q tenant %q, want sheddable, jobs", r.ID, r.SLOClass, r.TenantID)
		}
	}
}
