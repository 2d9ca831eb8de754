package report

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"servesim/internal/exitcode"
)

// GateGrammar documents the gate expression language, for --help.
const GateGrammar = `A gate expression is a comma-separated list of comparisons; every one must hold.

  gates    = gate { "," gate }
  gate     = subject op value
  op       = "<" | "<=" | ">" | ">=" | "==" | "!=" | "="      ("=" means "==")
  subject  = [metric "."] stat            metric: ttft, e2e, itl, tpot
           | "trace." count               num_requests, matched_pairs, token_mismatches, ...
           | "goodput." class "." key     real_slo_attainment, sim_slo_attainment,
                                          real_goodput_rps, sim_goodput_rps, attainment_error
           | "hit_rate." key              abs_error_pp, real_hit_rate, sim_hit_rate, within
           | "validity." check            saturated, client_lagged, truncated, warm_cache,
                                          cold_start (true when flagged)
           | "valid"                      true when no validity check is flagged
           | "config." key                match (true when no deployment key the trace
                                          states differs in the simulation), mismatched
                                          (the number that differ)
  stat     = mape | pearson (r) | grade (quality) | count (n)
           | real_|sim_ mean|median|p50|p90|p95|p99 | <those>_error | <those>_percent_error
  value    = number [unit] | grade | true | false
  unit     = "%" (fractions: 15% = 0.15) | us | ms | s (latencies, which are in us)

A stat without a metric applies to every gated metric (--gate-metrics, default ttft,e2e).
Grades rank poor < fair < good < excellent. A gate whose value cannot be computed
(itl without ITL data, an absent goodput class, a check not assessed) fails.

Example: ttft.mape<0.15,e2e.pearson>0.9,grade>=good,valid==true,config.match==true`

// value kinds a subject can have; they decide which literals and units apply.
type valueKind int

const (
	kindFraction valueKind = iota // 0..1, accepts %
	kindLatency                   // µs, accepts us/ms/s
	kindPlain                     // any number, no unit
	kindGrade
	kindBool
)

// Gate is one parsed comparison, already resolved to one value of the report.
type Gate struct {
	Text    string // the clause as written
	Column  int    // 1-based column of the clause in the expression
	scope   string // metric, trace, goodput, hit_rate, validity, valid
	metric  string
	class   string
	key     string
	op      string
	kind    valueKind
	num     float64
	word    string // the value as written
	boolVal bool
}

// Gates is a parsed set of gates; the zero value has none.
type Gates struct{ list []Gate }

// Len is the number of resolved comparisons.
func (g Gates) Len() int { return len(g.list) }

// Merge returns the gates of both sets.
func (g Gates) Merge(o Gates) Gates {
	return Gates{list: append(append([]Gate(nil), g.list...), o.list...)}
}

// GateSyntaxError is a malformed gate expression; Column is 1-based, in runes.
type GateSyntaxError struct {
	Expr   string
	Column int
	Msg    string
}

func (e *GateSyntaxError) Error() string {
	return fmt.Sprintf("gate %q: column %d: %s", e.Expr, e.Column, e.Msg)
}

// ExitCode is 2: bad usage.
func (e *GateSyntaxError) ExitCode() int { return exitcode.Usage }

// Caret shows the expression with a caret under the offending column.
func (e *GateSyntaxError) Caret() string {
	return e.Expr + "\n" + strings.Repeat(" ", max(e.Column-1, 0)) + "^"
}

// DefaultGateMetrics are the metrics a bare stat applies to (docs/calibrate.md §12).
func DefaultGateMetrics() []string { return []string{MetricTTFT, MetricE2E} }

func isMetric(s string) bool {
	switch s {
	case MetricTTFT, MetricE2E, MetricITL, MetricTPOT:
		return true
	}
	return false
}

// ParseGateMetrics parses a --gate-metrics list such as "ttft,e2e,itl".
func ParseGateMetrics(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return DefaultGateMetrics(), nil
	}
	var out []string
	for _, m := range strings.Split(list, ",") {
		m = strings.TrimSpace(m)
		if !isMetric(m) {
			return nil, inputErrorf("report: --gate-metrics %q: unknown metric %q (want ttft, e2e, itl or tpot)", list, m)
		}
		out = append(out, m)
	}
	return out, nil
}

// ParseGates parses a gate expression (GateGrammar). Bare stats expand over
// gateMetrics (nil means DefaultGateMetrics). An empty expression has no gates.
// Errors are *GateSyntaxError.
func ParseGates(expr string, gateMetrics []string) (Gates, error) {
	if gateMetrics == nil {
		gateMetrics = DefaultGateMetrics()
	}
	p := &gateParser{src: []rune(expr), expr: expr}
	var g Gates
	p.skipSpace()
	if p.eof() {
		return g, nil
	}
	for {
		gs, err := p.clause(gateMetrics)
		if err != nil {
			return Gates{}, err
		}
		g.list = append(g.list, gs...)
		p.skipSpace()
		if p.eof() {
			return g, nil
		}
		if p.src[p.pos] != ',' {
			return Gates{}, p.errAt(p.pos, "expected ',' between gates, got %q", string(p.src[p.pos]))
		}
		p.pos++
		p.skipSpace()
		if p.eof() {
			return Gates{}, p.errAt(p.pos, "expected a gate after ','")
		}
	}
}

type gateParser struct {
	src  []rune
	expr string
	pos  int
}

func (p *gateParser) eof() bool { return p.pos >= len(p.src) }

func (p *gateParser) skipSpace() {
	for !p.eof() && unicode.IsSpace(p.src[p.pos]) {
		p.pos++
	}
}

func (p *gateParser) errAt(pos int, format string, a ...any) error {
	return &GateSyntaxError{Expr: p.expr, Column: pos + 1, Msg: fmt.Sprintf(format, a...)}
}

func isSubjectRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.'
}

// segment is one dot-separated part of a subject, with its position.
type segment struct {
	text string // lower case, for keywords
	raw  string // as written (goodput class names keep their case)
	pos  int
}

func (p *gateParser) clause(gateMetrics []string) ([]Gate, error) {
	start := p.pos
	for !p.eof() && isSubjectRune(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return nil, p.errAt(start, "expected a gate such as ttft.mape<0.15, got %q", string(p.src[start]))
	}
	var segs []segment
	segStart := start
	for i := start; i <= p.pos; i++ {
		if i == p.pos || p.src[i] == '.' {
			if i == segStart {
				return nil, p.errAt(i, "empty name in %q", string(p.src[start:p.pos]))
			}
			raw := string(p.src[segStart:i])
			segs = append(segs, segment{text: strings.ToLower(raw), raw: raw, pos: segStart})
			segStart = i + 1
		}
	}
	subjectEnd := p.pos
	p.skipSpace()
	opPos := p.pos
	op := p.op()
	if op == "" {
		got := "end of expression"
		if !p.eof() {
			got = strconv.Quote(string(p.src[p.pos]))
		}
		return nil, p.errAt(opPos, "expected a comparison (<, <=, >, >=, ==, !=) after %q, got %s", string(p.src[start:subjectEnd]), got)
	}
	p.skipSpace()
	valPos := p.pos
	for !p.eof() && p.src[p.pos] != ',' && !unicode.IsSpace(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == valPos {
		return nil, p.errAt(valPos, "expected a value after %q", op)
	}
	value := string(p.src[valPos:p.pos])
	text := strings.TrimSpace(string(p.src[start:p.pos]))

	templates, err := p.resolve(segs, gateMetrics)
	if err != nil {
		return nil, err
	}
	out := make([]Gate, 0, len(templates))
	for _, g := range templates {
		g.Text, g.Column, g.op, g.word = text, start+1, op, value
		if err := p.parseValue(&g, value, valPos, opPos); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func (p *gateParser) op() string {
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">", "="} {
		r := []rune(op)
		if p.pos+len(r) <= len(p.src) && string(p.src[p.pos:p.pos+len(r)]) == op {
			p.pos += len(r)
			if op == "=" {
				return "=="
			}
			return op
		}
	}
	return ""
}

// parseValue reads the literal for g's kind, with its unit.
func (p *gateParser) parseValue(g *Gate, value string, pos, opPos int) error {
	switch g.kind {
	case kindGrade:
		v := strings.ToLower(value)
		if gradeRank(v) < 0 {
			return p.errAt(pos, "%s compares with a grade (poor, fair, good, excellent), not %q", g.name(), value)
		}
		g.word = v
		return nil
	case kindBool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return p.errAt(pos, "%s compares with true or false, not %q", g.name(), value)
		}
		if g.op != "==" && g.op != "!=" {
			return p.errAt(opPos, "%s is true or false: use == or !=, not %s", g.name(), g.op)
		}
		g.boolVal = b
		return nil
	}
	numEnd := numberPrefix(value)
	if numEnd == 0 {
		return p.errAt(pos, "%s compares with a number, not %q", g.name(), value)
	}
	num, err := strconv.ParseFloat(value[:numEnd], 64)
	if err != nil || !isFinite(num) {
		return p.errAt(pos, "bad number %q", value[:numEnd])
	}
	unit := value[numEnd:]
	unitPos := pos + len([]rune(value[:numEnd]))
	scale := 1.0
	switch {
	case unit == "":
	case unit == "%" && g.kind == kindFraction:
		scale = 0.01
	case g.kind == kindLatency && (unit == "us" || unit == "µs"):
	case g.kind == kindLatency && unit == "ms":
		scale = 1e3
	case g.kind == kindLatency && unit == "s":
		scale = 1e6
	case g.kind == kindFraction:
		return p.errAt(unitPos, "unit %q does not fit %s, a fraction (write 0.15 or 15%%)", unit, g.name())
	case g.kind == kindLatency:
		return p.errAt(unitPos, "unit %q does not fit %s, a latency (write us, ms or s)", unit, g.name())
	default:
		return p.errAt(unitPos, "%s is a plain number; unit %q does not apply", g.name(), unit)
	}
	g.num = num * scale
	return nil
}

// numberPrefix returns the length of the leading decimal number of s.
func numberPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		if s[i] != '.' {
			digits++
		}
		i++
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// metricStatKind gives the kind of a per-metric stat, and its canonical name.
func metricStatKind(stat string) (string, valueKind, bool) {
	switch stat {
	case "mape":
		return "mape", kindFraction, true
	case "pearson", "pearson_r", "r":
		return "pearson_r", kindPlain, true
	case "grade", "quality":
		return "grade", kindGrade, true
	case "count", "n":
		return "count", kindPlain, true
	}
	if _, ok := workloadField(&WorkloadLevel{}, stat); ok {
		if strings.HasSuffix(stat, "_percent_error") {
			return stat, kindFraction, true
		}
		return stat, kindLatency, true
	}
	return "", 0, false
}

func traceKeys() []string {
	return []string{"num_requests", "warm_up_excluded", "matched_pairs", "token_mismatches", "itl_dropped",
		"excluded_non_ok", "invalid_timing", "unmatched_real", "unmatched_sim"}
}

func goodputKeys() []string {
	return []string{"real_slo_attainment", "sim_slo_attainment", "real_goodput_rps", "sim_goodput_rps", "attainment_error"}
}

func checkNames() []string {
	return []string{CheckSaturated, CheckClientLagged, CheckTruncated, CheckWarmCache, CheckColdStart}
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// resolve maps subject segments to gate templates (one per metric for bare stats).
func (p *gateParser) resolve(segs []segment, gateMetrics []string) ([]Gate, error) {
	head := segs[0]
	want := func(n int, what string) error {
		if len(segs) == n {
			return nil
		}
		if len(segs) < n {
			last := segs[len(segs)-1]
			return p.errAt(last.pos+len([]rune(last.text)), "%s needs %s", head.text, what)
		}
		return p.errAt(segs[n].pos, "unexpected %q after %s", segs[n].text, what)
	}
	switch {
	case isMetric(head.text):
		if err := want(2, "a statistic, as in "+head.text+".mape"); err != nil {
			return nil, err
		}
		key, kind, ok := metricStatKind(segs[1].text)
		if !ok {
			return nil, p.errAt(segs[1].pos, "unknown statistic %q (want mape, pearson, grade, count, or a workload key such as p99_percent_error)", segs[1].text)
		}
		return []Gate{{scope: "metric", metric: head.text, key: key, kind: kind}}, nil
	case head.text == "trace":
		if err := want(2, "a count, as in trace.token_mismatches"); err != nil {
			return nil, err
		}
		if !oneOf(segs[1].text, traceKeys()) {
			return nil, p.errAt(segs[1].pos, "unknown trace count %q (want %s)", segs[1].text, strings.Join(traceKeys(), ", "))
		}
		return []Gate{{scope: "trace", key: segs[1].text, kind: kindPlain}}, nil
	case head.text == "goodput":
		if err := want(3, "a class and a key, as in goodput.critical.sim_slo_attainment"); err != nil {
			return nil, err
		}
		if !oneOf(segs[2].text, goodputKeys()) {
			return nil, p.errAt(segs[2].pos, "unknown goodput key %q (want %s)", segs[2].text, strings.Join(goodputKeys(), ", "))
		}
		kind := kindFraction
		if strings.HasSuffix(segs[2].text, "_rps") {
			kind = kindPlain
		}
		return []Gate{{scope: "goodput", class: segs[1].raw, key: segs[2].text, kind: kind}}, nil
	case head.text == "hit_rate":
		if err := want(2, "a key, as in hit_rate.abs_error_pp"); err != nil {
			return nil, err
		}
		switch segs[1].text {
		case "abs_error_pp":
			return []Gate{{scope: "hit_rate", key: segs[1].text, kind: kindPlain}}, nil
		case "real_hit_rate", "sim_hit_rate":
			return []Gate{{scope: "hit_rate", key: segs[1].text, kind: kindFraction}}, nil
		case "within":
			return []Gate{{scope: "hit_rate", key: segs[1].text, kind: kindBool}}, nil
		}
		return nil, p.errAt(segs[1].pos, "unknown hit_rate key %q (want abs_error_pp, real_hit_rate, sim_hit_rate, within)", segs[1].text)
	case head.text == "validity":
		if err := want(2, "a check, as in validity.saturated"); err != nil {
			return nil, err
		}
		if !oneOf(segs[1].text, checkNames()) {
			return nil, p.errAt(segs[1].pos, "unknown validity check %q (want %s)", segs[1].text, strings.Join(checkNames(), ", "))
		}
		return []Gate{{scope: "validity", key: segs[1].text, kind: kindBool}}, nil
	case head.text == "valid":
		if err := want(1, "valid"); err != nil {
			return nil, err
		}
		return []Gate{{scope: "valid", key: "valid", kind: kindBool}}, nil
	case head.text == "config":
		if err := want(2, "a key, as in config.match"); err != nil {
			return nil, err
		}
		switch segs[1].text {
		case "match":
			return []Gate{{scope: "config", key: "match", kind: kindBool}}, nil
		case "mismatched":
			return []Gate{{scope: "config", key: "mismatched", kind: kindPlain}}, nil
		}
		return nil, p.errAt(segs[1].pos, "unknown config key %q (want match, mismatched)", segs[1].text)
	}
	if key, kind, ok := metricStatKind(head.text); ok {
		if err := want(1, head.text); err != nil {
			return nil, err
		}
		out := make([]Gate, 0, len(gateMetrics))
		for _, m := range gateMetrics {
			out = append(out, Gate{scope: "metric", metric: m, key: key, kind: kind})
		}
		return out, nil
	}
	return nil, p.errAt(head.pos, "unknown name %q (want a metric ttft, e2e, itl, tpot; trace, goodput, hit_rate, validity, valid, config; or a statistic such as mape or grade)", head.text)
}

// name is how messages call the gate's subject: "ttft mape", "trace matched_pairs".
func (g *Gate) name() string {
	switch g.scope {
	case "metric":
		return g.metric + " " + g.key
	case "goodput":
		return "goodput " + g.class + " " + g.key
	case "valid":
		return "valid"
	}
	return g.scope + " " + g.key
}

// GateFlags are the gate flags of docs/calibrate.md §12 (--assert and its shorthands), as the
// command line gives them; "" means unset.
type GateFlags struct {
	Assert      string // expression in GateGrammar
	FailUnder   string // grade
	MaxMAPE     string // "0.15" or "ttft=0.1,e2e=0.2"
	MinPearson  string // "0.9"
	GateMetrics string // "ttft,e2e" when empty
}

// ParseGateFlags turns the gate flags into one set of gates: --fail-under G is
// grade>=G, --max-mape X is mape<=X (per metric with the name=X form),
// --min-pearson R is pearson>=R, each over the gate metrics; --assert is parsed as is.
func ParseGateFlags(f GateFlags) (Gates, error) {
	metrics, err := ParseGateMetrics(f.GateMetrics)
	if err != nil {
		return Gates{}, err
	}
	var clauses []string
	if v := strings.TrimSpace(f.FailUnder); v != "" {
		if gradeRank(strings.ToLower(v)) < 0 {
			return Gates{}, inputErrorf("report: --fail-under %q is not a grade (poor, fair, good, excellent)", v)
		}
		clauses = append(clauses, "grade>="+strings.ToLower(v))
	}
	if v := strings.TrimSpace(f.MaxMAPE); v != "" {
		if !strings.Contains(v, "=") {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return Gates{}, inputErrorf("report: --max-mape %q is not a number or metric=number list", v)
			}
			clauses = append(clauses, "mape<="+v)
		} else {
			for _, item := range strings.Split(v, ",") {
				m, x, _ := strings.Cut(strings.TrimSpace(item), "=")
				m, x = strings.TrimSpace(m), strings.TrimSpace(x)
				if _, err := strconv.ParseFloat(x, 64); err != nil || !isMetric(m) {
					return Gates{}, inputErrorf("report: --max-mape %q: item %q is not metric=number with metric ttft, e2e, itl or tpot", v, item)
				}
				clauses = append(clauses, m+".mape<="+x)
			}
		}
	}
	if v := strings.TrimSpace(f.MinPearson); v != "" {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return Gates{}, inputErrorf("report: --min-pearson %q is not a number", v)
		}
		clauses = append(clauses, "pearson>="+v)
	}
	g, err := ParseGates(strings.Join(clauses, ","), metrics)
	if err != nil {
		return Gates{}, &InputError{Err: fmt.Errorf("report: gate flags: %w", err)}
	}
	a, err := ParseGates(f.Assert, metrics)
	if err != nil {
		return Gates{}, err
	}
	return g.Merge(a), nil
}
