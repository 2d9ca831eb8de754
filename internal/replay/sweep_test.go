package replay

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// Every GPU the simulator knows has a built-in price, so a sweep over
// them can answer what it costs without a price file.
func TestEveryKnownGPUHasAPrice(t *testing.T) {
	prices := sweep.DefaultPrices()
	for _, g := range latency.KnownGPUs() {
		p, ok := prices.Lookup(g)
		if !ok || !(p.USDPerHour > 0) || p.Source == "" {
			t.Errorf("GPU %s: price %+v (found %v), want a positive price with its source", g, p, ok)
		}
	}
}

func gridOf(t *testing.T, flags ...string) *sweep.Grid {
	t.Helper()
	var axes []sweep.Axis
	for _, f := range flags {
		ax, err := sweep.ParseGridFlag(f)
		if err != nil {
			t.Fatal(err)
		}
		axes = append(axes, ax)
	}
	g, err := sweep.NewGrid(axes)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func chatbot(n int64, rate float64) *workload.Options {
	return &workload.Options{Preset: "chatbot", NumRequests: &n, Rate: &rate}
}

func TestSweeperCheck(t *testing.T) {
	for _, tc := range []struct {
		grid []string
		want string
	}{
		{[]string{"max_num_seq=1"}, `--grid: column 1: grid: unknown key max_num_seq (did you mean "max_num_seqs"?): want a deployment key (admission_latency, `},
		{[]string{"num_instance=1,2"}, `--grid: column 1: grid: unknown key num_instance (did you mean "num_instances"?): want a deployment key (`},
		{[]string{"rat=1,2"}, `--grid: column 1: grid: unknown key rat (did you mean "rate"?): want a deployment key (`},
		{[]string{"quux_zzz=1"}, "--grid: column 1: grid: unknown key quux_zzz: want a deployment key (admission_latency, "},
		{[]string{"max_num_seqs=8,x"}, `--grid: column 16: grid.max_num_seqs: value x: "x" is not an integer`},
		{[]string{"num_instances=1,2", "rate=5,0"}, "--grid: column 8: grid.rate: \"0\": want a positive number of requests per second"},
		{[]string{"pd_split=2"}, "--grid: column 10: grid.pd_split: \"2\": want P:D"},
		{[]string{"gpu=B300"}, "every case is infeasible; case 0 (gpu=B300)"},
	} {
		s := &Sweeper{Deploy: deploy.Default(), Grid: gridOf(t, tc.grid...), Workload: chatbot(50, 5)}
		if err := s.Check(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want prefix %q", tc.grid, err, tc.want)
		}
	}
	s := &Sweeper{Deploy: deploy.Default(), Grid: gridOf(t, "gpu=H100,B300", "pd_split=1:1,1:2"), Workload: chatbot(50, 5)}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if inf := s.infeasible; len(inf) != 2 || !strings.Contains(inf[2], "B300") || inf[3] == "" {
		t.Errorf("infeasible cases: got %v, want cases 2 and 3 (gpu=B300)", inf)
	}
	row, err := s.Run(context.Background(), s.Grid.Case(3), 0)
	if err != nil || row.Status != sweep.StatusInfeasible || row.GPUs != 3 || row.GPU != "B300" {
		t.Errorf("an infeasible case's row: %+v, %v", row, err)
	}
	row, err = s.Run(context.Background(), s.Grid.Case(1), 0)
	if err != nil || row.Status != sweep.StatusOK || row.GPUs != 3 || row.Completed != 50 || row.RateRPS != 5 {
		t.Errorf("P/D 1:2 on H100: %+v, %v; want 3 GPUs and 50 requests at 5 req/s", row, err)
	}
	// A max-rate search needs a workload bounded by its request count.
	zero := int64(0)
	h := workload.Options{Preset: "chatbot", NumRequests: &zero, Horizon: ptr(time.Minute)}
	s = &Sweeper{Deploy: deploy.Default(), Grid: gridOf(t), Workload: &h, Searching: true}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "needs a workload bounded by its number of requests") {
		t.Errorf("horizon-bound search: got %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// A run is steady below capacity and unstable above it, where no latency
// is reported; goodput counts the requests within the SLO's bounds.
func TestSweeperRows(t *testing.T) {
	slo, _ := sweep.ParseSLO("ttft.p99<200ms")
	s := &Sweeper{Deploy: deploy.Default(), Grid: gridOf(t, "rate=10,80"), Workload: chatbot(3000, 1), SLO: slo}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	low, err := s.Run(context.Background(), s.Grid.Case(0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if low.Status != sweep.StatusOK || low.TTFT == nil || low.SLOAttainment != 1 || math.Abs(low.GoodputRPS-low.ThroughputRPS) > 1e-9 {
		t.Errorf("10 req/s: %+v; want steady, every request within 200 ms", low)
	}
	high, err := s.Run(context.Background(), s.Grid.Case(1), 0)
	if err != nil {
		t.Fatal(err)
	}
	if high.Status != sweep.StatusUnstable || high.TTFT != nil || high.E2E != nil || !(high.QueueGrowth > 0.3) || !strings.Contains(high.Reason, "queue grew") {
		t.Errorf("80 req/s on one H100 (capacity about 40): %+v; want unstable, no latency", high)
	}
	if !(high.GoodputRPS < high.ThroughputRPS) || !(high.SLOAttainment < 0.5) {
		t.Errorf("80 req/s: goodput %v of throughput %v, attainment %v", high.GoodputRPS, high.ThroughputRPS, high.SLOAttainment)
	}
}

// SetRate scales the arrival gaps to a mean rate and leaves the requests
// alone.
func TestTraceSetRate(t *testing.T) {
	recs := make(RecordRows, 11)
	for i := range recs {
		recs[i] = tracev2.Record{RequestID: int64(i), ArrivalTimeUs: 1_000_000 + int64(i)*200_000, InputTokens: 10, OutputTokens: 5, Status: "ok"}
	}
	tr, err := NewTrace(recs, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.RateRPS(); math.Abs(got-5) > 1e-9 {
		t.Fatalf("rate %v, want 5 (10 gaps over 2 s)", got)
	}
	if err := tr.SetRate(20); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(recs); i++ {
		rec, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want := 1_000_000 + int64(i)*50_000; rec.ArrivalTimeUs != want || rec.InputTokens != 10 {
			t.Errorf("row %d at %d µs with %d tokens, want %d µs and 10", i, rec.ArrivalTimeUs, rec.InputTokens, want)
		}
	}
	if err := tr.SetRate(-1); err == nil {
		t.Error("a negative rate was accepted")
	}
	once, _ := NewTrace(RecordRows{{RequestID: 1, Status: "ok"}, {RequestID: 2, Status: "ok"}}, TraceOptions{})
	if err := once.SetRate(3); err == nil || !strings.Contains(err.Error(), "no rate to scale") {
		t.Errorf("a trace arriving at once: got %v", err)
	}
}

// The latency model and its coefficients are keys like any other: a
// list-valued key takes one list per value.
func TestSweeperLatencyCoefficients(t *testing.T) {
	spec, err := sweep.DecodeSpec("s.yaml", []byte("grid:\n  latency_model: [blackbox]\n  alpha_coeffs: [[0, 0, 0]]\n  beta_coeffs: [[3000, 2, 2], [6000, 4, 4]]\n"), sweep.NewSpec())
	if err != nil {
		t.Fatal(err)
	}
	g, err := sweep.NewGrid(spec.Axes)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sweeper{Deploy: deploy.Default(), Grid: g, Workload: chatbot(200, 2)}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	fast, err1 := s.Run(context.Background(), g.Case(0), 0)
	slow, err2 := s.Run(context.Background(), g.Case(1), 0)
	if err1 != nil || err2 != nil || fast.E2E == nil || slow.E2E == nil {
		t.Fatalf("%v %v %+v %+v", err1, err2, fast, slow)
	}
	if r := slow.E2E.Mean / fast.E2E.Mean; r < 1.8 || r > 2.2 {
		t.Errorf("doubling every step-time coefficient took E2E from %v to %v ms (×%.2f), want about ×2", fast.E2E.Mean, slow.E2E.Mean, r)
	}
	if got := g.Params(g.Case(1))[2].Value; got != "[6000, 4, 4]" {
		t.Errorf("the list value reads %q in the table", got)
	}
	bad, _ := sweep.DecodeSpec("s.yaml", []byte("grid:\n  beta_coeffs: [1, 2]\n"), sweep.NewSpec())
	g, _ = sweep.NewGrid(bad.Axes)
	s = &Sweeper{Deploy: deploy.Default(), Grid: g, Workload: chatbot(10, 2)}
	if err := s.Check(); err == nil || !strings.HasPrefix(err.Error(), `s.yaml:2:17: grid.beta_coeffs: value 1: "1" is not a list (a list-valued key takes a list of lists`) {
		t.Errorf("a scalar for a list-valued key: got %v", err)
	}
}
