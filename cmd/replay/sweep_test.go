package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/sweep"
)

// A replay sweep's cases are exactly the replays of the same flags: each
// case's summary is byte for byte what replay --metrics-out writes, the
// rate key included (replay --rate).
func TestReplaySweepRowsEqualReplays(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "chat")
	execRun(t, "--workload", "chatbot", "--rate", "10", "--num-requests", "300", "--trace-output", prefix)
	trace := prefix + ".csv"
	sums := filepath.Join(dir, "sums")
	out := mustReplay(t, nil, "sweep", trace, "--grid", "num_instances=1,2", "--grid", "rate=10,30", "--grid", "routing_policy=round-robin,least-loaded",
		"--format", "json", "--summaries", sums)
	d, err := sweep.DecodeDoc("stdout", []byte(out.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rows) != 8 || d.LoadKeys[0] != "rate" {
		t.Fatalf("%d rows, load keys %v", len(d.Rows), d.LoadKeys)
	}
	for _, r := range d.Rows {
		m := filepath.Join(dir, fmt.Sprintf("m%d.json", r.Case))
		args := []string{trace, "--format", "text", "--metrics-out", m}
		for _, p := range r.Params {
			args = append(args, "--"+strings.ReplaceAll(p.Key, "_", "-"), p.Value)
		}
		mustReplay(t, nil, args...)
		want, _ := os.ReadFile(m)
		got, err := os.ReadFile(filepath.Join(sums, fmt.Sprintf("case-%04d.json", r.Case)))
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || string(got) != string(want) {
			t.Errorf("case %d (%s): the sweep's summary differs from replay %s", r.Case, sweep.ParamText(r.Params), strings.Join(args, " "))
		}
		if rate, _ := strconv.ParseFloat(r.Param("rate"), 64); r.RateRPS != rate || r.Injected != 300 {
			t.Errorf("case %d: offered %v req/s, %d requests; want %v and 300", r.Case, r.RateRPS, r.Injected, rate)
		}
	}
}

// A trace's max rate: the trace sped up until the SLO breaks, with the
// cheapest-per-token deployment among those searched.
func TestReplaySweepMaxRate(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "chat")
	execRun(t, "--workload", "chatbot", "--rate", "5", "--num-requests", "1000", "--trace-output", prefix)
	out := mustReplay(t, nil, "sweep", prefix+".csv", "--grid", "num_instances=1,2", "--find", "max-rate", "--slo", "ttft.p99<200ms",
		"--precision", "5%", "--format", "json")
	d, err := sweep.DecodeDoc("stdout", []byte(out.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Answer.MaxRates) != 2 {
		t.Fatalf("got %+v", d.Answer.MaxRates)
	}
	one, two := d.Answer.MaxRates[0], d.Answer.MaxRates[1]
	// One H100 serves about 40 chatbot requests/s; two serve about twice as many.
	if !(one.MaxRateRPS > 20 && one.MaxRateRPS < 60) || !(two.MaxRateRPS > 1.6*one.MaxRateRPS) {
		t.Errorf("max rates %v and %v req/s: want about 40 and twice that", one.MaxRateRPS, two.MaxRateRPS)
	}
	if !(one.FailRateRPS <= one.MaxRateRPS*1.05*1.0001) || one.CostPerMTok == nil {
		t.Errorf("one instance: %+v", one)
	}
	if !strings.Contains(sweepTextOf(t, prefix+".csv"), "max rate") {
		t.Error("the text table does not state the max rate")
	}
}

func sweepTextOf(t *testing.T, trace string) string {
	r := mustReplay(t, nil, "sweep", trace, "--find", "max-rate", "--slo", "ttft.p99<200ms", "--precision", "10%")
	return r.stdout
}

// A rate at which the trace would be played over millennia is refused at
// the flag or grid value that gives it, before any case runs, instead of
// overflowing the simulator's clock.
func TestReplaySweepRateBounds(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "chat")
	execRun(t, "--workload", "chatbot", "--rate", "10", "--num-requests", "50", "--trace-output", prefix)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", prefix + ".csv", "--grid", "rate=1,1e-300"}, "--grid: column 8: grid.rate: rate 1e-300 req/s would play the trace over more than 3.65e+04 years: the lowest rate for it is"},
		{[]string{prefix + ".csv", "--rate", "1e-300"}, "--rate: rate 1e-300 req/s would play the trace over more than 3.65e+04 years"},
	} {
		r := replayIn(nil, append(tc.args, "--quiet")...)
		if exitcode.Of(r.err) != 2 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %d bytes; want exit 2 with %q and nothing on stdout", tc.args, exitcode.Of(r.err), r.stderr, len(r.stdout), tc.want)
		}
	}
}
