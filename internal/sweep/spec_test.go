package sweep

import (
	"errors"
	"strings"
	"testing"
)

func texts(vs []Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Text
	}
	return strings.Join(parts, " ")
}

func TestRanges(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1..4", "1 2 3 4"},
		{"5..20:5", "5 10 15 20"},
		{"5..22:5", "5 10 15 20"},
		{"0.1..0.5:0.1", "0.1 0.2 0.3 0.4 0.5"},
		{"1..64*2", "1 2 4 8 16 32 64"},
		{"1..100*10", "1 10 100"},
		{"0.5..2*2", "0.5 1 2"},
		{"3..3", "3"},
	} {
		vals, ok, err := expandRange(tc.in, Pos{File: "f"}, "grid.x")
		if err != nil || !ok {
			t.Fatalf("%s: ok %v err %v", tc.in, ok, err)
		}
		if got := texts(vals); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{"../model.json", "H100", "a..b"} {
		if _, ok, err := expandRange(in, Pos{}, ""); ok || err != nil {
			t.Errorf("%q: read as a range (ok %v, err %v)", in, ok, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"4..1", "below the lower one"},
		{"1..4:0", "step must be positive"},
		{"1..4*1", "factor must exceed 1"},
		{"0..4*2", "positive lower bound"},
		{"1..x", "upper bound \"x\" is not a number"},
		{"1..4:y", "\"y\" is not a number"},
		{"1..1000000", "at most 10000"},
	} {
		_, _, err := expandRange(tc.in, Pos{File: "s.yaml", Line: 3, Col: 9}, "grid.rate")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "s.yaml:3:9: grid.rate: ") {
			t.Errorf("%s: got %v, want s.yaml:3:9: grid.rate: ...%s", tc.in, err, tc.want)
		}
	}
}

func TestGridFlag(t *testing.T) {
	ax, err := ParseGridFlag("num-instances=1,2, 4..8*2")
	if err != nil {
		t.Fatal(err)
	}
	if ax.Key != "num_instances" || texts(ax.Values) != "1 2 4 8" {
		t.Errorf("got %s = %s, want num_instances = 1 2 4 8", ax.Key, texts(ax.Values))
	}
	ax, err = ParseGridFlag(`routing_scorers=["prefix-affinity:3,queue-depth:2", queue-depth:1]`)
	if err != nil {
		t.Fatal(err)
	}
	if len(ax.Values) != 2 || ax.Values[0].Text != "prefix-affinity:3,queue-depth:2" || ax.Values[1].Text != "queue-depth:1" {
		t.Errorf("flow list: got %q", texts(ax.Values))
	}
	ax, err = ParseGridFlag("alpha_coeffs=[[1, 2], [3, 4]]")
	if err != nil {
		t.Fatal(err)
	}
	if len(ax.Values) != 2 || ax.Values[1].Text != "[3, 4]" {
		t.Errorf("list values: got %q", texts(ax.Values))
	}
	for _, tc := range []struct{ in, want string }{
		{"rate", "--grid: \"rate\": want KEY=VALUES"},
		{"rate=1,,3", "--grid: column 8: rate: empty value"},
		{"rate=1,4..2", "--grid: column 8: rate: range \"4..2\""},
		{"Rate=1", "--grid: column 1: grid: key \"Rate\""},
		{"rate=[1, 2", "--grid: column 6: rate: \"[1, 2\" is not a YAML flow list"},
	} {
		if _, err := ParseGridFlag(tc.in); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}

func TestDecodeSpec(t *testing.T) {
	src := `grid:
  num_instances: 1..3
  gpu: [H100, A100-80]
  alpha_coeffs: [[1, 2, 3]]
slo: "ttft.p99<500ms, itl.p99<50ms"
find: min-cost
precision: 2%
prices:
  H100: 2.49
  B200: 6
`
	s, err := DecodeSpec("s.yaml", []byte(src), NewSpec())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Axes) != 3 || texts(s.Axes[0].Values) != "1 2 3" || texts(s.Axes[1].Values) != "H100 A100-80" || texts(s.Axes[2].Values) != "[1, 2, 3]" {
		t.Errorf("axes: got %+v", s.Axes)
	}
	if got := s.Axes[1].Values[1].Pos.String(); got != "s.yaml:3:15" {
		t.Errorf("position of A100-80: got %s, want s.yaml:3:17", got)
	}
	if s.SLO.String() != "ttft.p99<500ms,itl.p99<50ms" || s.Find != FindMinCost || s.Precision != 0.02 {
		t.Errorf("slo %q find %q precision %v", s.SLO, s.Find, s.Precision)
	}
	if p, _ := s.Prices.Lookup("h100"); p.USDPerHour != 2.49 || p.Source != "s.yaml" {
		t.Errorf("H100 price: got %+v, want 2.49 from s.yaml", p)
	}
	if p, _ := s.Prices.Lookup("L40S"); p.USDPerHour != 1.95 {
		t.Errorf("L40S keeps its built-in price: got %+v", p)
	}
	if _, ok := s.Prices.Lookup("B200"); !ok {
		t.Error("B200 was not added")
	}
	if _, err := s.Check("rate"); err != nil {
		t.Errorf("check: %v", err)
	}
}

// Bad sweep files name file:line:column and the field.
func TestDecodeSpecErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"grid:\n  rate: 5..1\n", "s.yaml:2:9: grid.rate: range \"5..1\": the upper bound is below the lower one"},
		{"grid:\n  rate: []\n", "s.yaml:2:9: grid.rate: no values"},
		{"grid:\n  rate: {from: 1}\n", "s.yaml:2:9: grid.rate: want a value, a list of values, or a range"},
		{"grid:\n  rate: [1, {a: 2}]\n", "s.yaml:2:13: grid.rate: a value must be a scalar"},
		{"grid:\n  Rate: 1\n", "s.yaml:2:3: grid: key \"Rate\""},
		{"grid:\n  Num Instances: 1\n", "s.yaml:2:3: grid: key \"Num Instances\": keys are lower case with underscores (did you mean \"num_instances\"?)"},
		{"grid:\n  fleet..max_nodes: 1\n", "s.yaml:2:3: grid: key \"fleet..max_nodes\": keys are lower case with underscores (did you mean \"fleet_max_nodes\"?)"},
		{"grid:\n  fleet.Max: 1\n", "s.yaml:2:3: grid: key \"fleet.Max\": keys are lower case"},
		{"grid: 3\n", "s.yaml:1:7: grid: want a map"},
		{"grids:\n  rate: 1\n", "s.yaml:1:1: unknown key \"grids\" (did you mean \"grid\"?)"},
		{"slo: ttft.p99<500\n", "s.yaml:1:18: slo: 500: give the unit of the bound: us, ms or s"},
		{"slo: ttft.p99<5m\n", "s.yaml:1:16: slo: unknown unit \"m\" after 5"},
		{"slo: ttft.p99>5ms\n", "s.yaml:1:14: slo: \">\": a latency bound is an upper bound"},
		{"slo: tft.p99<5ms\n", "s.yaml:1:6: slo: unknown metric \"tft\""},
		{"slo: 'ttft.p99<5ms, itl.p42<1ms'\n", "s.yaml:1:25: slo: unknown statistic \"p42\" of itl"},
		{"precision: 90%\n", "s.yaml:1:12: precision: \"90%\""},
		{"prices:\n  H100: cheap\n", "s.yaml:2:9: prices.H100: \"cheap\" is not a number"},
		{"prices:\n  H100: -1\n", "s.yaml:2:9: prices.H100: -1 USD per GPU-hour: want a finite price in [0, 1e+06]"},
		{"find: a\nfind: b\n", "s.yaml:2:1: key \"find\" is given twice (first on line 1)"},
		{"find: a\n  b: 2\n", "s.yaml:2: yaml syntax: mapping values are not allowed in this context"},
		{"- 1\n", "s.yaml:1:1: want a mapping of grid, slo, find, precision and prices, got a list"},
		{"", "s.yaml: the sweep file is empty"},
		{"grid:\n  rate: [1, 2, 1]\n", "s.yaml:2:16: grid.rate: value 1 appears twice (first at s.yaml:2:10)"},
		{"grid:\n  num_instances: [1, 01]\n", "s.yaml:2:22: grid.num_instances: value 01 is 1 again (first at s.yaml:2:19)"},
		{"grid:\n  rate: [1000, 1e3]\n", "s.yaml:2:16: grid.rate: value 1e3 is 1000 again (first at s.yaml:2:10)"},
		{"grid:\n  rate: [0.5, .5]\n", "s.yaml:2:15: grid.rate: value .5 is 0.5 again (first at s.yaml:2:10)"},
		{"grid:\n  rate: 1\nfind: [min-cost]\nslo: ttft.p99<1s\n", "s.yaml:3:7: find: want max-rate, min-cost, min-gpus or min-shed, got a list"},
		{"grid:\n  rate: 1\nslo: [ttft.p99<1s]\n", "s.yaml:3:6: slo: want an SLO such as 'ttft.p99<500ms', got a list"},
		{"grid:\n  rate: 1\nslo: {ttft.p99: 1s}\n", "s.yaml:3:6: slo: want an SLO such as 'ttft.p99<500ms', got a mapping"},
		{"grid:\n  rate: 1\nfind:\nslo: ttft.p99<1s\n", "s.yaml:3:6: find: want max-rate, min-cost, min-gpus or min-shed, got nothing"},
		{"precision: [1%]\n", "s.yaml:1:12: precision: want a relative precision such as 1%, got a list"},
		{"grid:\n  [rate]: 1\n", "s.yaml:2:3: grid: a key must be a name such as num_instances, got a list"},
		{"grid:\n  rate: 1\n---\nfind: min-cost\n", "s.yaml:3:1: more than one YAML document"},
	} {
		s, err := DecodeSpec("s.yaml", []byte(tc.src), NewSpec())
		if err == nil {
			_, err = s.Check("rate")
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
			continue
		}
		var ie *InputError
		if !errors.As(err, &ie) || ie.ExitCode() != 2 {
			t.Errorf("%q: %T is not an input error with exit code 2", tc.src, err)
		}
	}
}

// An empty grid, a question without an SLO, or a max-rate search over a
// rate axis are clear messages.
func TestSpecCheck(t *testing.T) {
	s := NewSpec()
	if _, err := s.Check("rate"); err == nil || !strings.Contains(err.Error(), "the grid is empty") {
		t.Errorf("empty grid: got %v", err)
	}
	s.SetFind(FindMaxRate)
	if _, err := s.Check("rate"); err == nil || !strings.Contains(err.Error(), "needs an SLO") {
		t.Errorf("max-rate without SLO: got %v", err)
	}
	s.SLO, _ = ParseSLO("ttft.p99<1s")
	g, err := s.Check("rate")
	if err != nil || g.Len() != 1 {
		t.Errorf("max-rate of the base deployment: %v, %d cases", err, g.Len())
	}
	ax, _ := ParseGridFlag("rate=1,2")
	s.Axes = []Axis{ax}
	if _, err := s.Check("rate"); err == nil || !strings.Contains(err.Error(), "remove rate from the grid") {
		t.Errorf("max-rate over rate: got %v", err)
	}
	s.SetFind("cheapest")
	if _, err := s.Check("rate"); err == nil || !strings.HasPrefix(err.Error(), "--find: find: \"cheapest\"") {
		t.Errorf("unknown question: got %v", err)
	}
}

func TestGrid(t *testing.T) {
	a, _ := ParseGridFlag("a=1,2")
	b, _ := ParseGridFlag("b=x,y,z")
	g, err := NewGrid([]Axis{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 6 {
		t.Fatalf("len %d, want 6", g.Len())
	}
	var got []string
	for k := 0; k < g.Len(); k++ {
		got = append(got, ParamText(g.Params(g.Case(k))))
	}
	want := "a=1 b=x|a=1 b=y|a=1 b=z|a=2 b=x|a=2 b=y|a=2 b=z"
	if strings.Join(got, "|") != want {
		t.Errorf("cases: got %s, want %s", strings.Join(got, "|"), want)
	}
	if _, err := NewGrid([]Axis{a, a}); err == nil || !strings.Contains(err.Error(), "swept twice") {
		t.Errorf("duplicate key: got %v", err)
	}
	big, _ := ParseGridFlag("x=1..10000")
	if _, err := NewGrid([]Axis{big, {Key: "y", Values: big.Values}}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a grid beyond MaxCases: got %v", err)
	}
}

// A key may be names joined by dots (a runner's fleet.* keys).
func TestDottedGridKey(t *testing.T) {
	s, err := DecodeSpec("s.yaml", []byte("grid:\n  fleet.autoscaler.max_replicas: [2, 4]\n"), NewSpec())
	if err != nil || len(s.Axes) != 1 || s.Axes[0].Key != "fleet.autoscaler.max_replicas" || len(s.Axes[0].Values) != 2 {
		t.Fatalf("spec %+v, %v", s.Axes, err)
	}
	ax, err := ParseGridFlag("fleet.node_pools.max_nodes=4..6")
	if err != nil || ax.Key != "fleet.node_pools.max_nodes" || len(ax.Values) != 3 {
		t.Fatalf("flag %+v, %v", ax, err)
	}
}
