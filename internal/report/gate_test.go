package report

import (
	"errors"
	"strings"
	"testing"
)

func TestParseGatesErrors(t *testing.T) {
	tests := []struct {
		expr   string
		column int
		msg    string
	}{
		{"ttft.mapee<0.15", 6, `unknown statistic "mapee"`},
		{"ttfb.mape<0.15", 1, `unknown name "ttfb"`},
		{"ttft.mape 0.15", 11, "expected a comparison"},
		{"ttft.mape<", 11, "expected a value"},
		{"ttft.mape<0.15,", 16, "expected a gate after ','"},
		{"ttft.mape<0.15 e2e.mape<1", 16, "expected ',' between gates"},
		{"ttft.grade>=great", 13, "compares with a grade"},
		{"ttft.mape<15ms", 13, `unit "ms" does not fit ttft mape`},
		{"ttft.real_p99<5%", 16, `unit "%" does not fit ttft real_p99`},
		{"ttft.pearson>0.9x", 17, "plain number"},
		{"valid<true", 6, "use == or !="},
		{"valid==yes", 8, "true or false"},
		{"goodput.critical<0.9", 17, "needs a class and a key"},
		{"goodput.critical.speed>1", 18, `unknown goodput key "speed"`},
		{"trace.rows>1", 7, `unknown trace count "rows"`},
		{"validity.hot==false", 10, `unknown validity check "hot"`},
		{"config.matches==true", 8, `unknown config key "matches"`},
		{"config==true", 7, `config needs a key, as in config.match`},
		{"ttft<0.1", 5, "needs a statistic"},
		{"ttft.mape.x<0.1", 11, `unexpected "x"`},
		{",ttft.mape<1", 1, "expected a gate"},
		{"ttft..mape<1", 6, "empty name"},
		{"mape<abc", 6, "compares with a number"},
		{"µ.mape<1", 1, `unknown name "µ"`},
	}
	for _, tt := range tests {
		_, err := ParseGates(tt.expr, nil)
		var se *GateSyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: err = %v, want GateSyntaxError", tt.expr, err)
			continue
		}
		if se.Column != tt.column || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("%q: column %d msg %q, want column %d containing %q", tt.expr, se.Column, se.Msg, tt.column, tt.msg)
		}
		if se.ExitCode() != 2 || !strings.Contains(se.Error(), tt.expr) {
			t.Errorf("%q: Error() = %q, exit %d", tt.expr, se.Error(), se.ExitCode())
		}
	}
	se := &GateSyntaxError{Expr: "ttft.mapee<0.15", Column: 6}
	if want := "ttft.mapee<0.15\n     ^"; se.Caret() != want {
		t.Errorf("Caret() = %q, want %q", se.Caret(), want)
	}
}

func TestParseGatesValues(t *testing.T) {
	g, err := ParseGates(" ttft.mape < 15% , e2e.real_p99<=1.5s, tpot.p50_error>-2ms, r>0.9, grade>=GOOD, valid=true ,goodput.Critical.sim_slo_attainment>=0.9", []string{"ttft", "itl"})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		scope, metric, class, key, op string
		num                           float64
	}
	wants := []want{
		{"metric", "ttft", "", "mape", "<", 0.15},
		{"metric", "e2e", "", "real_p99", "<=", 1.5e6},
		{"metric", "tpot", "", "p50_error", ">", -2000},
		{"metric", "ttft", "", "pearson_r", ">", 0.9}, {"metric", "itl", "", "pearson_r", ">", 0.9},
		{"metric", "ttft", "", "grade", ">=", 0}, {"metric", "itl", "", "grade", ">=", 0},
		{"valid", "", "", "valid", "==", 0},
		{"goodput", "", "Critical", "sim_slo_attainment", ">=", 0.9},
	}
	if g.Len() != len(wants) {
		t.Fatalf("got %d gates, want %d: %+v", g.Len(), len(wants), g.list)
	}
	for i, w := range wants {
		x := g.list[i]
		if x.scope != w.scope || x.metric != w.metric || x.class != w.class || x.key != w.key || x.op != w.op || !near(x.num, w.num) {
			t.Errorf("gate %d = %+v, want %+v", i, x, w)
		}
	}
	if g.list[5].word != "good" || !g.list[7].boolVal || g.list[0].Text != "ttft.mape < 15%" || g.list[0].Column != 2 {
		t.Errorf("gate details: %+v / %+v / %+v", g.list[0], g.list[5], g.list[7])
	}
	empty, err := ParseGates("   ", nil)
	if err != nil || empty.Len() != 0 {
		t.Errorf("blank expression: %d gates, err %v", empty.Len(), err)
	}
}

func TestParseGateFlags(t *testing.T) {
	g, err := ParseGateFlags(GateFlags{FailUnder: "Good", MaxMAPE: "ttft=0.1,e2e=0.2", MinPearson: "0.9", GateMetrics: "ttft,tpot", Assert: "trace.unmatched_real==0"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range g.list {
		got = append(got, x.name()+x.op+x.word)
	}
	want := "ttft grade>=good|tpot grade>=good|ttft mape<=0.1|e2e mape<=0.2|ttft pearson_r>=0.9|tpot pearson_r>=0.9|trace unmatched_real==0"
	if strings.Join(got, "|") != want {
		t.Errorf("gates = %s\nwant    %s", strings.Join(got, "|"), want)
	}
	for _, bad := range []GateFlags{{FailUnder: "great"}, {MaxMAPE: "x"}, {MaxMAPE: "ttfb=0.1"}, {MinPearson: "high"}, {GateMetrics: "ttft,foo"}, {Assert: "ttft.mape<"}} {
		_, err := ParseGateFlags(bad)
		var ec interface{ ExitCode() int }
		if !errors.As(err, &ec) || ec.ExitCode() != 2 {
			t.Errorf("%+v: err = %v, want exit-code-2 error", bad, err)
		}
	}
	g, err = ParseGateFlags(GateFlags{MaxMAPE: "0.15"})
	if err != nil || g.Len() != 2 || g.list[0].metric != "ttft" || g.list[1].metric != "e2e" {
		t.Errorf("--max-mape 0.15 over default metrics: %+v, %v", g.list, err)
	}
}

func TestGateEvaluation(t *testing.T) {
	in := cleanRun(100)
	// sim 12% slow on every request: MAPE 0.12 on ttft and e2e, grade good.
	for i := range in.Sim {
		in.Sim[i].TTFTUs *= 1.12
		in.Sim[i].E2EUs *= 1.12
	}
	r := build(t, in, nil)
	ttftMAPE := r.Metrics[MetricTTFT].RequestLevel.MAPE
	if !near(ttftMAPE, 0.12) {
		t.Fatalf("ttft MAPE = %v, want 0.12", ttftMAPE)
	}
	tests := []struct {
		expr     string
		passed   bool
		failures []string
	}{
		{"ttft.mape<=0.1200001,e2e.pearson>0.9", true, nil},
		{"ttft.mape<0.1", false, []string{"ttft mape 0.12 is not below 0.1"}},
		{"grade>=excellent", false, []string{"ttft grade good is below excellent", "e2e grade good is below excellent"}},
		{"grade==good,grade!=poor,grade>fair,grade<excellent,grade<=good", true, nil},
		{"ttft.real_p50<=50ms", false, []string{"ttft real_p50 52.0 ms is above 50ms"}},
		{"itl.mape<0.2", false, []string{"itl mape fails (itl.mape<0.2): itl cannot be computed: no ITL data was given"}},
		{"goodput.critical.sim_slo_attainment>0.5", false, []string{"goodput critical sim_slo_attainment fails (goodput.critical.sim_slo_attainment>0.5): goodput class critical has no SLO targets"}},
		{"hit_rate.abs_error_pp<5", false, []string{"hit_rate abs_error_pp fails (hit_rate.abs_error_pp<5): the hit-rate verdict is absent (it needs observed_kv_metrics in the trace header and cache_hit_rate in the sim metrics)"}},
		{"valid==true,validity.saturated==false,trace.unmatched_real==0,tpot.count>=100", true, nil},
		{"trace.matched_pairs>100", false, []string{"trace matched_pairs 100 is not above 100"}},
	}
	for _, tt := range tests {
		g, err := ParseGates(tt.expr, nil)
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		rr := *r
		err = rr.ApplyGates(g)
		if rr.Gate == nil || rr.Gate.Passed != tt.passed || strings.Join(rr.Gate.Failures, "|") != strings.Join(tt.failures, "|") {
			t.Errorf("%q: gate %+v, want passed=%v failures %q", tt.expr, rr.Gate, tt.passed, tt.failures)
			continue
		}
		var ge *GateError
		if tt.passed != (err == nil) || (!tt.passed && (!errors.As(err, &ge) || ge.ExitCode() != 3)) {
			t.Errorf("%q: err = %v, want GateError with exit 3 iff failed", tt.expr, err)
		}
	}
	// The config verdict: absent without the simulation's deployment (the
	// gate fails), then a match, then a mismatch named in the failure.
	in.Header.Deployment = map[string]any{"model": "qwen3-14b", "max_num_seqs": 256}
	for _, tc := range []struct {
		sim      map[string]any
		expr     string
		passed   bool
		failures []string
	}{
		{nil, "config.match==true", false, []string{"config match fails (config.match==true): the config verdict is absent (it needs the simulation's deployment: replay's --metrics-out file as --sim-metrics)"}},
		{map[string]any{"model": "Qwen3-14B", "max_num_seqs": 256.0}, "config.match==true,config.mismatched==0", true, nil},
		{map[string]any{"model": "qwen3-14b", "max_num_seqs": 8.0}, "config.match==true,config.mismatched<1", false,
			[]string{"config match false is not true (max_num_seqs 256 (trace) vs 8 (sim))", "config mismatched 1 is not below 1 (max_num_seqs 256 (trace) vs 8 (sim))"}},
	} {
		cin := in
		cin.SimMetrics = nil
		if tc.sim != nil {
			cin.SimMetrics = &SimMetrics{Deployment: tc.sim}
		}
		cr := build(t, cin, nil)
		g, err := ParseGates(tc.expr, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = cr.ApplyGates(g)
		if cr.Gate.Passed != tc.passed || strings.Join(cr.Gate.Failures, "|") != strings.Join(tc.failures, "|") {
			t.Errorf("%q with sim %v: gate %+v, want passed=%v failures %q", tc.expr, tc.sim, cr.Gate, tc.passed, tc.failures)
		}
		var ge *GateError
		if !tc.passed && (!errors.As(err, &ge) || ge.ExitCode() != 3) {
			t.Errorf("%q: err %v, want a GateError (exit 3)", tc.expr, err)
		}
	}

	// No gates: no gate block, no error.
	rr := *r
	if err := rr.ApplyGates(Gates{}); err != nil || rr.Gate != nil {
		t.Errorf("empty gates: err %v gate %+v", err, rr.Gate)
	}
}
