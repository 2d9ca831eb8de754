package abtest

import (
	"fmt"
	"math"
	"slices"

	"servesim/internal/quantile"
	"servesim/internal/report"
)

// Result is a comparison of B against A.
type Result struct {
	A          SideInfo `json:"a"`
	B          SideInfo `json:"b"`
	Mode       string   `json:"mode"` // paired or independent
	ModeReason string   `json:"mode_reason"`
	Resamples  int      `json:"resamples"`
	Confidence float64  `json:"confidence"`
	Seed       uint64   `json:"seed"`
	SLO        string   `json:"slo,omitempty"`
	Metrics    []Metric `json:"metrics"`
	// Deployments are the two runs' deployments side by side, A's where
	// the config verdict has the trace's and B's where it has the
	// simulation's.
	Deployments report.ConfigMatch `json:"deployments"`
	Warnings    []string           `json:"warnings,omitempty"`
	Gates       []GateOutcome      `json:"gates,omitempty"`

	curves map[string][2][]float64 // each latency's sorted values on A and B, for the HTML page
}

// SideInfo describes one arm.
type SideInfo struct {
	Traces   []string `json:"traces"`
	Model    string   `json:"model,omitempty"`
	Requests int      `json:"requests"` // past the warm-up
	OK       int      `json:"ok"`
}

// Verdicts of a metric.
const (
	VerdictBetter      = "better"       // B is better, beyond the noise floor
	VerdictWorse       = "worse"        // B is worse, beyond the noise floor
	VerdictWithinNoise = "within_noise" // the interval excludes zero but not the noise floor
	VerdictNone        = "no_difference"
	VerdictNA          = "n/a" // a side has no value
)

// Metric is one metric on both sides.
type Metric struct {
	Name string  `json:"name"` // e.g. ttft.p99
	Unit string  `json:"unit"` // us, tok/s or req/s
	A    float64 `json:"a"`
	B    float64 `json:"b"`
	// Diff is B's relative difference from A, B/A − 1; CILo and CIHi are
	// its bootstrap interval at the result's confidence.
	Diff float64 `json:"rel_diff"`
	CILo float64 `json:"ci_lo"`
	CIHi float64 `json:"ci_hi"`
	// NoiseFloor is the relative difference the measurement alone could
	// make: the larger of SelfTestFloor and RepeatNoise.
	NoiseFloor    float64 `json:"noise_floor"`
	SelfTestFloor float64 `json:"self_test_floor"`
	RepeatNoise   float64 `json:"repeat_noise"`
	Verdict       string  `json:"verdict"`
	Sentence      string  `json:"sentence"`

	higherBetter bool
	family       string
}

// Compare compares B against A. Errors carry exit code 2: a run that is
// not a measurement, or one with no request finished ok.
func Compare(a, b Side, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	for _, side := range []struct {
		name string
		runs Side
	}{{"A", a}, {"B", b}} {
		if len(side.runs) == 0 || len(side.runs) > MaxRepeats {
			return nil, fmt.Errorf("side %s has %d runs: want 1 to %d", side.name, len(side.runs), MaxRepeats)
		}
		for _, r := range side.runs {
			if err := checkRun(side.name, r); err != nil {
				return nil, err
			}
		}
	}
	s := build(a, b, o.SLO)
	defs := metricDefs(!o.SLO.Empty())
	bt := bootstrap(s, len(defs), o)
	noiseA := repeatNoise(s.a, len(a), len(defs))
	noiseB := repeatNoise(s.b, len(b), len(defs))
	self := selfTestUs(append(slices.Clone(a), b...))

	res := &Result{A: sideInfo(a, s.a), B: sideInfo(b, s.b), Mode: ModeIndependent, ModeReason: s.why,
		Resamples: o.Resamples, Confidence: o.Confidence, Seed: o.Seed, SLO: o.SLO.String()}
	if s.paired {
		res.Mode = ModePaired
	}
	lo, hi := (1-o.Confidence)/2*100, (1+o.Confidence)/2*100
	for j, d := range defs {
		m := Metric{Name: d.name, Unit: d.unit, A: bt.a[j], B: bt.b[j], higherBetter: d.higherBetter, family: d.family}
		m.RepeatNoise = math.Max(noiseA[j], noiseB[j])
		if us := self[d.name]; us > 0 && m.A > 0 {
			m.SelfTestFloor = us / m.A
		}
		m.NoiseFloor = math.Max(m.SelfTestFloor, m.RepeatNoise)
		valid := m.A > 0 && !math.IsNaN(m.B) && len(bt.diffs[j]) >= o.Resamples/2
		if !valid {
			m.A, m.B = finite(m.A), finite(m.B)
			m.Verdict = VerdictNA
			m.Sentence = fmt.Sprintf("%s: not compared (a side has no value)", label(d))
			res.Metrics = append(res.Metrics, m)
			continue
		}
		m.Diff = m.B/m.A - 1
		m.CILo, m.CIHi = quantile.Sorted(bt.diffs[j], lo), quantile.Sorted(bt.diffs[j], hi)
		m.Verdict = verdict(m)
		m.Sentence = sentence(m, d, o.Confidence)
		res.Metrics = append(res.Metrics, m)
	}
	res.Deployments = deployments(a[0], b[0], o.SameModel)
	res.Warnings = warnings(res, a, b)
	res.curves = curves(s)
	return res, nil
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// selfTestUs is the client's error per latency family and statistic, µs:
// the largest of the runs' self-tests. A TTFT or E2E ends at one timed
// chunk: its median and mean move with the median error (the bias), its
// tail with the 99th percentile error. A TPOT is a mean over many gaps, so
// the median ITL jitter bounds every statistic of it.
func selfTestUs(runs []Run) map[string]float64 {
	out := map[string]float64{}
	note := func(family, stat string, us float64) {
		k := family + "." + stat
		out[k] = math.Max(out[k], us)
	}
	for _, r := range runs {
		if r.Header == nil || r.Header.XExt == nil || r.Header.XExt.SelfTest == nil {
			continue
		}
		st := r.Header.XExt.SelfTest
		bias, tail := float64(abs64(st.TTFTBiasUs)), float64(max(st.TTFTErrorP99Us, abs64(st.TTFTBiasUs)))
		for _, fam := range []string{famTTFT, famE2E} {
			note(fam, "p50", bias)
			note(fam, "mean", bias)
			note(fam, "p90", tail)
			note(fam, "p99", tail)
		}
		for _, s := range latencyStats {
			note(famTPOT, s.stat, float64(st.ITLJitterP50Us))
		}
	}
	return out
}

// verdict judges a metric's interval against zero and the noise floor.
func verdict(m Metric) string {
	beyondUp, beyondDown := m.CILo > m.NoiseFloor, m.CIHi < -m.NoiseFloor
	switch {
	case beyondUp == m.higherBetter && (beyondUp || beyondDown):
		return VerdictBetter
	case beyondUp || beyondDown:
		return VerdictWorse
	case m.CILo > 0 || m.CIHi < 0:
		return VerdictWithinNoise
	}
	return VerdictNone
}

// label names a metric for a sentence: "p99 TTFT", "output throughput".
func label(d metricDef) string {
	switch d.name {
	case "throughput.tok_s":
		return "output throughput"
	case "throughput.req_s":
		return "request throughput"
	case "goodput.req_s":
		return "goodput"
	}
	names := map[string]string{famTTFT: "TTFT", famTPOT: "TPOT", famE2E: "E2E"}
	return d.stat + " " + names[d.family]
}

// sentence says the verdict in words, e.g. "B is faster by 7.0% at p99
// TTFT, 95% CI 4.0–10.0%, beyond the noise (floor 1.2%)".
func sentence(m Metric, d metricDef, conf float64) string {
	ci := fmt.Sprintf("%g%% CI %s to %s", math.Round(conf*1000)/10, signedPct(m.CILo), signedPct(m.CIHi))
	floor := "no noise floor recorded"
	if m.NoiseFloor > 0 {
		floor = "noise floor " + pct(m.NoiseFloor)
	}
	if m.Verdict == VerdictNone {
		return fmt.Sprintf("no difference this run can detect at %s (%s, %s)", label(d), signedPct(m.Diff), ci)
	}
	var what string
	switch {
	case d.higherBetter && m.Diff > 0:
		what = fmt.Sprintf("B has %s more %s", pct(m.Diff), label(d))
	case d.higherBetter:
		what = fmt.Sprintf("B has %s less %s", pct(-m.Diff), label(d))
	case m.Diff < 0:
		what = fmt.Sprintf("B is faster by %s at %s", pct(-m.Diff), label(d))
	default:
		what = fmt.Sprintf("B is slower by %s at %s", pct(m.Diff), label(d))
	}
	if m.Verdict == VerdictWithinNoise {
		return fmt.Sprintf("%s, %s, but within the noise (%s)", what, ci, floor)
	}
	return fmt.Sprintf("%s, %s, beyond the noise (%s)", what, ci, floor)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func signedPct(f float64) string { return fmt.Sprintf("%+.1f%%", f*100) }

// sideInfo counts a side's requests.
func sideInfo(runs Side, us []unit) SideInfo {
	si := SideInfo{Model: model(runs[0]), Requests: len(us)}
	for _, r := range runs {
		si.Traces = append(si.Traces, r.Name)
	}
	for _, u := range us {
		if u.ok {
			si.OK++
		}
	}
	return si
}

// warnings are what the reader should know: other models, failed
// requests. Differing deployments are marked in their table.
func warnings(res *Result, a, b Side) []string {
	var w []string
	if ma, mb := res.A.Model, res.B.Model; ma != "" && mb != "" && ma != mb {
		w = append(w, fmt.Sprintf("A measured model %s and B model %s: the comparison is of two models", ma, mb))
	}
	for _, side := range []struct {
		name string
		runs Side
	}{{"A", a}, {"B", b}} {
		for _, r := range side.runs[1:] {
			if model(r) != model(side.runs[0]) {
				w = append(w, fmt.Sprintf("the repeats of %s measured different models: %s in %s, %s in %s", side.name, model(side.runs[0]), side.runs[0].Name, model(r), r.Name))
				break
			}
		}
	}
	for _, si := range []struct {
		name string
		info SideInfo
	}{{"A", res.A}, {"B", res.B}} {
		if f := si.info.Requests - si.info.OK; f > 0 {
			w = append(w, fmt.Sprintf("%d of %d requests of %s did not finish ok and are left out of the latencies and throughputs", f, si.info.Requests, si.name))
		}
	}
	return w
}

// curves are each latency's sorted ok values on both sides.
func curves(s sample) map[string][2][]float64 {
	out := map[string][2][]float64{}
	for f, fam := range latencyFamilies {
		var c [2][]float64
		for side, us := range [][]unit{s.a, s.b} {
			for i := range us {
				u := &us[i]
				if u.ok && (f != 1 || u.hasTPOT) {
					c[side] = append(c[side], latencyOf(f, u))
				}
			}
			slices.Sort(c[side])
		}
		out[fam] = c
	}
	return out
}

// latencyOf is a unit's latency of family index f (latencyFamilies).
func latencyOf(f int, u *unit) float64 {
	switch f {
	case 0:
		return u.ttft
	case 1:
		return u.tpot
	}
	return u.e2e
}
