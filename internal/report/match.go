package report

import (
	"fmt"
	"slices"

	"servesim/internal/tracev2"
)

// Buckets of docs/calibrate.md §2, in classification order.
const (
	bucketWarmUp = iota
	bucketNonOK
	bucketUnmatchedReal
	bucketInvalidTiming
	bucketMatched
)

// Metric names.
const (
	MetricTTFT = "ttft"
	MetricE2E  = "e2e"
	MetricITL  = "itl"
	MetricTPOT = "tpot"
)

// metricNames lists every metric in report order.
func metricNames() []string { return []string{MetricE2E, MetricITL, MetricTPOT, MetricTTFT} }

// pairs holds one metric's matched values in trace order, with their request ids.
type pairs struct {
	ids  []int64
	real []float64
	sim  []float64
	rs   []float64 // sorted copy of real, made once by sorted()
	ss   []float64 // sorted copy of sim
}

func newPairs(capacity int) *pairs {
	return &pairs{ids: make([]int64, 0, capacity), real: make([]float64, 0, capacity), sim: make([]float64, 0, capacity)}
}

// sorted returns sorted copies of both sides, computed once and shared by the
// statistics and the plots.
func (p *pairs) sorted() (rs, ss []float64) {
	if p.rs == nil {
		p.rs, p.ss = slices.Clone(p.real), slices.Clone(p.sim)
		slices.Sort(p.rs)
		slices.Sort(p.ss)
	}
	return p.rs, p.ss
}

func (p *pairs) add(id int64, r, s float64) {
	p.ids = append(p.ids, id)
	p.real = append(p.real, r)
	p.sim = append(p.sim, s)
}

func (p *pairs) len() int { return len(p.ids) }

// row is one trace row after classification.
type row struct {
	rec    *tracev2.Record
	sim    *tracev2.SimResult // nil when unmatched
	bucket int
	class  string // SLO class, "" when none (trace first, else sim)
	model  string // model tag, trace first, else sim
}

// matching is the result of docs/calibrate.md §2–§5: buckets, counts and per-metric pairs.
type matching struct {
	rows             []row
	numRequests      int
	warmUp           int
	nonOK            int
	unmatchedReal    int
	invalidTiming    int
	matched          int
	unmatchedSim     int
	tokenMismatches  int
	outputMismatch   int    // pairs whose output counts differ (truncation evidence)
	inputMismatch    int    // pairs whose prompt counts differ (results of another trace)
	idMatched        int    // trace rows with a SimResult of their request_id, whatever their bucket
	belongingWarning string // set by belonging when some requests are unmatched
	itlDropped       int
	nonStreamed      int               // matched rows that were not streamed: no TPOT (one chunk, no per-token timing)
	simulated        bool              // the trace is a simulator's: its chunk times are the first and last token's
	nonFiniteSim     int               // matched pairs left out for a NaN or infinite sim value
	itlMean          map[int64]float64 // real mean ITL per request (non-negative diffs)
	metrics          map[string]*pairs
	arrivals         []int64                      // arrival of each ttft and e2e pair, in their order (for the latency-over-time plots)
	byClass          map[string]map[string]*pairs // class -> metric (ttft, e2e)
	byModel          map[string]map[string]*pairs
	unknownStatus    []string
}

func locOf(locs []string, i int, what string) string {
	if i < len(locs) && locs[i] != "" {
		return locs[i]
	}
	return fmt.Sprintf("%s %d", what, i+1)
}

// indexSim indexes SimResults by request_id; a duplicate is an input error.
func indexSim(in *Input) (idIndex, error) {
	idx := newIDIndex(func(yield func(int64) bool) {
		for i := range in.Sim {
			if !yield(in.Sim[i].RequestID) {
				return
			}
		}
	})
	for i := range in.Sim {
		id := in.Sim[i].RequestID
		if j, dup := idx.get(id); dup {
			return idx, inputErrorf("report: duplicate request_id %d in simulated results: %s and %s",
				id, locOf(in.SimLocs, j, "sim result"), locOf(in.SimLocs, i, "sim result"))
		}
		idx.set(id, i)
	}
	return idx, nil
}

// checkTraceIDs rejects a duplicate request_id in the trace and returns the
// index of every id.
func checkTraceIDs(in *Input) (idIndex, error) {
	seen := newIDIndex(func(yield func(int64) bool) {
		for i := range in.Trace {
			if !yield(in.Trace[i].RequestID) {
				return
			}
		}
	})
	for i := range in.Trace {
		id := in.Trace[i].RequestID
		if j, dup := seen.get(id); dup {
			return seen, inputErrorf("report: duplicate request_id %d in the trace: %s and %s",
				id, locOf(in.TraceLocs, j, "trace row"), locOf(in.TraceLocs, i, "trace row"))
		}
		seen.set(id, i)
	}
	return seen, nil
}

// firstTime is the "first" instant of docs/calibrate.md §4: the first chunk, or with --ttft-from
// first-token the first text token when it is recorded and in order.
func firstTime(r *tracev2.Record, firstToken bool) int64 {
	if firstToken && r.FirstTokenTimeUs > 0 && r.FirstTokenTimeUs >= r.SendTimeUs && r.FirstTokenTimeUs <= r.LastChunkTimeUs {
		return r.FirstTokenTimeUs
	}
	return r.FirstChunkTimeUs
}

func validTiming(r *tracev2.Record) bool {
	return r.FirstChunkTimeUs != 0 && r.LastChunkTimeUs != 0 &&
		r.SendTimeUs <= r.FirstChunkTimeUs && r.FirstChunkTimeUs <= r.LastChunkTimeUs
}

// isWarmUp applies docs/calibrate.md §3: request_id below N, or normalised arrival below D.
func (s *settings) isWarmUp(r *tracev2.Record) bool {
	return r.RequestID < s.warmupN || (s.warmupDurUs > 0 && r.ArrivalTimeUs < s.warmupDurUs)
}

// delays are the network corrections of docs/calibrate.md §5 in µs: RTT, upload, download.
func (s *settings) delays(sim *tracev2.SimResult) (rtt, up, down float64) {
	rtt = float64(s.rttUs)
	if s.bandwidthMbps > 0 {
		// 4 bytes per token = 32 bits; bits / (Mb/s) = µs.
		up = 32 * float64(sim.InputTokens) / s.bandwidthMbps
		down = 32 * float64(sim.OutputTokens) / s.bandwidthMbps
	}
	return rtt, up, down
}

// simTTFT and simE2E are the normalised (client-side) sim latencies.
func (s *settings) simTTFT(sim *tracev2.SimResult) float64 {
	rtt, up, _ := s.delays(sim)
	return sim.TTFTUs + rtt + up
}

func (s *settings) simE2E(sim *tracev2.SimResult) float64 {
	rtt, up, down := s.delays(sim)
	return sim.E2EUs + rtt + up + down
}

// simITL is the sim's per-token latency (docs/calibrate.md §4): itl_mean_us, else
// (e2e − ttft)/(output − 1); ok is false when neither exists.
func simITL(sim *tracev2.SimResult) (float64, bool) {
	if sim.ITLMeanUs > 0 {
		return sim.ITLMeanUs, true
	}
	if sim.OutputTokens >= 2 {
		return (sim.E2EUs - sim.TTFTUs) / float64(sim.OutputTokens-1), true
	}
	return 0, false
}

// realPrompt is the real prompt length of docs/calibrate.md §2 step 3.
func realPrompt(r *tracev2.Record) int {
	if r.ServerInputTokens > 0 {
		return r.ServerInputTokens
	}
	return r.PrefixLength + r.InputTokens
}

// itlMeans computes each request's real mean ITL from the ITL rows: the mean of
// the non-negative differences between consecutive chunks in index order. ok
// lists requests with at least two chunks; dropped, those whose every difference
// is negative.
func itlMeans(chunks []tracev2.ITLRow) (means map[int64]float64, dropped map[int64]bool) {
	sorted := slices.Clone(chunks)
	slices.SortFunc(sorted, func(a, b tracev2.ITLRow) int {
		if a.RequestID != b.RequestID {
			if a.RequestID < b.RequestID {
				return -1
			}
			return 1
		}
		return a.ChunkIndex - b.ChunkIndex
	})
	means = make(map[int64]float64)
	dropped = make(map[int64]bool)
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].RequestID == sorted[i].RequestID {
			j++
		}
		if j-i >= 2 {
			sum, n := 0.0, 0
			for k := i + 1; k < j; k++ {
				d := sorted[k].TimestampUs - sorted[k-1].TimestampUs
				if d >= 0 {
					sum += float64(d)
					n++
				}
			}
			if n > 0 {
				means[sorted[i].RequestID] = sum / float64(n)
			} else {
				dropped[sorted[i].RequestID] = true
			}
		}
		i = j
	}
	return means, dropped
}

func addBreakdown(m map[string]map[string]*pairs, key string, id int64, ttftR, ttftS, e2eR, e2eS float64) {
	if key == "" {
		return
	}
	b, ok := m[key]
	if !ok {
		b = map[string]*pairs{MetricTTFT: {}, MetricE2E: {}}
		m[key] = b
	}
	b[MetricTTFT].add(id, ttftR, ttftS)
	b[MetricE2E].add(id, e2eR, e2eS)
}

// match runs docs/calibrate.md §2–§5 over the input.
func match(in *Input, s *settings) (*matching, error) {
	simIdx, err := indexSim(in)
	if err != nil {
		return nil, err
	}
	traceIDs, err := checkTraceIDs(in)
	if err != nil {
		return nil, err
	}
	m := &matching{
		// A simulated trace (generated, replayed) stamps its first chunk at
		// the first token whether or not the request streams.
		simulated:   in.Header.Mode == tracev2.ModeGenerated || in.Header.Mode == tracev2.ModeReplayed,
		rows:        make([]row, len(in.Trace)),
		numRequests: len(in.Trace),
		metrics:     map[string]*pairs{MetricTTFT: newPairs(len(in.Trace)), MetricE2E: newPairs(len(in.Trace)), MetricTPOT: newPairs(len(in.Trace))},
		byClass:     make(map[string]map[string]*pairs),
		byModel:     make(map[string]map[string]*pairs),
	}
	var itlDropped map[int64]bool
	if in.ITLGiven {
		m.metrics[MetricITL] = newPairs(0)
		m.itlMean, itlDropped = itlMeans(in.ITL)
	}
	unknown := make(map[string]bool)
	for i := range in.Trace {
		rec := &in.Trace[i]
		rw := row{rec: rec, class: rec.SLOClass, model: rec.Model}
		if j, ok := simIdx.get(rec.RequestID); ok {
			rw.sim = &in.Sim[j]
			m.idMatched++
			if rw.class == "" {
				rw.class = rw.sim.SLOClass
			}
			if rw.model == "" {
				rw.model = rw.sim.Model
			}
		}
		if !tracev2.KnownStatus(rec.Status) && !unknown[rec.Status] {
			unknown[rec.Status] = true
			m.unknownStatus = append(m.unknownStatus, rec.Status)
		}
		switch {
		case s.isWarmUp(rec):
			rw.bucket = bucketWarmUp
			m.warmUp++
		case rec.Status != "ok":
			rw.bucket = bucketNonOK
			m.nonOK++
		case rw.sim == nil:
			rw.bucket = bucketUnmatchedReal
			m.unmatchedReal++
		case !validTiming(rec):
			rw.bucket = bucketInvalidTiming
			m.invalidTiming++
		default:
			rw.bucket = bucketMatched
			m.matched++
			m.addPairs(rec, rw.sim, &rw, s, itlDropped)
		}
		m.rows[i] = rw
	}
	for i := range in.Sim {
		if _, ok := traceIDs.get(in.Sim[i].RequestID); !ok {
			m.unmatchedSim++
		}
	}
	return m, nil
}

// addPairs adds one matched row's values to every metric it qualifies for.
func (m *matching) addPairs(rec *tracev2.Record, sim *tracev2.SimResult, rw *row, s *settings, itlDropped map[int64]bool) {
	id := rec.RequestID
	if realPrompt(rec) != sim.InputTokens || rec.OutputTokens != sim.OutputTokens {
		m.tokenMismatches++
	}
	if realPrompt(rec) != sim.InputTokens {
		m.inputMismatch++
	}
	if rec.OutputTokens != sim.OutputTokens {
		m.outputMismatch++
	}
	first := firstTime(rec, s.firstToken)
	ttftR := float64(first - rec.SendTimeUs)
	e2eR := float64(rec.LastChunkTimeUs - rec.SendTimeUs)
	ttftS, e2eS := s.simTTFT(sim), s.simE2E(sim)
	if !isFinite(ttftS) || !isFinite(e2eS) || !isFinite(sim.ITLMeanUs) {
		m.nonFiniteSim++ // decoded JSON cannot hold these; a caller-built value can
		return
	}
	if !rec.Streaming && !m.simulated {
		// A response sent whole reaches the client with its last token:
		// its first chunk is the simulated completion, not the first token.
		ttftS = e2eS
	}
	m.metrics[MetricTTFT].add(id, ttftR, ttftS)
	m.metrics[MetricE2E].add(id, e2eR, e2eS)
	m.arrivals = append(m.arrivals, rec.ArrivalTimeUs)
	addBreakdown(m.byClass, rw.class, id, ttftR, ttftS, e2eR, e2eS)
	addBreakdown(m.byModel, rw.model, id, ttftR, ttftS, e2eR, e2eS)

	simPerTok, simOK := simITL(sim)
	if !rec.Streaming && !m.simulated {
		m.nonStreamed++ // its one chunk came with the last token: first − last is no decode time
	} else if rec.OutputTokens >= 2 && simOK {
		m.metrics[MetricTPOT].add(id, float64(rec.LastChunkTimeUs-first)/float64(rec.OutputTokens-1), simPerTok)
	}
	if p := m.metrics[MetricITL]; p != nil {
		if itlDropped[id] {
			m.itlDropped++
		} else if mean, ok := m.itlMean[id]; ok && sim.OutputTokens >= 2 && simOK {
			p.add(id, mean, simPerTok)
		}
	}
}
