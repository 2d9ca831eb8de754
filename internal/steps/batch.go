package steps

import "slices"

// span is a request's life on the step ends: first token at end first,
// last token at end last, and the ends where a chunk placed a token.
type span struct {
	req         *Request
	first, last int
	obs         []obs
}

// batches gives the batch of a step from the requests' spans.
type batches struct {
	ends  []int64
	spans []span // by first end
}

func newBatches(ends []int64, rs []reqObs) *batches {
	b := &batches{ends: ends}
	for _, ro := range rs {
		sp := span{req: ro.req, first: ro.obs[0].node, obs: ro.obs}
		sp.last = sp.first
		if last := ro.obs[len(ro.obs)-1]; last.token == ro.req.Output-1 {
			sp.last = last.node
		}
		b.spans = append(b.spans, sp)
	}
	slices.SortStableFunc(b.spans, func(x, y span) int { return x.first - y.first })
	return b
}

// step is the step ending at end i: the requests whose first token came at
// i are its finishing prefills (placed by placePrefills), those that had
// theirs before and their last at i or later are its decodes.
func (b *batches) step(i int) Step {
	s := Step{StartUs: b.ends[i-1], EndUs: b.ends[i]}
	for k := range b.spans {
		sp := &b.spans[k]
		if sp.first > i {
			break
		}
		switch {
		case sp.first == i:
			s.Prefills = append(s.Prefills, Prefill{ID: sp.req.ID, Target: sp.req.Prompt, Finishes: true})
		case i <= sp.last:
			s.Decodes++
			s.DecodeContext += int64(sp.req.Prompt + b.tokenAt(sp, i) - 1)
		}
	}
	return s
}

// tokenAt is the index of the token sp's request produced at end i: the
// placed one when a chunk says, else found by time between its first and
// last token.
func (b *batches) tokenAt(sp *span, i int) int {
	if k, ok := slices.BinarySearchFunc(sp.obs, i, func(o obs, n int) int { return o.node - n }); ok {
		return sp.obs[k].token
	}
	t0, t1 := b.ends[sp.first], b.ends[sp.last]
	if t1 <= t0 {
		return 1
	}
	k := int(float64(b.ends[i]-t0) / float64(t1-t0) * float64(sp.req.Output-1))
	return min(max(k, 1), sp.req.Output-1)
}

// placePrefills sizes the finishing prefills of each step and puts the
// earlier chunks of a prompt longer than a step's budget on the steps just
// before, when those are known, as the server cuts them: the first chunk
// takes what the budget leaves after the decodes, and so on, the step of
// the first token the rest. When the known steps do not reach back far
// enough, the earliest known one takes what is left over.
func placePrefills(steps []Step, budget int) {
	avail := func(j int) int {
		if budget <= 0 {
			return 1 << 30
		}
		return max(budget-steps[j].Decodes, 1)
	}
	for s := range steps {
		for p := range steps[s].Prefills {
			pf := &steps[s].Prefills[p]
			if !pf.Finishes {
				continue
			}
			// Back from s until the budgets hold the prompt.
			first, sum := s, avail(s)
			for sum < pf.Target && first > 0 && steps[first-1].EndUs == steps[first].StartUs {
				first--
				sum += avail(first)
			}
			rem := pf.Target
			for j := first; j < s; j++ {
				take := min(avail(j), rem-(s-j)) // leave a token for each later step
				if j == first && sum < pf.Target {
					take += pf.Target - sum
				}
				steps[j].Prefills = append(steps[j].Prefills, Prefill{ID: pf.ID, NewTokens: take, Context: pf.Target - rem, Target: pf.Target})
				rem -= take
			}
			pf.NewTokens, pf.Context = rem, pf.Target-rem
		}
	}
}
