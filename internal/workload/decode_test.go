package workload

import (
	"errors"
	"strings"
	"testing"
)

// base is a valid one-client spec; tests replace parts of it.
const base = `version: "2"
seed: 3
aggregate_rate: 4
num_requests: 50
clients:
  - id: a
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 5}}
`

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want string
	}{
		{"unknown top-level key", base + "rate: 5\n",
			`spec.yaml:11:1: unknown key "rate"`},
		{"unknown client key with suggestion", strings.Replace(base, "rate_fraction: 1", "rate_fractoin: 1", 1),
			`spec.yaml:7:5: clients[0]: unknown key "rate_fractoin" (did you mean "rate_fraction"?)`},
		{"unknown nested key", strings.Replace(base, "{process: poisson}", "{process: gamma, burst: 2}", 1),
			`spec.yaml:8:31: clients[0].arrival: unknown key "burst"`},
		{"unimplemented top-level key", base + "servegen_data: {path: data}\n",
			`spec.yaml:11:1: servegen_data: BLIS key "servegen_data" is recognised but not implemented here`},
		{"unimplemented client key", base + "    adapter: lora1\n",
			`spec.yaml:11:5: clients[0].adapter: BLIS key "adapter" is recognised but not implemented here`},
		{"gamma cv out of range", strings.Replace(base, "{process: poisson}", "{process: gamma, cv: 12}", 1),
			`spec.yaml:8:31: clients[0].arrival.cv: 12 out of range (0, 10]`},
		{"weibull cv out of range", strings.Replace(base, "{process: poisson}", "{process: weibull, cv: 11}", 1),
			`spec.yaml:8:33: clients[0].arrival.cv: 11 out of range [0.01, 10.4]`},
		{"negative cv", strings.Replace(base, "{process: poisson}", "{process: gamma, cv: -1}", 1),
			`spec.yaml:8:31: clients[0].arrival.cv: -1 must be finite and > 0`},
		{"shape without scale", strings.Replace(base, "{process: poisson}", "{process: gamma, shape: 2}", 1),
			`spec.yaml:8:5: clients[0].arrival: shape and scale go together: scale is missing`},
		{"unknown process", strings.Replace(base, "{process: poisson}", "{process: bursty}", 1),
			`spec.yaml:8:15: clients[0].arrival.process: unknown arrival process "bursty" (valid: constant, gamma, poisson, weibull)`},
		{"wrong type", strings.Replace(base, "rate_fraction: 1", "rate_fraction: lots", 1),
			`spec.yaml:7:20: clients[0].rate_fraction: "lots" is not a number`},
		{"wrong shape", strings.Replace(base, "{process: poisson}", "poisson", 1),
			`spec.yaml:8:14: clients[0].arrival: want a mapping, got "poisson"`},
		{"bad version", strings.Replace(base, `"2"`, `"3"`, 1),
			`spec.yaml:1:1: version: unsupported version "3" (want "2", or "1" to upgrade)`},
		{"missing rate", strings.Replace(base, "aggregate_rate: 4\n", "", 1),
			`spec.yaml:1:1: aggregate_rate: required (> 0) when a client is rate-based (0 only when every rate-based client's every lifecycle window gives trace_rate)`},
		{"negative rate", strings.Replace(base, "aggregate_rate: 4", "aggregate_rate: -4", 1),
			`spec.yaml:3:1: aggregate_rate: -4 must be finite and > 0`},
		{"missing rate_fraction", strings.Replace(base, "    rate_fraction: 1\n", "", 1),
			`spec.yaml:6:5: clients[0]: rate_fraction is required unless concurrency > 0`},
		{"duplicate id", base + strings.SplitN(base, "clients:\n", 2)[1],
			`spec.yaml:11:5: clients[1].id: duplicate client id "a" (also clients[0])`},
		{"duplicate key", base + "seed: 4\n",
			`spec.yaml:11:1: key "seed" is given twice (first on line 2)`},
		{"missing distribution param", strings.Replace(base, "{value: 10}", "{mean: 10}", 1),
			`spec.yaml:9:51: clients[0].input_distribution.params.mean: unknown parameter for constant (valid: value)`},
		{"unknown slo class", strings.Replace(base, "id: a", "id: a\n    slo_class: urgent", 1),
			`spec.yaml:7:5: clients[0].slo_class: unknown SLO class "urgent" (valid: critical, standard, sheddable, batch, background, or empty)`},
		{"bad context growth", base + "    reasoning: {multi_turn: {max_rounds: 2, context_growth: grow}}\n",
			`spec.yaml:11:45: clients[0].reasoning.multi_turn.context_growth: unknown value "grow" (valid: accumulate, or empty)`},
		{"zero max rounds", base + "    reasoning: {multi_turn: {max_rounds: 0}}\n",
			`spec.yaml:11:30: clients[0].reasoning.multi_turn.max_rounds: 0 out of range [1, 1073741824]`},
		{"concurrency with rate_fraction", strings.Replace(base, "rate_fraction: 1", "rate_fraction: 1\n    concurrency: 4", 1),
			`spec.yaml:7:5: clients[0].rate_fraction: concurrency and rate_fraction are mutually exclusive`},
		{"merge keys", base + "x: &x {a: 1}\ny:\n  <<: *x\n",
			`spec.yaml:11:1: unknown key "x"`},
		{"fraction for an integer", strings.Replace(base, "num_requests: 50", "num_requests: 50.5", 1),
			`spec.yaml:4:15: num_requests: "50.5" is not an integer`},
		{"syntax error", "clients: [\n", `spec.yaml:1: yaml syntax: did not find expected node content`},
		{"empty", "", `spec.yaml: empty workload spec`},
		{"not a mapping", "- a\n", `spec.yaml:1:1: want a mapping, got a list`},
		{"no clients", "aggregate_rate: 1\nnum_requests: 1\n", `spec.yaml:1:1: clients: at least one client, cohort or inference_perf block is required`},
		{"goodput unknown class", base + "goodput_slo_targets: {gold: {ttft_ms: 5}}\n",
			`spec.yaml:11:23: goodput_slo_targets.gold: unknown SLO class "gold" (valid: critical, standard, sheddable, batch, background)`},
		{"slo class on one client only", base + "    slo_class: batch\n" + strings.Replace(strings.SplitN(base, "clients:\n", 2)[1], "id: a", "id: b", 1),
			`spec.yaml:12:5: clients[1].slo_class: missing: clients[0] sets slo_class "batch", so every client must set one`},
		{"unbounded", strings.Replace(base, "num_requests: 50\n", "", 1),
			`spec.yaml:5:5: clients[0]: unbounded: set num_requests or horizon (or --num-requests / --horizon)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(Options{SpecPath: "spec.yaml", SpecData: []byte(tt.spec)})
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
			var coded interface{ ExitCode() int }
			if !errors.As(err, &coded) || coded.ExitCode() != 2 {
				t.Errorf("error %v: want an ExitCode() of 2", err)
			}
		})
	}
}
