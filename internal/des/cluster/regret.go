package cluster

import (
	"cmp"
	"slices"

	"servesim/internal/des/metrics"
)

// MaxCounterfactualK bounds Config.CounterfactualK: candidates recorded
// per routing decision.
const MaxCounterfactualK = 1024

// counterfactual scores the candidates of every routing decision, finds
// its regret (the best candidate's score minus the chosen one's) and its
// top k candidates, and tallies the regrets per pool (docs/simulator.md
// §10, counterfactual regret). The scores are the policy's own where it
// has them (weighted, least-loaded, least-outstanding, always-busiest),
// whose regret is then zero by construction as its choice is an argmax;
// round-robin and random, which score nothing, are scored by −effective
// load (queue depth + batch size from the snapshot, in-flight live), the
// load a least-loaded router would have balanced.
type counterfactual struct {
	k      int
	score  []float64 // the current decision's candidates' scores
	top    []int     // positions in the pool of its top min(k, n) candidates, best first
	regret float64   // the current decision's regret
	n      [3]int64
	pos    [3][]float64 // the positive regrets per pool
}

func newCounterfactual(k int) *counterfactual {
	if k <= 0 {
		return nil
	}
	return &counterfactual{k: k}
}

// decide scores the decision of rt that chose chosen among pool.
func (cf *counterfactual) decide(rt *router, pool []int, poolID, chosen int) {
	cf.score = cf.score[:0]
	if len(rt.total) == len(pool) {
		cf.score = append(cf.score, rt.total...)
	} else {
		for _, i := range pool {
			cf.score = append(cf.score, -float64(rt.effLoad(i)))
		}
	}
	best, at := cf.score[0], 0
	for k, v := range cf.score {
		best = max(best, v)
		if pool[k] == chosen {
			at = k
		}
	}
	cf.regret = best - cf.score[at]
	cf.n[poolID]++
	if cf.regret > 0 {
		cf.pos[poolID] = append(cf.pos[poolID], cf.regret)
	}
	cf.top = cf.top[:0]
	for k := range pool {
		cf.top = append(cf.top, k)
	}
	// Best first; equal scores in pool order (the sort is stable).
	slices.SortStableFunc(cf.top, func(a, b int) int { return cmp.Compare(cf.score[b], cf.score[a]) })
	cf.top = cf.top[:min(cf.k, len(cf.top))]
}

// summaries is the regret of each pool that routed, for policy.
func (cf *counterfactual) summaries(policy RoutingPolicy, pd bool) []metrics.RegretSummary {
	if cf == nil {
		return nil
	}
	var out []metrics.RegretSummary
	for id, n := range cf.n {
		if n == 0 {
			continue
		}
		pool := ""
		if pd {
			pool = poolNames[id]
		}
		out = append(out, metrics.SummarizeRegret(string(policy), pool, n, cf.pos[id]))
	}
	return out
}
