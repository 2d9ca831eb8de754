package fit

import (
	"math"
	"slices"

	"servesim/internal/tracev2"
)

// target is one measured request the fit tries to reproduce. Client-side
// values are those calibrate compares (first − send, last − send); the
// server-side TTFT has the round trip taken off.
type target struct {
	id         int64
	ttftClient float64 // first − send, µs
	e2eClient  float64 // last − send, µs
	ttft       float64 // server side: ttftClient − RTT
	decode     float64 // last − first, µs
	output     int
	holdout    bool
	held       bool    // sent well after its intended arrival: a capped client held it back
	lastChunk  int64   // client time of the last chunk, µs (it may follow the last token: finish-only and usage-only chunks)
	chunks     []int64 // client times of the output tokens (ITL data), when the data hold one chunk per token
}

// heldAfterUs: a request of a capped client sent this long after its
// intended arrival waited for a slot.
const heldAfterUs = 1000

// targets picks the requests a fit can use: status ok, not warm-up, with
// consistent chunk times (the buckets calibrate grades), and marks the
// held-out ones.
func targets(recs []tracev2.Record, cfg *Config) (fit, holdout int, ts []target) {
	for i := range recs {
		r := &recs[i]
		if r.RequestID < cfg.WarmupRequests || r.Status != "ok" || r.OutputTokens < 1 {
			continue
		}
		send, first, last := r.SendTimeUs, r.FirstChunkTimeUs, r.LastChunkTimeUs
		if first == 0 || last == 0 || !(send <= first && first <= last) {
			continue
		}
		t := target{id: r.RequestID, ttftClient: float64(first - send), e2eClient: float64(last - send),
			ttft: float64(first-send) - float64(cfg.RTTUs), decode: float64(last - first), output: r.OutputTokens, lastChunk: last}
		t.holdout = cfg.Holdout > 0 && unitHash(cfg.Seed, r.RequestID) < cfg.Holdout
		t.held = cfg.Client.Capped() && send-r.ArrivalTimeUs > heldAfterUs
		if t.holdout {
			holdout++
		} else {
			fit++
		}
		ts = append(ts, t)
	}
	return fit, holdout, ts
}

// attachITL gives each target the client times of its output tokens from
// the ITL data: the output_tokens chunks starting at the first chunk stamped
// at the record's first-token time (ext_first_token_time_us; the first
// chunk's time when the trace has no such column). Chunks that carry no
// token are left out that way: a leading role-only chunk stamped before the
// first token, and trailing finish-only and usage-only chunks (Ollama sends
// both after the last token). A role-only chunk stamped in the same
// microsecond as the first token cannot be told from it by time; it is then
// taken for the first token, which shifts the token times by one chunk (a
// trace that recorded the first token's chunk index would settle it).
// Requests whose chunks are fewer than their tokens (several tokens per
// chunk) or out of order keep their aggregate equation. It returns how many
// requests got token times.
func attachITL(ts []target, recs []tracev2.Record, rows []tracev2.ITLRow) int {
	if len(rows) == 0 {
		return 0
	}
	byID := make(map[int64][]tracev2.ITLRow)
	for _, r := range rows {
		byID[r.RequestID] = append(byID[r.RequestID], r)
	}
	firstTok := make(map[int64]int64, len(recs))
	for i := range recs {
		ft := recs[i].FirstTokenTimeUs
		if ft <= 0 {
			ft = recs[i].FirstChunkTimeUs
		}
		firstTok[recs[i].RequestID] = ft
	}
	n := 0
	for i := range ts {
		t := &ts[i]
		chunks := byID[t.id]
		if len(chunks) < t.output || t.output < 2 {
			continue
		}
		slices.SortFunc(chunks, func(a, b tracev2.ITLRow) int { return a.ChunkIndex - b.ChunkIndex })
		if tok := tokenTimes(chunks, firstTok[t.id], t.output, t.lastChunk); tok != nil {
			t.chunks = tok
			n++
		}
	}
	return n
}

// tokenTimes picks the out token-bearing chunk times from one request's
// chunks (in index order): out chunks from the first stamped at first, in
// non-decreasing time, ending no later than last (the record's last chunk).
// It returns nil when the chunks do not hold such a run.
func tokenTimes(chunks []tracev2.ITLRow, first int64, out int, last int64) []int64 {
	k := slices.IndexFunc(chunks, func(c tracev2.ITLRow) bool { return c.TimestampUs >= first })
	if k < 0 || chunks[k].TimestampUs != first || k+out > len(chunks) {
		return nil
	}
	tok := make([]int64, out)
	for j := range tok {
		tok[j] = chunks[k+j].TimestampUs
		if j > 0 && tok[j] < tok[j-1] {
			return nil
		}
	}
	if tok[out-1] > last {
		return nil
	}
	return tok
}

// unitHash maps (seed, id) to [0, 1) deterministically (splitmix64).
func unitHash(seed, id int64) float64 {
	z := uint64(seed) ^ (uint64(id) * 0x9e3779b97f4a7c15)
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// errorsOf is the MAPE of TTFT and E2E (client side, sim + RTT against
// measured) over the targets of one set, and over those of each load
// regime the replay met (loadOf).
func errorsOf(ts []target, res map[int64]simResult, rtt int64, holdout bool) Errors {
	var all errorSums
	byLoad := map[Regime]*errorSums{}
	load := loadOf(res)
	for i := range ts {
		t := &ts[i]
		if t.holdout != holdout {
			continue
		}
		s, ok := res[t.id]
		g := load[t.id]
		sums := []*errorSums{&all}
		if g != "" {
			if byLoad[g] == nil {
				byLoad[g] = &errorSums{}
			}
			sums = append(sums, byLoad[g])
		}
		for _, e := range sums {
			e.add(t, s, ok, rtt)
		}
	}
	e := all.errors()
	for _, g := range Regimes() {
		if l := byLoad[g]; l != nil {
			if e.ByLoad == nil {
				e.ByLoad = map[Regime]Errors{}
			}
			e.ByLoad[g] = l.errors()
		}
	}
	return e
}

// errorSums accumulates the relative errors of a set of requests.
type errorSums struct {
	e          Errors
	sumT, sumE float64
}

// add compares one target with its simulated result s (ok: s exists).
func (a *errorSums) add(t *target, s simResult, ok bool, rtt int64) {
	if !ok || !s.completed {
		a.e.Missing++
		return
	}
	a.e.N++
	if t.ttftClient > 0 {
		a.sumT += math.Abs(float64(s.ttft+rtt)-t.ttftClient) / t.ttftClient
		a.e.nT++
	}
	if t.e2eClient > 0 {
		a.sumE += math.Abs(float64(s.e2e+rtt)-t.e2eClient) / t.e2eClient
		a.e.nE++
	}
}

// errors are the MAPEs of what was added.
func (a *errorSums) errors() Errors {
	e := a.e
	if e.nT > 0 {
		e.TTFTMAPE = a.sumT / float64(e.nT)
	}
	if e.nE > 0 {
		e.E2EMAPE = a.sumE / float64(e.nE)
	}
	return e
}

// loadOf classes every replayed request by the load it met in the replay
// (ClassifyLoad on the simulated engine times); a request never scheduled
// is left out.
func loadOf(res map[int64]simResult) map[int64]Regime {
	ids := make([]int64, 0, len(res))
	for id := range res {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	spans := make([]Span, len(ids))
	for i, id := range ids {
		s := res[id]
		spans[i] = SimSpan(s.arrival, s.sched, s.done, s.completed)
	}
	out := make(map[int64]Regime, len(ids))
	for i, g := range ClassifyLoad(spans) {
		if g != "" {
			out[ids[i]] = g
		}
	}
	return out
}
