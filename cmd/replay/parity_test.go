package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

const sessionsSpec = `version: "2"
seed: 7
aggregate_rate: 6
num_requests: 150
clients:
  - id: chat
    tenant_id: acme
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 300, std_dev: 120, min: 10, max: 1200}}
    output_distribution: {type: gaussian, params: {mean: 120, std_dev: 50, min: 2, max: 400}}
    reasoning:
      multi_turn: {max_rounds: 4, think_time_us: 400000, context_growth: accumulate}
`

const openSessionsSpec = `version: "2"
seed: 9
aggregate_rate: 5
num_requests: 120
clients:
  - id: agent
    rate_fraction: 1
    closed_loop: false
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: exponential, params: {mean: 400, min: 20, max: 3000}}
    output_distribution: {type: exponential, params: {mean: 150, min: 2, max: 800}}
    reasoning:
      multi_turn: {max_rounds: 3, think_time_us: 300000, context_growth: accumulate}
`

const prefixSpec = `version: "2"
seed: 11
aggregate_rate: 12
num_requests: 300
clients:
  - id: chat
    tenant_id: acme
    slo_class: critical
    rate_fraction: 0.7
    streaming: true
    prefix_group: system-prompt
    prefix_length: 700
    arrival: {process: gamma, cv: 1.8}
    input_distribution: {type: lognormal, params: {mu: 5.2, sigma: 0.7, min: 8, max: 3000}}
    output_distribution: {type: gaussian, params: {mean: 180, std_dev: 60, min: 8, max: 600}}
    slo_target_us: 250000
  - id: coder
    tenant_id: beta
    slo_class: batch
    rate_fraction: 0.3
    prefix_group: tools
    prefix_length: 1500
    arrival: {process: weibull, cv: 0.6}
    input_distribution: {type: empirical, params: {"64": 0.5, "512": 0.3, "2048": 0.2}}
    output_distribution: {type: exponential, params: {mean: 90, max: 1024}}
goodput_slo_targets:
  critical: {ttft_ms: 250, e2e_ms: 4000}
  batch: {e2e_ms: 30000}
`

const multimodalSpec = `version: "2"
seed: 5
aggregate_rate: 20
num_requests: 200
clients:
  - id: vision
    rate_fraction: 0.6
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 1}}
    output_distribution: {type: gaussian, params: {mean: 80, std_dev: 30, min: 2, max: 300}}
    multimodal:
      text_distribution: {type: uniform, params: {min: 20, max: 200}}
      image_distribution: {type: constant, params: {value: 576}}
      image_count_distribution: {type: uniform, params: {min: 1, max: 4}}
  - id: text
    rate_fraction: 0.4
    arrival: {process: poisson}
    input_distribution: {type: uniform, params: {min: 50, max: 800}}
    output_distribution: {type: gaussian, params: {mean: 80, std_dev: 30, min: 2, max: 300}}
`

// tiersSpec mixes SLO tiers and tenants at about twice what two small
// instances serve, for the gateway's cases.
const tiersSpec = `version: "2"
seed: 5
aggregate_rate: 40
num_requests: 400
clients:
  - id: chat
    tenant_id: acme
    slo_class: critical
    rate_fraction: 0.3
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 400, std_dev: 150, min: 10, max: 1500}}
    output_distribution: {type: gaussian, params: {mean: 150, std_dev: 60, min: 2, max: 500}}
    slo_target_us: 300000
  - id: app
    tenant_id: beta
    slo_class: standard
    rate_fraction: 0.3
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 400, std_dev: 150, min: 10, max: 1500}}
    output_distribution: {type: gaussian, params: {mean: 150, std_dev: 60, min: 2, max: 500}}
  - id: bulk
    tenant_id: beta
    slo_class: sheddable
    rate_fraction: 0.4
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 600, std_dev: 200, min: 10, max: 2000}}
    output_distribution: {type: gaussian, params: {mean: 200, std_dev: 80, min: 2, max: 600}}
goodput_slo_targets:
  critical: {ttft_ms: 500}
  standard: {ttft_ms: 2000}
`

// parityCase is one workload and deployment that run simulates and replay
// must reproduce exactly from run's trace, with no flag: the trace's header
// carries the deployment and the client.
type parityCase struct {
	name   string
	spec   string   // workload spec YAML, if any
	run    []string // run's workload flags
	deploy []string // run's deployment flags (replay reads them from the trace)
	policy string   // run's --policy-config bundle YAML, if any (replay reads it from the trace)
	// replay are replay-only flags; a --session-mode that differs from the
	// trace's changes only the summary's client and gives a warning.
	replay []string
	// positive lists summary keys that must be > 0, so that the case
	// exercises what it is named for.
	positive []string
}

func parityCases() []parityCase {
	small := []string{"--total-kv-blocks", "160", "--max-model-len", "2048"}
	medium := []string{"--total-kv-blocks", "800", "--max-model-len", "2048"}
	hits, preempt := []string{"cache_hit_rate"}, []string{"preemption_count"}
	return []parityCase{
		{name: "distribution", run: []string{"--workload", "distribution", "--rate", "8", "--num-requests", "150"}},
		{name: "chatbot", run: []string{"--workload", "chatbot", "--rate", "30", "--num-requests", "300"}},
		{name: "summarization", run: []string{"--workload", "summarization", "--rate", "4", "--num-requests", "100"}, positive: preempt},
		{name: "contentgen", run: []string{"--workload", "contentgen", "--rate", "6", "--num-requests", "100"}},
		{name: "multidoc", run: []string{"--workload", "multidoc", "--rate", "1", "--num-requests", "40"}, positive: preempt},
		{name: "sessions fixed", spec: sessionsSpec, replay: []string{"--session-mode", "fixed"}, positive: hits},
		{name: "sessions closed-loop", spec: sessionsSpec, positive: hits},
		{name: "open sessions", spec: openSessionsSpec, positive: hits},
		{name: "prefix groups", spec: prefixSpec, positive: []string{"cache_hit_rate", "goodput_rps"}},
		{name: "prefix groups priority-fcfs", spec: prefixSpec,
			deploy: []string{"--scheduler", "priority-fcfs", "--preemption-policy", "priority", "--max-num-seqs", "16"}, positive: hits},
		{name: "sjf", run: []string{"--workload", "chatbot", "--rate", "60", "--num-requests", "300"},
			deploy: []string{"--scheduler", "sjf", "--max-num-seqs", "8"}, positive: []string{"scheduling_delay_p99_ms"}},
		{name: "preemption", run: []string{"--workload", "chatbot", "--rate", "40", "--num-requests", "200"}, deploy: small, positive: preempt},
		{name: "preemption reset", run: []string{"--workload", "chatbot", "--rate", "40", "--num-requests", "200"},
			deploy: append([]string{"--preempt-mode", "reset"}, small...), positive: preempt},
		{name: "timeouts", run: []string{"--workload", "chatbot", "--rate", "30", "--num-requests", "200", "--timeout", "5s"},
			positive: []string{"timed_out_requests"}},
		{name: "concurrency fixed", run: []string{"--concurrency", "8", "--think-time", "150ms", "--num-requests", "120"},
			replay: []string{"--session-mode", "fixed"}},
		{name: "concurrency closed-loop", run: []string{"--concurrency", "8", "--think-time", "150ms", "--num-requests", "120"}},
		{name: "concurrency timeouts closed-loop", run: []string{"--concurrency", "24", "--num-requests", "150", "--timeout", "6s"},
			deploy: medium, positive: []string{"timed_out_requests", "preemption_count"}},
		{name: "chunked prefill", run: []string{"--workload", "summarization", "--rate", "6", "--num-requests", "80"},
			deploy: []string{"--max-num-batched-tokens", "512", "--long-prefill-token-threshold", "256"}},
		// Clusters (docs/simulator.md §10-12): several instances, routing,
		// admission, latencies and P/D go through the same path.
		{name: "cluster weighted", run: []string{"--workload", "chatbot", "--rate", "60", "--num-requests", "300"},
			deploy: []string{"--num-instances", "4", "--routing-policy", "weighted"}},
		{name: "cluster prefix groups precise", spec: prefixSpec,
			deploy: []string{"--num-instances", "3", "--routing-policy", "weighted", "--routing-scorers",
				"precise-prefix-cache:2,load-balance:1", "--cache-signal-delay", "20ms"}, positive: hits},
		{name: "cluster policy bundle", spec: prefixSpec, deploy: []string{"--num-instances", "3"},
			policy: "routing_policy: weighted\nrouting_scorers: precise-prefix-cache:2,no-hit-lru:1,queue-depth:1\n" +
				"scheduler: priority-fcfs\npreemption_policy: priority\nadmission_policy: token-bucket\n" +
				"token_bucket_capacity: 6000\ntoken_bucket_refill: 9000\n",
			positive: []string{"cache_hit_rate", "rejected_requests"}},
		{name: "cluster prefix groups no-hit-lru", spec: prefixSpec,
			deploy: []string{"--num-instances", "3", "--routing-policy", "weighted", "--routing-scorers",
				"precise-prefix-cache:2,no-hit-lru:1,queue-depth:1", "--cache-signal-delay", "20ms"}, positive: hits},
		{name: "cluster token bucket", run: []string{"--workload", "chatbot", "--rate", "60", "--num-requests", "300"},
			deploy: []string{"--num-instances", "2", "--routing-policy", "least-loaded", "--admission-policy", "token-bucket",
				"--token-bucket-capacity", "4000", "--token-bucket-refill", "8000"}, positive: []string{"rejected_requests"}},
		{name: "cluster sessions closed-loop latencies", spec: sessionsSpec,
			deploy: []string{"--num-instances", "3", "--routing-policy", "least-outstanding", "--admission-latency", "1ms",
				"--routing-latency", "2ms"}, positive: hits},
		{name: "cluster pipeline parallel", run: []string{"--workload", "chatbot", "--rate", "40", "--num-requests", "200"},
			deploy: []string{"--num-instances", "2", "--pp", "2", "--routing-policy", "least-loaded"}},
		{name: "sarathi", run: []string{"--workload", "summarization", "--rate", "4", "--num-requests", "60"},
			deploy: []string{"--batching", "sarathi", "--chunk-size", "256"}},
		// A capped client (docs/simulator.md §13): replay finds the cap in the
		// trace, or is told it; sends follow completions either way.
		{name: "capped client detected", run: []string{"--workload", "chatbot", "--rate", "60", "--num-requests", "300",
			"--client-max-concurrency", "16"}},
		{name: "capped client given, send gap", run: []string{"--workload", "chatbot", "--rate", "60", "--num-requests", "300",
			"--client-max-concurrency", "16", "--client-send-gap", "3ms"},
			replay: []string{"--client-max-concurrency", "16", "--client-send-gap", "3ms"}},
		{name: "capped client sessions closed-loop", spec: sessionsSpec, run: []string{"--client-max-concurrency", "4"},
			replay: []string{"--session-mode", "closed-loop", "--client-max-concurrency", "4"}, positive: hits},
		{name: "capped client cluster P/D", spec: prefixSpec, run: []string{"--client-max-concurrency", "12"},
			deploy: []string{"--num-instances", "3", "--prefill-instances", "1", "--decode-instances", "2",
				"--pd-decider", "always", "--routing-policy", "least-loaded"}},
		// The gateway (docs/simulator.md §10): tiers, tenants, per-request
		// targets and every flow-control bucket travel in the trace.
		{name: "cluster flow control", spec: tiersSpec,
			deploy: []string{"--num-instances", "2", "--max-num-seqs", "16", "--flow-control", "--dispatch-order", "slo-deadline",
				"--slo-targets", "standard=1s", "--gateway-ttl", "2s", "--in-flight-eviction", "--max-gateway-queue-depth", "40",
				"--queue-shedding", "--snapshot-refresh-interval", "10ms", "--routing-policy", "least-loaded"},
			positive: []string{"gateway_evicted", "gateway_expired", "gateway_queue_shed", "rejected_requests"}},
		{name: "cluster tier-shed budgets", spec: tiersSpec,
			deploy: []string{"--num-instances", "2", "--max-num-seqs", "16", "--admission-policy", "tier-shed",
				"--tier-shed-threshold", "12", "--tenant-budgets", "beta:0.4"},
			positive: []string{"rejected_requests"}},
		// A fleet that changes (docs/fleet.md): the trace records the fleet
		// file, and the replay scales the same way.
		{name: "autoscaled fleet", run: []string{"--workload", "chatbot", "--rate", "60", "--num-requests", "600"},
			deploy: append([]string{"--fleet-file", "testdata/fleet.yaml", "--routing-policy", "least-loaded"}, medium...)},
		// Pools of two GPU types, each on its own hardware, drained at once.
		{name: "mixed fleet immediate drain", run: []string{"--workload", "chatbot", "--rate", "60", "--num-requests", "600"},
			deploy:   append([]string{"--fleet-file", "testdata/fleet-mixed.yaml", "--routing-policy", "least-loaded"}, medium...),
			positive: []string{"fleet.drain_cut"}},
		{name: "cluster P/D prefix-threshold", spec: prefixSpec,
			deploy: []string{"--num-instances", "3", "--prefill-instances", "1", "--decode-instances", "2",
				"--pd-decider", "prefix-threshold", "--pd-transfer-contention", "--routing-policy", "weighted"}, positive: hits},
		// The encode pool: the trace's image tokens and the header's encode
		// keys give replay the same encode stage (passes over 3 images are
		// rejected there).
		{name: "cluster encode pool", spec: multimodalSpec,
			deploy:   []string{"--num-instances", "2", "--encode-instances", "2", "--encode-max-tokens", "1800", "--routing-policy", "least-loaded"},
			positive: []string{"encode_routing_rejections"}},
		// The CPU KV tier offloads above its threshold only; replay finds the
		// threshold in the header.
		{name: "cpu tier offload threshold", run: []string{"--workload", "chatbot", "--rate", "40", "--num-requests", "300"},
			deploy:   []string{"--total-kv-blocks", "300", "--max-model-len", "2048", "--kv-cpu-blocks", "3000", "--kv-offload-threshold", "0.5"},
			positive: []string{"kv_offloaded_blocks", "kv_reloaded_blocks"}},
		// Per-pool deployments: the trace header carries each pool's
		// overrides, so that replay builds the same mixed cluster.
		{name: "cluster P/D heterogeneous pools", run: []string{"--workload", "chatbot", "--rate", "30", "--num-requests", "200"},
			deploy: []string{"--prefill-instances", "1", "--decode-instances", "2", "--pd-decider", "always",
				"--prefill-gpu", "H100", "--decode-gpu", "A100-80", "--decode-max-num-seqs", "64", "--decode-total-kv-blocks", "3000"}},
	}
}

// TestRunReplayParity: run --trace-output T, then replay T with no flag,
// gives identical per-request results and an identical summary, deployment
// and client included (docs/simulator.md INV-13: the trace carries what it was
// made on).
func TestRunReplayParity(t *testing.T) {
	for _, tc := range parityCases() {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{}, tc.run...)
			if tc.spec != "" {
				args = append(args, "--workload-spec", writeFile(t, filepath.Join(dir, "spec.yaml"), tc.spec))
			}
			prefix := filepath.Join(dir, "gen")
			args = append(args, "--trace-output", prefix, "--requests-out", filepath.Join(dir, "run.jsonl"))
			if tc.policy != "" {
				args = append(args, "--policy-config", writeFile(t, filepath.Join(dir, "policy.yaml"), tc.policy))
			}
			runSummary := execRun(t, append(args, tc.deploy...)...)

			rargs := []string{prefix + ".csv", "--results-path", filepath.Join(dir, "sim.json"),
				"--metrics-out", filepath.Join(dir, "metrics.json")}
			r := mustReplay(t, nil, append(rargs, tc.replay...)...)
			if !slices.Contains(tc.replay, "fixed") && strings.Contains(r.stderr, "WARN") {
				t.Errorf("replay with no flag, or flags the trace agrees with, warns:\n%s", r.stderr)
			}

			want, n := readCompleted(t, filepath.Join(dir, "run.jsonl"))
			got := readSimResults(t, filepath.Join(dir, "sim.json"))
			if len(want) == 0 {
				t.Fatal("run completed no request")
			}
			compareResults(t, got, want)
			replaySummary, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case slices.Contains(tc.replay, "fixed"):
				// The session mode replay was told differs from the trace's:
				// everything but the client it records is the run's.
				if !strings.Contains(r.stderr, "the trace's client says session mode closed-loop, --session-mode says fixed") {
					t.Errorf("no warning that --session-mode contradicts the trace:\n%s", r.stderr)
				}
				got, want := summaryOf(t, replaySummary), summaryOf(t, runSummary)
				delete(got, "client")
				delete(want, "client")
				diffSummaries(t, got, want)
			case !bytes.Equal(replaySummary, runSummary):
				diffSummaries(t, summaryOf(t, replaySummary), summaryOf(t, runSummary))
			}
			sum := summaryOf(t, runSummary)
			for _, k := range tc.positive {
				x := any(sum)
				for _, part := range strings.Split(k, ".") { // a nested key: fleet.drain_cut
					m, _ := x.(map[string]any)
					x = m[part]
				}
				if v, _ := x.(float64); v <= 0 {
					t.Errorf("summary %s = %v: the case does not exercise what it is named for", k, x)
				}
			}
			t.Logf("%d requests, %d completed, %v preemptions, %v timed out, %v dropped, hit rate %v", n, len(want),
				sum["preemption_count"], sum["timed_out_requests"], sum["dropped_unservable"], sum["cache_hit_rate"])
		})
	}
}

func compareResults(t *testing.T, got, want map[int64]tracev2.SimResult) {
	t.Helper()
	bad := 0
	for id, w := range want {
		g, ok := got[id]
		switch {
		case !ok:
			t.Errorf("request %d: no SimResult from replay, want %+v", id, w)
		case !reflect.DeepEqual(g, w):
			t.Errorf("request %d:\n got %+v\nwant %+v", id, g, w)
		default:
			continue
		}
		if bad++; bad >= 5 {
			t.Fatal("too many differences")
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("request %d completed in replay only", id)
		}
	}
}

func diffSummaries(t *testing.T, got, want map[string]any) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("summary %s: replay %v, run %v", k, fmt.Sprint(got[k]), fmt.Sprint(want[k]))
		}
	}
}

// TestPipe: run --trace-output - | replay - gives run's results.
func TestPipe(t *testing.T) {
	dir := t.TempDir()
	stream := execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "200", "--trace-output", "-",
		"--requests-out", filepath.Join(dir, "run.jsonl"))
	r := mustReplay(t, bytes.NewReader(stream), "-", "--format", "jsonl")
	rs, err := tracev2.ReadSimResults(bytes.NewReader([]byte(r.stdout)), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]tracev2.SimResult{}
	for _, x := range rs {
		got[x.RequestID] = x
	}
	want, _ := readCompleted(t, filepath.Join(dir, "run.jsonl"))
	compareResults(t, got, want)
	if len(got) != 200 {
		t.Errorf("%d SimResults, want 200", len(got))
	}
}

// TestCappedClientIsFoundAndBinds: a trace run made with a capped client
// holds requests back (sends after arrivals), replay says it found the cap,
// and replaying it as an open loop at the intended arrivals differs (so the
// parity cases above test the cap, not a no-op).
func TestCappedClientIsFoundAndBinds(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "cap")
	execRun(t, "--workload", "chatbot", "--rate", "60", "--num-requests", "300", "--client-max-concurrency", "16",
		"--trace-output", prefix)
	tr, err := tracev2.Load(tracev2.Input{Path: prefix + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, r := range tr.Records {
		if r.SendTimeUs > r.ArrivalTimeUs {
			held++
		}
	}
	if held < 100 {
		t.Fatalf("%d of %d rows were held by the client, want most: the cap does not bind", held, len(tr.Records))
	}
	// The header states the cap; without it (--ignore-trace-deployment,
	// as for a trace from elsewhere) replay finds it in the rows.
	r := mustReplay(t, nil, prefix+".csv", "--ignore-trace-deployment", "--results-path", filepath.Join(dir, "found.json"))
	if !strings.Contains(r.stderr, "kept at most 16 requests in flight") {
		t.Errorf("replay did not report the cap; stderr:\n%s", r.stderr)
	}
	mustReplay(t, nil, prefix+".csv", "--results-path", filepath.Join(dir, "stated.json"))
	compareResults(t, readSimResults(t, filepath.Join(dir, "stated.json")), readSimResults(t, filepath.Join(dir, "found.json")))
	mustReplay(t, nil, prefix+".csv", "--ignore-trace-deployment", "--detect-client=false", "--inject-at", "arrival", "--results-path", filepath.Join(dir, "open.json"))
	found, open := readSimResults(t, filepath.Join(dir, "found.json")), readSimResults(t, filepath.Join(dir, "open.json"))
	diff := 0
	for id, f := range found {
		if open[id].TTFTUs != f.TTFTUs {
			diff++
		}
	}
	if diff < 100 {
		t.Errorf("an open loop at the intended arrivals differs from the capped client on %d requests, want most", diff)
	}
	bad := replayIn(nil, prefix+".csv", "--client-max-concurrency", "16", "--inject-at", "send")
	if exitcode.Of(bad.err) != 2 || !strings.Contains(bad.stderr, "contradicts a capped client") {
		t.Errorf("--inject-at send with a cap: exit %d, stderr %q; want 2 and a usage error", exitcode.Of(bad.err), bad.stderr)
	}
}
