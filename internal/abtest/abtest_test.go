package abtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"servesim/internal/quantile"
	"servesim/internal/tracev2"
)

// synth is a run of n requests one every 100 ms: each request's latencies
// are its own size (shared by every run of one schedule, from sizeSeed)
// times the run's noise (lognormal, σ 0.5, from noiseSeed), times scale.
func synth(name string, n int, idBase int64, sizeSeed, noiseSeed uint64, scale float64) Run {
	size := rand.New(rand.NewPCG(sizeSeed, 1))
	noise := rand.New(rand.NewPCG(noiseSeed, 2))
	r := Run{Name: name, Header: &tracev2.Header{Mode: "real"}}
	for i := range n {
		s := math.Exp(0.4 * size.NormFloat64())
		ttft := 50_000 * scale * s * math.Exp(0.5*noise.NormFloat64())
		tpot := 10_000 * scale * math.Exp(0.2*noise.NormFloat64())
		out := 20 + int(s*20)
		send := int64(i) * 100_000
		first := send + int64(ttft)
		r.Records = append(r.Records, tracev2.Record{RequestID: idBase + int64(i), Status: "ok", InputTokens: 100 + int(s*100),
			OutputTokens: out, ArrivalTimeUs: send, SendTimeUs: send, FirstChunkTimeUs: first,
			LastChunkTimeUs: first + int64(tpot*float64(out-1)), Model: "m"})
	}
	return r
}

// TestWeightedStatsFollowTheOnePercentileRule: counts stand for the
// sample they expand to, and the percentiles are internal/quantile's.
func TestWeightedStatsFollowTheOnePercentileRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var us []unit
	for range 57 {
		us = append(us, unit{ok: true, ttft: math.Round(rng.Float64() * 1000)})
	}
	s := newSideStats(us)
	w := make([]int32, len(us))
	var expanded []float64
	for i := range w {
		w[i] = int32(rng.IntN(4))
		for range w[i] {
			expanded = append(expanded, us[i].ttft)
		}
	}
	slices.Sort(expanded)
	out := make([]float64, 4)
	weightedStats(s.order[0], s.vals[0], w, out)
	for j, st := range latencyStats[:3] {
		if want := quantile.Sorted(expanded, st.p); out[j] != want {
			t.Errorf("%s: got %v, want %v", st.stat, out[j], want)
		}
	}
	var sum float64
	for _, v := range expanded {
		sum += v
	}
	if want := sum / float64(len(expanded)); math.Abs(out[3]-want) > 1e-9 {
		t.Errorf("mean: got %v, want %v", out[3], want)
	}
}

// TestSlowerBIsFound: B 15% slower is found with the right sign, an
// interval that excludes zero, and the verdict in words.
func TestSlowerBIsFound(t *testing.T) {
	for _, paired := range []bool{true, false} {
		base := int64(0)
		if !paired {
			base = 10_000
		}
		res, err := Compare(Side{synth("a.csv", 400, 0, 1, 2, 1)}, Side{synth("b.csv", 400, base, 1, 3, 1.15)}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: ModePaired, false: ModeIndependent}[paired]; res.Mode != want {
			t.Errorf("mode %s, want %s (%s)", res.Mode, want, res.ModeReason)
		}
		m := metricByName(t, res, "ttft.mean")
		if m.Diff <= 0.05 || m.CILo <= 0 || m.Verdict != VerdictWorse || !strings.HasPrefix(m.Sentence, "B is slower by") {
			t.Errorf("paired %v: ttft.mean diff %.3f CI [%.3f, %.3f] verdict %s %q; want slower, CI above zero", paired, m.Diff, m.CILo, m.CIHi, m.Verdict, m.Sentence)
		}
		if f := res.Apply(Gates{{Metric: "ttft", Rule: RuleRegress, Text: "ttft:regress"}}); len(f) == 0 {
			t.Errorf("paired %v: ttft:regress passed a 15%% slower B", paired)
		}
	}
}

func metricByName(t *testing.T, r *Result, name string) Metric {
	t.Helper()
	for _, m := range r.Metrics {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no metric %s", name)
	return Metric{}
}

// TestFalsePositiveRateAndPower measures, over 200 pairs of synthetic
// runs of 300 requests, how often two runs of one server are called
// different (it must be near the nominal 5%) and how often a 10% slower
// B is found, paired (one schedule) and not.
func TestFalsePositiveRateAndPower(t *testing.T) {
	const pairs, n = 200, 300
	o := DefaultOptions()
	o.Resamples = 200 // bounds the test's time: the rates barely move with more
	metrics := []string{"ttft.p50", "ttft.mean", "e2e.p90"}
	for _, paired := range []bool{true, false} {
		fp := map[string]int{}
		hit := map[string]int{}
		for k := range pairs {
			// Unpaired runs have other requests: other ids and sizes.
			base, seed := int64(0), uint64(1000+4*k)
			sizeB := seed
			if !paired {
				base, sizeB = 1<<20, seed+3
			}
			o.Seed = uint64(k)
			a := Side{synth("a", n, 0, seed, seed+1, 1)}
			same, err := Compare(a, Side{synth("b", n, base, sizeB, seed+2, 1)}, o)
			if err != nil {
				t.Fatal(err)
			}
			slower, err := Compare(a, Side{synth("b", n, base, sizeB, seed+2, 1.10)}, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range metrics {
				if v := metricByName(t, same, name).Verdict; v == VerdictWorse || v == VerdictBetter {
					fp[name]++
				}
				if metricByName(t, slower, name).Verdict == VerdictWorse {
					hit[name]++
				}
			}
		}
		for _, name := range metrics {
			rate, power := float64(fp[name])/pairs, float64(hit[name])/pairs
			t.Logf("paired=%v %s: false-positive rate %.1f%%, power at 10%% %.1f%% (%d pairs of %d requests, %d resamples)",
				paired, name, 100*rate, 100*power, pairs, n, o.Resamples)
			if rate < 0.02 || rate > 0.09 {
				t.Errorf("paired=%v %s: false-positive rate %.1f%%, want near 5%% (2–9%%)", paired, name, 100*rate)
			}
			// The power depends on the spread (lognormal σ 0.5 here) and the
			// count; the check is that a real 10% is found far more often
			// than a false one.
			if power < 0.25 || power < 4*rate {
				t.Errorf("paired=%v %s: power %.1f%% to find a 10%% slower B, want at least 25%% and 4 times the false-positive rate", paired, name, 100*power)
			}
		}
	}
}

// TestNoiseFloor: the self-test in a header and the spread between
// repeats raise the floor, and a difference inside it is within the
// noise, not worse.
func TestNoiseFloor(t *testing.T) {
	a := synth("a.csv", 400, 0, 1, 2, 1)
	b := synth("b.csv", 400, 0, 1, 3, 1.15)
	a.Header.XExt = &tracev2.Ext{SelfTest: &tracev2.SelfTest{TTFTBiasUs: 20_000, TTFTErrorP99Us: 30_000, ITLJitterP50Us: 100}}
	res, err := Compare(Side{a}, Side{b}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	m := metricByName(t, res, "ttft.mean")
	if want := 20_000 / m.A; math.Abs(m.SelfTestFloor-want) > 1e-12 || m.Verdict != VerdictWithinNoise || !strings.Contains(m.Sentence, "within the noise") {
		t.Errorf("self-test: ttft.mean floor %.3f (want %.3f), verdict %s %q; want within_noise", m.SelfTestFloor, want, m.Verdict, m.Sentence)
	}
	if p99 := metricByName(t, res, "ttft.p99"); math.Abs(p99.SelfTestFloor-30_000/p99.A) > 1e-12 {
		t.Errorf("ttft.p99 floor %.3f, want the 99th percentile error over A's p99 %.3f", p99.SelfTestFloor, 30_000/p99.A)
	}

	a1, a2 := synth("a1.csv", 300, 0, 1, 2, 1), synth("a2.csv", 300, 0, 1, 4, 1.3)
	b1, b2 := synth("b1.csv", 300, 0, 1, 5, 1.15), synth("b2.csv", 300, 0, 1, 6, 1.15)
	res, err = Compare(Side{a1, a2}, Side{b1, b2}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	m = metricByName(t, res, "ttft.mean")
	if res.Mode != ModePaired || m.RepeatNoise < 0.2 || m.NoiseFloor != m.RepeatNoise || m.Verdict == VerdictWorse {
		t.Errorf("repeats 30%% apart: mode %s, ttft.mean repeat noise %.3f floor %.3f verdict %s; want paired, noise ≥ 0.2, not worse", res.Mode, m.RepeatNoise, m.NoiseFloor, m.Verdict)
	}
}

// TestOtherModelsAreSaid: two models compare, with a warning and the
// model key marked in the deployments.
func TestOtherModelsAreSaid(t *testing.T) {
	a, b := synth("a.csv", 50, 0, 1, 2, 1), synth("b.csv", 50, 0, 1, 3, 1)
	a.Header.Server = &tracev2.Server{Model: "qwen3-14b"}
	b.Header.Server = &tracev2.Server{Model: "llama-3.1-8b"}
	res, err := Compare(Side{a}, Side{b}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "A measured model qwen3-14b and B model llama-3.1-8b") {
		t.Errorf("warnings %q; want the two models named", res.Warnings)
	}
	var b2 strings.Builder
	if err := res.Write(&b2, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b2.String(), "model       qwen3-14b  llama-3.1-8b  DIFFERS") {
		t.Errorf("text has no marked model row:\n%s", b2.String())
	}
}
