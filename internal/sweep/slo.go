package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLOGrammar documents the SLO language, for --help.
const SLOGrammar = `An SLO is a comma-separated list of latency bounds; every one must hold.

  slo    = bound { "," bound }
  bound  = [ class ":" ] metric "." stat ( "<" | "<=" ) number unit
  metric = ttft | tpot | itl | e2e
  stat   = mean | p50 | p90 | p95 | p99
  unit   = us | ms | s

ttft is the time to the first token, tpot the mean time per output token of a
request, itl the gap between two tokens (its percentiles over every gap), e2e
the whole request. Example: ttft.p99<500ms,itl.p99<50ms. A bound that starts
with an SLO class (a tier: critical, standard, ...) holds for that class's
requests alone, with ttft.p99, itl.mean or e2e.p99: critical:ttft.p99<1s.`

// Metrics and stats of the SLO language, in table order.
var (
	sloMetrics = []string{"ttft", "tpot", "itl", "e2e"}
	sloStats   = []string{"mean", "p50", "p90", "p95", "p99"}
)

// Clause is one bound of an SLO.
type Clause struct {
	Class   string  // the SLO class it bounds; "" = every request
	Metric  string  // ttft, tpot, itl, e2e
	Stat    string  // mean, p50, p90, p95, p99
	Op      string  // < or <=
	LimitMs float64 // the bound, ms
	Text    string  // as written
}

// Name is [class:]metric.stat, e.g. ttft.p99 or critical:ttft.p99.
func (c Clause) Name() string {
	if c.Class != "" {
		return c.Class + ":" + c.Metric + "." + c.Stat
	}
	return c.Metric + "." + c.Stat
}

// Holds reports whether v (ms) satisfies the bound.
func (c Clause) Holds(v float64) bool {
	if c.Op == "<=" {
		return v <= c.LimitMs
	}
	return v < c.LimitMs
}

// SLO is a parsed service-level objective; the zero value has no bound.
type SLO struct {
	Text    string   `json:"-"`
	Clauses []Clause `json:"-"`
}

// Empty reports whether the SLO has no bound.
func (s SLO) Empty() bool { return len(s.Clauses) == 0 }

// String is the SLO in a canonical form: its bounds as written, joined by
// commas.
func (s SLO) String() string {
	parts := make([]string, len(s.Clauses))
	for i, c := range s.Clauses {
		parts[i] = c.Text
	}
	return strings.Join(parts, ",")
}

// Primary is the latency the SLO is mostly about (its first bound), which
// the knee, the Pareto front and the plots follow; ttft.p99 without an SLO.
func (s SLO) Primary() (metric, stat string) {
	if s.Empty() {
		return "ttft", "p99"
	}
	return s.Clauses[0].Metric, s.Clauses[0].Stat
}

// RequestTargets are the per-request bounds (ms, 0 = none) that make a
// request count toward goodput (DistServe's definition: the requests that
// meet every bound): the tightest bound on each of TTFT, the request's
// mean inter-token time (from tpot and itl bounds) and E2E. A class bound
// bounds a class's statistic, not each request: it sets no target.
func (s SLO) RequestTargets() (ttftMs, itlMs, e2eMs float64) {
	tight := func(cur, v float64) float64 {
		if cur == 0 || v < cur {
			return v
		}
		return cur
	}
	for _, c := range s.Clauses {
		if c.Class != "" {
			continue
		}
		switch c.Metric {
		case "ttft":
			ttftMs = tight(ttftMs, c.LimitMs)
		case "tpot", "itl":
			itlMs = tight(itlMs, c.LimitMs)
		case "e2e":
			e2eMs = tight(e2eMs, c.LimitMs)
		}
	}
	return ttftMs, itlMs, e2eMs
}

// ParseSLO reads an SLO (SLOGrammar) given by a flag; errors name the
// column. The empty string is no SLO.
func ParseSLO(s string) (SLO, error) { return parseSLO(s, Pos{File: "--slo", Col: 1}) }

// parseSLO reads an SLO whose first character is at pos.
func parseSLO(s string, pos Pos) (SLO, error) {
	out := SLO{Text: strings.TrimSpace(s)}
	if out.Text == "" {
		return out, nil
	}
	off := 0
	for _, part := range strings.Split(s, ",") {
		at := pos
		at.Col += off + leadingSpace(part)
		off += len(part) + 1
		c, err := parseClause(strings.TrimSpace(part), at)
		if err != nil {
			return SLO{}, err
		}
		out.Clauses = append(out.Clauses, c)
	}
	return out, nil
}

func parseClause(t string, at Pos) (Clause, error) {
	if t == "" {
		return Clause{}, inputErr(at, "slo", "empty bound (want e.g. ttft.p99<500ms)")
	}
	i := strings.IndexAny(t, "<>=!")
	if i < 0 {
		return Clause{}, inputErr(at, "slo", "%q has no comparison (want e.g. ttft.p99<500ms)", t)
	}
	subject := strings.TrimSpace(t[:i])
	class, mAt := "", at
	if k := strings.IndexByte(subject, ':'); k >= 0 {
		class = strings.TrimSpace(subject[:k])
		if class == "" {
			return Clause{}, inputErr(at, "slo", "%q: give the SLO class before the colon, e.g. critical:ttft.p99<1s", t)
		}
		subject = strings.TrimSpace(subject[k+1:])
		mAt = at.shift(k + 1)
	}
	metric, stat, _ := strings.Cut(strings.ToLower(subject), ".")
	if !contains(sloMetrics, metric) {
		return Clause{}, inputErr(mAt, "slo", "unknown metric %q (want %s)", metric, strings.Join(sloMetrics, ", "))
	}
	if !contains(sloStats, stat) {
		return Clause{}, inputErr(mAt.shift(len(metric)+1), "slo", "unknown statistic %q of %s (want %s)", stat, metric, strings.Join(sloStats, ", "))
	}
	if class != "" && !contains(classStats, metric+"."+stat) {
		return Clause{}, inputErr(mAt, "slo", "a class bound takes %s, not %s.%s", strings.Join(classStats, ", "), metric, stat)
	}
	op := t[i : i+1]
	if i+1 < len(t) && t[i+1] == '=' {
		op += "="
	}
	if op != "<" && op != "<=" {
		return Clause{}, inputErr(at.shift(i), "slo", "%q: a latency bound is an upper bound: use < or <=", op)
	}
	rest := strings.TrimSpace(t[i+len(op):])
	restAt := at.shift(len(t) - len(rest))
	j := 0
	for j < len(rest) && strings.IndexByte("0123456789.eE+-", rest[j]) >= 0 {
		j++
	}
	num, err := strconv.ParseFloat(rest[:j], 64)
	if j == 0 || err != nil {
		return Clause{}, inputErr(restAt, "slo", "%q: want a number with a unit, e.g. 500ms", rest)
	}
	unit := strings.TrimSpace(rest[j:])
	scale, ok := map[string]float64{"us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1e3}[unit]
	switch {
	case unit == "":
		return Clause{}, inputErr(restAt.shift(j), "slo", "%s: give the unit of the bound: us, ms or s", rest[:j])
	case !ok:
		return Clause{}, inputErr(restAt.shift(j), "slo", "unknown unit %q after %s (want us, ms or s)", unit, rest[:j])
	}
	ms := num * scale
	if !(ms > 0) || math.IsInf(ms, 0) {
		return Clause{}, inputErr(restAt, "slo", "the bound %s%s must be positive and finite", rest[:j], unit)
	}
	return Clause{Class: class, Metric: metric, Stat: stat, Op: op, LimitMs: ms, Text: t}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Check evaluates the SLO on a row: met is true when every bound holds.
// A row without latencies (an unstable or failed case) never meets it.
// The failures say which bounds broke, e.g. "ttft.p99 612ms > 500ms".
func (s SLO) Check(r *Row) (met bool, failures []string) {
	if r.Status != StatusOK {
		return false, []string{r.Status}
	}
	for _, c := range s.Clauses {
		v, ok := r.Latency(c.Metric, c.Stat)
		if c.Class != "" {
			v, ok = r.ClassLatency(c.Class, c.Metric, c.Stat)
		}
		switch {
		case !ok:
			failures = append(failures, c.Name()+" not measured")
		case !c.Holds(v):
			rel := ">"
			if c.Op == "<" && v == c.LimitMs {
				rel = "="
			}
			failures = append(failures, fmt.Sprintf("%s %s %s %s", c.Name(), fmtMs(v), rel, fmtMs(c.LimitMs)))
		}
	}
	return len(failures) == 0, failures
}

// fmtMs renders a latency in ms with three significant digits in ms or s.
func fmtMs(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'g', 3, 64) + "s"
	}
	return strconv.FormatFloat(ms, 'g', 3, 64) + "ms"
}
