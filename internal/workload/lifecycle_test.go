package workload

import (
	"math"
	"strings"
	"testing"
)

const dists = `
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 5}}
`

// countIn counts the requests of client prefix arriving in [lo, hi) µs.
func countIn(reqs []*Request, prefix string, lo, hi int64) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r.ClientID, prefix) && r.ArrivalUs >= lo && r.ArrivalUs < hi {
			n++
		}
	}
	return n
}

// within reports whether got is within tol (a fraction) of want.
func within(got, want int, tol float64) bool {
	return math.Abs(float64(got-want)) <= tol*float64(want)
}

// TestPhasedRates is the per-phase normalisation of BLIS's documentation:
// aggregate_rate 40 with clients A (0.7) and B (0.3) active 0–50 s and C
// (1.0) active 50–100 s gives A 28/s, B 12/s, C 40/s; nothing outside the
// windows, and the spec needs no num_requests (its windows end).
func TestPhasedRates(t *testing.T) {
	w := mustDecode(t, `aggregate_rate: 40
clients:
  - id: a
    rate_fraction: 0.7
    arrival: {process: poisson}
    lifecycle: {windows: [{start_us: 0, end_us: 50000000}]}`+dists+`
  - id: b
    rate_fraction: 0.3
    arrival: {process: constant}
    lifecycle: {windows: [{start_us: 0, end_us: 50000000}]}`+dists+`
  - id: c
    rate_fraction: 1
    arrival: {process: poisson}
    lifecycle: {windows: [{start_us: 50000000, end_us: 100000000}]}`+dists)
	reqs := drain(w)
	for _, tc := range []struct {
		client string
		lo, hi int64
		want   int
	}{{"a", 0, 50e6, 1400}, {"b", 0, 50e6, 600}, {"c", 50e6, 100e6, 2000}, {"a", 50e6, 1e12, 0}, {"c", 0, 50e6, 0}} {
		if got := countIn(reqs, tc.client, tc.lo, tc.hi); !within(got, tc.want, 0.06) || (tc.want == 0 && got != 0) {
			t.Errorf("client %s in [%d, %d) µs: %d requests, want about %d", tc.client, tc.lo, tc.hi, got, tc.want)
		}
	}
	if got := countIn(reqs, "b", 0, 50e6); got != 599 && got != 600 {
		t.Errorf("constant client b: %d requests in 50 s at 12/s, want 599 or 600", got)
	}
}

// TestWindowOverrides: a window's own trace_rate (absolute mode with
// aggregate_rate 0), arrival process and lengths apply to the requests
// arriving in it; the client's own apply elsewhere.
func TestWindowOverrides(t *testing.T) {
	w := mustDecode(t, `aggregate_rate: 0
clients:
  - id: ramp
    rate_fraction: 1
    arrival: {process: constant}
    lifecycle:
      windows:
        - {start_us: 0, end_us: 10000000, trace_rate: 5}
        - start_us: 10000000
          end_us: 20000000
          trace_rate: 50
          arrival: {process: poisson}
          input_distribution: {type: constant, params: {value: 700}}`+dists)
	reqs := drain(w)
	slow, fast := countIn(reqs, "ramp", 0, 10e6), countIn(reqs, "ramp", 10e6, 20e6)
	if slow != 49 && slow != 50 || !within(fast, 500, 0.1) {
		t.Errorf("%d requests at 5/s over 10 s and %d at 50/s over 10 s", slow, fast)
	}
	for _, r := range reqs {
		if want := map[bool]int{false: 10, true: 700}[r.ArrivalUs >= 10e6]; r.InputTokens != want {
			t.Fatalf("request at %d µs has %d input tokens, want %d", r.ArrivalUs, r.InputTokens, want)
		}
	}
}

// TestCohortPatterns expands BLIS's cohort example (50 diurnal members
// peaking at 14:00 with ratio 3, 20 spike members for 5 s from 10 s) and
// checks the members, the diurnal duty cycle and the spike's share.
func TestCohortPatterns(t *testing.T) {
	const spike = `
  - id: flash
    population: 20
    slo_class: standard
    rate_fraction: 0.3
    arrival: {process: constant}
    spike: {start_time_us: 10000000, duration_us: 5000000}
    prefix_group: sale
    prefix_sharing: per_member` + dists
	w := mustDecode(t, `aggregate_rate: 200
num_requests: 4000
cohorts:
  - id: day
    population: 50
    slo_class: critical
    rate_fraction: 0.7
    arrival: {process: poisson}
    diurnal: {peak_hour: 14, peak_to_trough_ratio: 3}`+dists+spike)
	if n := len(w.Spec.Clients); n != 70 || w.Spec.Clients[49].ID != "day-49" || w.Spec.Clients[50].ID != "flash-0" {
		t.Fatalf("%d clients, ids %q %q", n, w.Spec.Clients[49].ID, w.Spec.Clients[50].ID)
	}
	if c := w.Spec.Clients[51]; c.PrefixGroup != "sale-1" || math.Abs(c.RateFraction-0.015) > 1e-12 {
		t.Errorf("flash-1: group %q, fraction %g; want sale-1, 0.3/20", c.PrefixGroup, c.RateFraction)
	}
	windows := w.Spec.Clients[0].Lifecycle.Windows
	if len(windows) != 24 || windows[14].EndUs-windows[14].StartUs != usPerHour ||
		windows[2].EndUs-windows[2].StartUs != usPerHour/3 {
		t.Errorf("diurnal windows: %d; the peak hour lasts %d µs, the trough %d µs; want 24, a whole hour, a third",
			len(windows), windows[14].EndUs-windows[14].StartUs, windows[2].EndUs-windows[2].StartUs)
	}
	// During the spike both cohorts are active: 0.3 of 200/s goes to the 20
	// flash members (3/s each, 14 or 15 in 5 s), only then.
	reqs := drain(w)
	if n := countIn(reqs, "flash", 10e6, 15e6); n < 280 || n > 300 || countIn(reqs, "flash", 0, 10e6)+countIn(reqs, "flash", 15e6, 1e12) != 0 {
		t.Errorf("%d flash requests in the spike, %d outside; want 280–300 and none", n, len(reqs)-n-countIn(reqs, "day", 0, 1e12))
	}
	// The diurnal duty cycle: three times the traffic at the peak hour as
	// twelve hours away (a slow rate, so a day stays short to generate).
	slow := mustDecode(t, `aggregate_rate: 2
horizon: 54000000000
cohorts:
  - id: day
    population: 50
    rate_fraction: 1
    arrival: {process: poisson}
    diurnal: {peak_hour: 14, peak_to_trough_ratio: 3}`+dists)
	reqs = drain(slow)
	trough, peak := countIn(reqs, "day", 2*usPerHour, 3*usPerHour), countIn(reqs, "day", 14*usPerHour, 15*usPerHour)
	if !within(peak, 3*trough, 0.1) || !within(peak, 7200, 0.05) {
		t.Errorf("peak hour %d requests, trough hour %d: want 7200 and a third of it", peak, trough)
	}
}

// TestDrainPattern: full rate until the drain starts, then ten slices of
// shrinking duty, nothing after.
func TestDrainPattern(t *testing.T) {
	w := mustDecode(t, `aggregate_rate: 100
cohorts:
  - id: d
    population: 4
    rate_fraction: 1
    arrival: {process: constant}
    drain: {start_time_us: 10000000, ramp_duration_us: 10000000}`+dists)
	reqs := drain(w)
	before, first, last := countIn(reqs, "d", 0, 10e6), countIn(reqs, "d", 10e6, 11e6), countIn(reqs, "d", 19e6, 20e6)
	if !within(before, 1000, 0.01) || !within(first, 100, 0.05) || !within(last, 10, 0.3) || countIn(reqs, "d", 20e6, 1e12) != 0 {
		t.Errorf("before %d, first slice %d, last slice %d, after %d; want 1000, 100, 10, 0",
			before, first, last, countIn(reqs, "d", 20e6, 1e12))
	}
}

// TestInferencePerfStages: two stages at 8/s and 20/s for 10 s each over
// 3 × 2 clients give each stage its rate, with the clients of its stage.
func TestInferencePerfStages(t *testing.T) {
	w := mustDecode(t, `seed: 3
aggregate_rate: 99
inference_perf:
  stages: [{rate: 8, duration: 10}, {rate: 20, duration: 10}]
  shared_prefix: {num_unique_system_prompts: 3, num_users_per_system_prompt: 2, system_prompt_len: 100, question_len: 40, output_len: 7}
`)
	if len(w.Spec.Clients) != 12 || w.Spec.Clients[6].ID != "stage-1-prompt-0-user-0" || len(w.Warnings) != 1 {
		t.Fatalf("%d clients (%q), warnings %q", len(w.Spec.Clients), w.Spec.Clients[6].ID, w.Warnings)
	}
	reqs := drain(w)
	if s0, s1 := countIn(reqs, "stage-0", 0, 10e6), countIn(reqs, "stage-1", 10e6, 20e6); !within(s0, 80, 0.3) || !within(s1, 200, 0.2) ||
		countIn(reqs, "stage-0", 10e6, 1e12) != 0 || countIn(reqs, "stage-1", 0, 10e6) != 0 {
		t.Errorf("stage 0: %d requests, stage 1: %d; want about 80 and 200, each in its own stage", s0, s1)
	}
	for _, r := range reqs {
		if r.PrefixLength != 100 || r.InputTokens != 40 || r.OutputTokens != 7 || r.SLOClass != "standard" || r.TenantID != r.PrefixGroup {
			t.Fatalf("request %+v", r)
		}
	}
	multi := mustDecode(t, `inference_perf:
  stages: [{rate: 2, duration: 30}]
  shared_prefix: {num_unique_system_prompts: 2, num_users_per_system_prompt: 2, system_prompt_len: 50, question_len: 20, output_len: 4, enable_multi_turn_chat: true}
`)
	c := multi.Spec.Clients[0]
	if c.MultiTurn == nil || !c.MultiTurn.SingleSession || c.MultiTurn.MaxRounds != 15 || c.MultiTurn.ThinkTimeUs != 2_000_000 || multi.Spec.Category != "reasoning" {
		t.Errorf("multi-turn chat client %s: %+v, category %q; want one session of 15 rounds 2 s apart", c.ID, c.MultiTurn, multi.Spec.Category)
	}
}

// TestMultimodalInput: the input is text + image tokens × count, and the
// parts are kept.
func TestMultimodalInput(t *testing.T) {
	w := mustDecode(t, `aggregate_rate: 10
num_requests: 50
clients:
  - id: v
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 1}}
    output_distribution: {type: constant, params: {value: 5}}
    multimodal:
      text_distribution: {type: uniform, params: {min: 10, max: 20}}
      image_distribution: {type: constant, params: {value: 576}}
      image_count_distribution: {type: uniform, params: {min: 1, max: 3}}
`)
	counts := map[int]bool{}
	for _, r := range drain(w) {
		text := r.InputTokens - r.ImageTokens
		if r.ImageTokens%576 != 0 || r.ImageTokens < 576 || r.ImageTokens > 3*576 || text < 10 || text > 20 || r.AudioTokens+r.VideoTokens != 0 {
			t.Fatalf("request %d: %d input tokens, %d of them image", r.ID, r.InputTokens, r.ImageTokens)
		}
		counts[r.ImageTokens/576] = true
	}
	if len(counts) != 3 {
		t.Errorf("image counts seen %v, want 1, 2 and 3", counts)
	}
}

// TestRateRamp: the total rate goes from start_rps to end_rps over
// num_requests, linearly or exponentially (vllm bench serve's ramp-up).
func TestRateRamp(t *testing.T) {
	for _, tc := range []struct {
		strategy    string
		first, last float64 // rate at the start and the end, req/s
	}{{"linear", 10, 100}, {"exponential", 10, 100}} {
		w := mustDecode(t, `num_requests: 2000
rate_ramp: {strategy: `+tc.strategy+`, start_rps: 10, end_rps: 100}
clients:
  - id: a
    rate_fraction: 1
    arrival: {process: poisson}`+dists)
		reqs := drain(w)
		rate := func(from, to int) float64 {
			return float64(to-from) / (float64(reqs[to].ArrivalUs-reqs[from].ArrivalUs) / 1e6)
		}
		if first, last := rate(0, 100), rate(1899, 1999); math.Abs(first-tc.first)/tc.first > 0.25 || math.Abs(last-tc.last)/tc.last > 0.25 {
			t.Errorf("%s: %.1f req/s over the first 100 requests, %.1f over the last 100; want about %g and %g", tc.strategy, first, last, tc.first, tc.last)
		}
		// The middle request runs at the ramp's midpoint.
		mid := map[string]float64{"linear": 55, "exponential": math.Sqrt(10 * 100)}[tc.strategy]
		if got := rate(900, 1100); math.Abs(got-mid)/mid > 0.2 {
			t.Errorf("%s: %.1f req/s mid-run, want about %.1f", tc.strategy, got, mid)
		}
	}
}

// TestSpecSourceErrors names the place of each new kind of mistake.
func TestSpecSourceErrors(t *testing.T) {
	client := "clients:\n  - id: a\n    rate_fraction: 1\n    arrival: {process: poisson}" + dists
	for _, tc := range []struct{ name, spec, want string }{
		{"population", "aggregate_rate: 1\ncohorts:\n  - {id: c, population: 100001, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 1}}, output_distribution: {type: constant, params: {value: 1}}}\n",
			"spec.yaml:3:13: cohorts[0].population: 100001 out of range [1, 100000]"},
		{"per member without group", "aggregate_rate: 1\ncohorts:\n  - {id: c, population: 2, rate_fraction: 1, prefix_sharing: per_member, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 1}}, output_distribution: {type: constant, params: {value: 1}}}\n",
			"cohorts[0].prefix_sharing: per_member needs prefix_group"},
		{"window backwards", "aggregate_rate: 1\n" + strings.Replace(client, "arrival:", "lifecycle: {windows: [{start_us: 5, end_us: 5}]}\n    arrival:", 1),
			"clients[0].lifecycle.windows[0]: [5, 5) µs: want 0 <= start_us < end_us"},
		{"absolute without trace_rate", client + "    lifecycle: {windows: [{start_us: 0, end_us: 5}]}\n",
			"aggregate_rate: required (> 0) when a client is rate-based (0 only when"},
		{"ramp and rate", "aggregate_rate: 2\nnum_requests: 5\nrate_ramp: {strategy: linear, start_rps: 1, end_rps: 2}\n" + client,
			"rate_ramp: rate_ramp replaces aggregate_rate: give only one"},
		{"ramp backwards", "num_requests: 5\nrate_ramp: {strategy: linear, start_rps: 3, end_rps: 2}\n" + client,
			"rate_ramp: start_rps 3 exceeds end_rps 2"},
		{"ramp unbounded", "horizon: 5000000\nrate_ramp: {strategy: exponential, start_rps: 1, end_rps: 2}\n" + client,
			"rate_ramp: needs num_requests"},
		{"clients and inference_perf", "aggregate_rate: 1\nnum_requests: 5\n" + client + "inference_perf: {stages: [{rate: 1, duration: 1}], shared_prefix: {num_unique_system_prompts: 1, num_users_per_system_prompt: 1}}\n",
			"inference_perf: clients, cohorts and inference_perf are alternatives"},
		{"cohort unknown key", "aggregate_rate: 1\ncohorts:\n  - {id: c, population: 2, rate_fraction: 1, diurnl: {}}\n",
			`spec.yaml:3:46: cohorts[0]: unknown key "diurnl" (did you mean "diurnal"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(Options{SpecPath: "spec.yaml", SpecData: []byte(tc.spec)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
