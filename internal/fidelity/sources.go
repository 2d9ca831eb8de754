package fidelity

import (
	"cmp"
	"math"
	"slices"

	"servesim/internal/tracev2"
)

// Sources says where a run's error arises. TTFT is split at the first
// schedule, in vLLM's terms on both sides: real, queued_ts → scheduled_ts
// → first_token_ts; simulated, the step in flight at arrival
// ([recorder.queuedAt]) → the start of the step before the request's first
// step, when its batch was formed under asynchronous scheduling
// ([recorder.scheduledAt]) → the first token. For each request the error of
// each part is taken relative to its real TTFT, so the two parts add up to
// the request's TTFT error and the means of their absolute values bound
// the TTFT MAPE. Means are over the requests compared, µs.
type Sources struct {
	N                       int
	RealQueueUs, SimQueueUs float64 // queued → first schedule
	RealFirstUs, SimFirstUs float64 // first schedule → first token
	RealTPOTUs, SimTPOTUs   float64
	// Mean relative TTFT error of each part: signed (sim − real, over the
	// real TTFT) and absolute.
	QueueErr, QueueAbsErr float64
	FirstErr, FirstAbsErr float64
	// TTFT MAPE of the requests that waited in vLLM's queue longer than
	// the run's mean TPOT (queueing dominates their TTFT) and of the
	// others (step times do), with their counts.
	QueuedN, OtherN               int
	QueuedTTFTMAPE, OtherTTFTMAPE float64
	// Load: time-averaged and peak number of requests between their first
	// schedule and last token.
	RealBatch, SimBatch float64
	RealPeak, SimPeak   int
	// KV pressure: peak KV use as a fraction (real −1 when the run did
	// not record it), the simulator's preemptions and the requests they
	// hit (vLLM's are not recorded).
	RealKVPeak, SimKVPeak float64
	SimPreemptions        int64
	SimPreempted          int
}

// sources computes the breakdown of a replay of c.
func sources(c *Case, rp *replayed) Sources {
	s := Sources{RealKVPeak: c.Run.KVPeak, SimKVPeak: rp.summary.KVUtilizationPeak, SimPreemptions: rp.summary.PreemptionCount}
	byID := make(map[int64]*tracev2.SimResult, len(rp.sims))
	for i := range rp.sims {
		byID[rp.sims[i].RequestID] = &rp.sims[i]
	}
	rec := rp.rec
	sched := c.Run.Scheduled
	type part struct{ realQ, simQ, realF, simF, ttft float64 }
	var parts []part
	var realSpans, simSpans [][2]int64
	var nt float64
	for i := range c.Run.Records {
		m := &c.Run.Records[i]
		ttft, e2e, ok := measured(m)
		sim := byID[m.RequestID]
		et, done := rec.results[m.RequestID]
		if !ok || sim == nil || !done || et.firstSched < 0 || i >= len(sched) || sched[i] <= 0 || ttft <= 0 {
			continue
		}
		queued := rec.queuedAt(et.arrival)
		simQ := float64(rec.scheduledAt(et.firstSched, queued) - queued)
		parts = append(parts, part{realQ: float64(sched[i] - m.SendTimeUs), simQ: simQ,
			realF: ttft - float64(sched[i]-m.SendTimeUs), simF: sim.TTFTUs - simQ, ttft: ttft})
		if m.OutputTokens > 1 && sim.OutputTokens > 1 {
			s.RealTPOTUs += (e2e - ttft) / float64(m.OutputTokens-1)
			s.SimTPOTUs += (sim.E2EUs - sim.TTFTUs) / float64(sim.OutputTokens-1)
			nt++
		}
		if sim.NumPreemptions > 0 {
			s.SimPreempted++
		}
		realSpans = append(realSpans, [2]int64{sched[i], m.LastChunkTimeUs})
		// The simulator's occupancy starts at its first step (bounded by
		// max_num_seqs), not when that step's batch was formed.
		simSpans = append(simSpans, [2]int64{et.firstSched, et.done})
	}
	if nt > 0 {
		s.RealTPOTUs /= nt
		s.SimTPOTUs /= nt
	}
	s.N = len(parts)
	for _, p := range parts {
		s.RealQueueUs += p.realQ
		s.SimQueueUs += p.simQ
		s.RealFirstUs += p.realF
		s.SimFirstUs += p.simF
		eq, ef := (p.simQ-p.realQ)/p.ttft, (p.simF-p.realF)/p.ttft
		s.QueueErr += eq
		s.QueueAbsErr += math.Abs(eq)
		s.FirstErr += ef
		s.FirstAbsErr += math.Abs(ef)
		if e := math.Abs(eq + ef); p.realQ > s.RealTPOTUs {
			s.QueuedN++
			s.QueuedTTFTMAPE += e
		} else {
			s.OtherN++
			s.OtherTTFTMAPE += e
		}
	}
	if n := float64(s.N); n > 0 {
		s.RealQueueUs /= n
		s.SimQueueUs /= n
		s.RealFirstUs /= n
		s.SimFirstUs /= n
		s.QueueErr /= n
		s.QueueAbsErr /= n
		s.FirstErr /= n
		s.FirstAbsErr /= n
	}
	if s.QueuedN > 0 {
		s.QueuedTTFTMAPE /= float64(s.QueuedN)
	}
	if s.OtherN > 0 {
		s.OtherTTFTMAPE /= float64(s.OtherN)
	}
	s.RealBatch, s.RealPeak = concurrency(realSpans)
	s.SimBatch, s.SimPeak = concurrency(simSpans)
	return s
}

// concurrency returns the time-averaged number of open spans [start, end)
// over [first start, last end) and the most open at once.
func concurrency(spans [][2]int64) (mean float64, peak int) {
	if len(spans) == 0 {
		return 0, 0
	}
	type edge struct {
		at    int64
		delta int
	}
	edges := make([]edge, 0, 2*len(spans))
	lo, hi := spans[0][0], spans[0][1]
	var busy float64
	for _, sp := range spans {
		if sp[1] <= sp[0] {
			continue
		}
		edges = append(edges, edge{sp[0], 1}, edge{sp[1], -1})
		lo, hi = min(lo, sp[0]), max(hi, sp[1])
		busy += float64(sp[1] - sp[0])
	}
	// Ends before starts at the same time: a span ending at t is not open
	// at t.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.delta, b.delta)
	})
	open := 0
	for _, e := range edges {
		open += e.delta
		peak = max(peak, open)
	}
	if hi > lo {
		mean = busy / float64(hi-lo)
	}
	return mean, peak
}
