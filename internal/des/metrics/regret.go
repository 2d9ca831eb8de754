package metrics

import (
	"slices"

	"servesim/internal/quantile"
)

// RegretSummary is the counterfactual regret of one routing policy over a
// run's decisions (of one pool with P/D): a decision's regret is the best
// candidate's score minus the chosen one's (docs/simulator.md §10,
// counterfactual regret). The scores are the policy's own where it has
// them, so score-based policies (weighted, least-loaded, ...) have none by
// construction; round-robin and random are scored by −effective load.
type RegretSummary struct {
	Policy    string  `json:"policy"`
	Pool      string  `json:"pool,omitempty"` // "prefill" or "decode" with P/D
	Decisions int64   `json:"decisions"`
	Mean      float64 `json:"mean"`
	P99       float64 `json:"p99"`
	Max       float64 `json:"max"`
	Positive  int64   `json:"positive"` // decisions with regret > 0
}

// SummarizeRegret is the summary of n decisions whose regrets are positive
// (in any order; slices.Sort reorders them) and the rest zero: regrets
// are never negative, the chosen score being at most the best.
func SummarizeRegret(policy, pool string, n int64, positive []float64) RegretSummary {
	s := RegretSummary{Policy: policy, Pool: pool, Decisions: n, Positive: int64(len(positive))}
	if n == 0 {
		return s
	}
	slices.Sort(positive)
	var sum float64
	for _, v := range positive {
		sum += v
	}
	s.Mean = sum / float64(n)
	if len(positive) > 0 {
		s.Max = positive[len(positive)-1]
	}
	// The sorted values are n − len(positive) zeros, then positive.
	zeros := n - int64(len(positive))
	at := func(k int64) float64 {
		if k < zeros {
			return 0
		}
		return positive[k-zeros]
	}
	k, f := quantile.Rank(n, 99)
	hi := at(k)
	if k+1 < n {
		hi = at(k + 1)
	}
	s.P99 = quantile.Between(at(k), hi, f)
	return s
}
