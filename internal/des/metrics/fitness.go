package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"servesim/internal/suggest"
)

// Fitness is one number for a run, comparable across runs: Σ weight ·
// normalised metric over the weighted metrics (BLIS's --fitness-weights).
// Latencies normalise as 1/(1 + ms), the ms being BLIS's µs over its 1 ms
// reference, so 0 ms scores 1 and 1 ms scores 0.5 (lower is better);
// throughputs as x/(x + reference), with 100 requests/s and 10 000
// tokens/s as references (higher is better). Weights are taken as given,
// not rescaled: with weights summing to 1 the score lies in [0, 1].
type Fitness struct {
	Score      float64            `json:"score"`
	Components []FitnessComponent `json:"components"` // in the order given
}

// FitnessComponent is one weighted metric: its raw value in the summary's
// unit (ms, requests/s, tokens/s) and its normalised value in [0, 1].
type FitnessComponent struct {
	Metric     string  `json:"metric"`
	Weight     float64 `json:"weight"`
	Raw        float64 `json:"raw"`
	Unit       string  `json:"unit"`
	Normalised float64 `json:"normalised"`
}

// FitnessWeight is one metric:weight of --fitness-weights.
type FitnessWeight struct {
	Metric string
	Weight float64
}

// The throughput references of the normalisation.
const (
	referenceRPS = 100.0
	referenceTPS = 10000.0
)

// fitnessMetric reads one metric of a summary; latency says which
// normalisation applies.
type fitnessMetric struct {
	name    string
	latency bool
	read    func(*Summary) float64
}

func fitnessMetrics() []fitnessMetric {
	out := []fitnessMetric{
		{"throughput", false, func(s *Summary) float64 { return s.ResponsesPerSec }},
		{"tokens_per_sec", false, func(s *Summary) float64 { return s.TokensPerSec }},
	}
	type lat struct {
		name string
		v    func(*Summary) [5]float64 // mean, p50, p90, p95, p99 in ms
	}
	for _, l := range []lat{
		{"ttft", func(s *Summary) [5]float64 {
			return [5]float64{s.TTFTMeanMs, s.TTFTP50Ms, s.TTFTP90Ms, s.TTFTP95Ms, s.TTFTP99Ms}
		}},
		{"e2e", func(s *Summary) [5]float64 {
			return [5]float64{s.E2EMeanMs, s.E2EP50Ms, s.E2EP90Ms, s.E2EP95Ms, s.E2EP99Ms}
		}},
		{"itl", func(s *Summary) [5]float64 {
			return [5]float64{s.ITLMeanMs, s.ITLP50Ms, s.ITLP90Ms, s.ITLP95Ms, s.ITLP99Ms}
		}},
		{"tpot", func(s *Summary) [5]float64 {
			return [5]float64{s.TPOTMeanMs, s.TPOTP50Ms, s.TPOTP90Ms, s.TPOTP95Ms, s.TPOTP99Ms}
		}},
	} {
		for i, stat := range []string{"mean", "p50", "p90", "p95", "p99"} {
			v := l.v
			out = append(out, fitnessMetric{stat + "_" + l.name, true, func(s *Summary) float64 { return v(s)[i] }})
		}
	}
	return out
}

// FitnessMetricNames lists the metrics --fitness-weights takes.
func FitnessMetricNames() []string {
	var names []string
	for _, m := range fitnessMetrics() {
		names = append(names, m.name)
	}
	return names
}

// maxFitnessWeights bounds the entries of --fitness-weights.
const maxFitnessWeights = 64

// ParseFitnessWeights reads "metric:weight,...": known metrics (with the
// nearest name when not), each once, weights finite and not negative, not
// all zero.
func ParseFitnessWeights(s string) ([]FitnessWeight, error) {
	names := FitnessMetricNames()
	parts := strings.Split(s, ",")
	if len(parts) > maxFitnessWeights {
		return nil, fmt.Errorf("%d fitness weights: at most %d", len(parts), maxFitnessWeights)
	}
	var out []FitnessWeight
	seen := map[string]bool{}
	var sum float64
	for _, part := range parts {
		name, w, ok := strings.Cut(strings.TrimSpace(part), ":")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("fitness weight %q: want metric:weight", part)
		}
		known := false
		for _, n := range names {
			known = known || n == name
		}
		if !known {
			hint := ""
			if c := suggest.Closest(name, names); c != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", c)
			}
			return nil, fmt.Errorf("unknown fitness metric %q%s; known: %s", name, hint, strings.Join(names, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("fitness metric %q given twice", name)
		}
		seen[name] = true
		v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v > 1e12 {
			return nil, fmt.Errorf("fitness metric %q: weight %q must be a number ≥ 0", name, w)
		}
		sum += v
		out = append(out, FitnessWeight{Metric: name, Weight: v})
	}
	if !(sum > 0) {
		return nil, fmt.Errorf("fitness weights %q are all zero", s)
	}
	return out, nil
}

// ComputeFitness is the fitness of s by ws (ParseFitnessWeights's).
func ComputeFitness(s *Summary, ws []FitnessWeight) *Fitness {
	byName := map[string]fitnessMetric{}
	for _, m := range fitnessMetrics() {
		byName[m.name] = m
	}
	f := &Fitness{}
	for _, w := range ws {
		m := byName[w.Metric]
		c := FitnessComponent{Metric: w.Metric, Weight: w.Weight, Raw: m.read(s)}
		switch {
		case m.latency:
			c.Unit, c.Normalised = "ms", 1/(1+max(c.Raw, 0))
		case w.Metric == "throughput":
			c.Unit, c.Normalised = "req/s", throughputScore(c.Raw, referenceRPS)
		default:
			c.Unit, c.Normalised = "tok/s", throughputScore(c.Raw, referenceTPS)
		}
		f.Score += w.Weight * c.Normalised
		f.Components = append(f.Components, c)
	}
	return f
}

// throughputScore is x/(x + ref), 0 for no throughput.
func throughputScore(x, ref float64) float64 {
	if !(x > 0) {
		return 0
	}
	return x / (x + ref)
}
