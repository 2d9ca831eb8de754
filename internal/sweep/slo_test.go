package sweep

import (
	"strings"
	"testing"
)

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO(" ttft.p99<500ms, itl.p99<=50ms,e2e.mean<2.5s , tpot.p50<800us")
	if err != nil {
		t.Fatal(err)
	}
	want := []Clause{
		{Metric: "ttft", Stat: "p99", Op: "<", LimitMs: 500},
		{Metric: "itl", Stat: "p99", Op: "<=", LimitMs: 50},
		{Metric: "e2e", Stat: "mean", Op: "<", LimitMs: 2500},
		{Metric: "tpot", Stat: "p50", Op: "<", LimitMs: 0.8},
	}
	if len(s.Clauses) != len(want) {
		t.Fatalf("got %d clauses, want %d", len(s.Clauses), len(want))
	}
	for i, w := range want {
		g := s.Clauses[i]
		if g.Metric != w.Metric || g.Stat != w.Stat || g.Op != w.Op || g.LimitMs != w.LimitMs {
			t.Errorf("clause %d: got %+v, want %+v", i, g, w)
		}
	}
	if got := s.String(); got != "ttft.p99<500ms,itl.p99<=50ms,e2e.mean<2.5s,tpot.p50<800us" {
		t.Errorf("canonical form: got %q", got)
	}
	if m, st := s.Primary(); m != "ttft" || st != "p99" {
		t.Errorf("primary: got %s.%s", m, st)
	}
	ttft, itl, e2e := s.RequestTargets()
	if ttft != 500 || itl != 0.8 || e2e != 2500 {
		t.Errorf("per-request targets: got %v %v %v, want 500 0.8 2500 (the tightest of itl and tpot)", ttft, itl, e2e)
	}
	if none, _ := ParseSLO("  "); !none.Empty() {
		t.Error("a blank SLO should be empty")
	}
	for _, tc := range []struct{ in, want string }{
		{"ttft.p99<0ms", "--slo: column 10: slo: the bound 0ms must be positive"},
		{"ttft.p99<5ms,", "--slo: column 14: slo: empty bound"},
		{"ttft<5ms", "--slo: column 6: slo: unknown statistic \"\" of ttft"},
		{"ttft.p99 5ms", "--slo: column 1: slo: \"ttft.p99 5ms\" has no comparison"},
		{"ttft.p99<fast", "--slo: column 10: slo: \"fast\": want a number with a unit"},
	} {
		if _, err := ParseSLO(tc.in); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}

func TestSLOCheck(t *testing.T) {
	s, _ := ParseSLO("ttft.p99<500ms,itl.p99<50ms")
	r := Row{Status: StatusOK, TTFT: &Latency{P99: 499}, ITL: &Latency{P99: 50}}
	met, why := s.Check(&r)
	if met || len(why) != 1 || why[0] != "itl.p99 50ms = 50ms" {
		t.Errorf("a bound met with equality under <: got %v %q", met, why)
	}
	r.ITL.P99 = 12
	if met, why := s.Check(&r); !met || why != nil {
		t.Errorf("both bounds hold: got %v %q", met, why)
	}
	r.TTFT.P99 = 1234
	if _, why := s.Check(&r); len(why) != 1 || why[0] != "ttft.p99 1.23s > 500ms" {
		t.Errorf("failure text: got %q", why)
	}
	u := Row{Status: StatusUnstable}
	if met, why := s.Check(&u); met || why[0] != "unstable" {
		t.Errorf("an unstable run never meets an SLO: got %v %q", met, why)
	}
	n := Row{Status: StatusOK}
	if _, why := s.Check(&n); len(why) != 2 || why[0] != "ttft.p99 not measured" {
		t.Errorf("a run without latencies: got %q", why)
	}
}

// TestClassBounds: a bound may name an SLO class (a tier); it holds on that
// class's statistics alone, sets no per-request target, and is refused,
// with its column, for a statistic the simulator does not keep per class.
func TestClassBounds(t *testing.T) {
	s, err := ParseSLO("critical:ttft.p99<500ms, standard:e2e.p99<=20s,ttft.p99<5s")
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Clauses[0]; c.Class != "critical" || c.Metric != "ttft" || c.Stat != "p99" || c.LimitMs != 500 || c.Name() != "critical:ttft.p99" {
		t.Errorf("class clause: %+v", c)
	}
	if ttft, itl, e2e := s.RequestTargets(); ttft != 5000 || itl != 0 || e2e != 0 {
		t.Errorf("per-request targets: %v %v %v, want only the unqualified ttft bound 5000", ttft, itl, e2e)
	}
	r := Row{Status: StatusOK, TTFT: &Latency{P99: 4000}, PerClass: map[string]ClassRow{
		"critical": {Count: 10, Completed: 10, TTFTP99: 450},
		"standard": {Count: 10, Completed: 9, E2EP99: 20_000},
	}}
	if met, why := s.Check(&r); !met {
		t.Errorf("every bound holds: %q", why)
	}
	r.PerClass["critical"] = ClassRow{Count: 10, Completed: 10, TTFTP99: 612}
	if met, why := s.Check(&r); met || len(why) != 1 || why[0] != "critical:ttft.p99 612ms > 500ms" {
		t.Errorf("the critical tier over its bound: %v %q", met, why)
	}
	r.PerClass["critical"] = ClassRow{Count: 10}
	if _, why := s.Check(&r); len(why) != 1 || why[0] != "critical:ttft.p99 not measured" {
		t.Errorf("a class that finished nothing: %q", why)
	}
	delete(r.PerClass, "critical")
	if _, why := s.Check(&r); len(why) != 1 || why[0] != "critical:ttft.p99 not measured" {
		t.Errorf("a class the row lacks: %q", why)
	}
	for _, tc := range []struct{ in, want string }{
		{"critical:ttft.p50<5ms", "--slo: column 10: slo: a class bound takes ttft.p99, itl.mean, e2e.p99, not ttft.p50"},
		{"ttft.p99<1s,critical:tft.p99<5ms", "--slo: column 22: slo: unknown metric \"tft\""},
		{":ttft.p99<5ms", "--slo: column 1: slo: \":ttft.p99<5ms\": give the SLO class before the colon"},
	} {
		if _, err := ParseSLO(tc.in); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}
