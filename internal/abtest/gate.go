package abtest

import (
	"fmt"
	"slices"
	"strings"

	"servesim/internal/exitcode"
)

// GateGrammar documents --assert, for --help.
const GateGrammar = `assert = check { "," check }
check  = metric ":" rule
metric = NAME | FAMILY | all
rule   = regress | differ | improve

NAME is one metric (ttft.p99, tpot.mean, e2e.p50, throughput.tok_s,
throughput.req_s, goodput.req_s); FAMILY every metric of one (ttft, tpot,
e2e, throughput, goodput); all every metric. regress fails when B is worse
than A beyond the noise floor, differ when B is better or worse beyond it,
improve unless B is better beyond it. A failed check exits 3.

   --assert 'ttft.p99:regress,throughput:regress'
   --assert 'all:regress'
   --assert 'e2e.mean:improve'`

// Rules of a gate check.
const (
	RuleRegress = "regress"
	RuleDiffer  = "differ"
	RuleImprove = "improve"
)

// Check is one parsed gate check.
type Check struct {
	Metric string // a name, a family or "all"
	Rule   string
	Text   string // as written
}

// Gates are the checks of --assert.
type Gates []Check

// GateOutcome is one check applied to one metric.
type GateOutcome struct {
	Check  string `json:"check"`
	Metric string `json:"metric"`
	Passed bool   `json:"passed"`
}

// ParseGates reads an --assert expression (GateGrammar); errors name the
// column of the offending check. The empty string is no gate.
func ParseGates(expr string) (Gates, error) {
	var g Gates
	if strings.TrimSpace(expr) == "" {
		return g, nil
	}
	known := metricDefs(true)
	col := 1
	for _, part := range strings.Split(expr, ",") {
		at := col + len(part) - len(strings.TrimLeft(part, " "))
		col += len(part) + 1
		text := strings.TrimSpace(part)
		metric, rule, ok := strings.Cut(text, ":")
		metric, rule = strings.TrimSpace(metric), strings.TrimSpace(rule)
		switch {
		case !ok:
			return nil, exitcode.Usagef("--assert column %d: %q is not metric:rule (e.g. ttft.p99:regress)", at, text)
		case !slices.Contains([]string{RuleRegress, RuleDiffer, RuleImprove}, rule):
			return nil, exitcode.Usagef("--assert column %d: rule %q of %s: want regress, differ or improve", at+len(metric)+1, rule, metric)
		case !knownMetric(metric, known):
			return nil, exitcode.Usagef("--assert column %d: unknown metric %q: want a name such as ttft.p99, a family (ttft, tpot, e2e, throughput, goodput) or all", at, metric)
		}
		g = append(g, Check{Metric: metric, Rule: rule, Text: text})
	}
	return g, nil
}

func knownMetric(m string, defs []metricDef) bool {
	if m == "all" {
		return true
	}
	for _, d := range defs {
		if d.name == m || d.family == m {
			return true
		}
	}
	return false
}

// NeedsSLO reports whether a check names goodput, which only an SLO gives.
func (g Gates) NeedsSLO() bool {
	for _, c := range g {
		if c.Metric == famGoodput || c.Metric == "goodput.req_s" {
			return true
		}
	}
	return false
}

// Apply evaluates the checks against the result, records every outcome
// in it, and returns the failures in words. A metric without a value
// (n/a) passes every rule but improve.
func (r *Result) Apply(g Gates) []string {
	var failed []string
	for _, c := range g {
		for _, m := range r.Metrics {
			if c.Metric != "all" && c.Metric != m.Name && c.Metric != m.family {
				continue
			}
			pass := true
			switch c.Rule {
			case RuleRegress:
				pass = m.Verdict != VerdictWorse
			case RuleDiffer:
				pass = m.Verdict != VerdictWorse && m.Verdict != VerdictBetter
			case RuleImprove:
				pass = m.Verdict == VerdictBetter
			}
			r.Gates = append(r.Gates, GateOutcome{Check: c.Text, Metric: m.Name, Passed: pass})
			if !pass {
				failed = append(failed, fmt.Sprintf("%s: %s", c.Text, m.Sentence))
			}
		}
	}
	return failed
}
