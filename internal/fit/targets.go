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
	chunks     []int64 // client times of the output tokens (ITL data), when they map one to one
}

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
			ttft: float64(first-send) - float64(cfg.RTTUs), decode: float64(last - first), output: r.OutputTokens}
		t.holdout = cfg.Holdout > 0 && unitHash(cfg.Seed, r.RequestID) < cfg.Holdout
		if t.holdout {
			holdout++
		} else {
			fit++
		}
		ts = append(ts, t)
	}
	return fit, holdout, ts
}

// attachITL gives each target the times of its output tokens when the ITL
// data has exactly one chunk per output token between the first and the
// last chunk (inclusive); other chunk layouts (role-only or usage-only
// chunks, several tokens per chunk) leave the request to its aggregate
// equation. It returns how many requests got token times.
func attachITL(ts []target, recs []tracev2.Record, rows []tracev2.ITLRow) int {
	if len(rows) == 0 {
		return 0
	}
	byID := make(map[int64][]tracev2.ITLRow)
	for _, r := range rows {
		byID[r.RequestID] = append(byID[r.RequestID], r)
	}
	times := make(map[int64][2]int64, len(recs))
	for i := range recs {
		times[recs[i].RequestID] = [2]int64{recs[i].FirstChunkTimeUs, recs[i].LastChunkTimeUs}
	}
	n := 0
	for i := range ts {
		t := &ts[i]
		chunks := byID[t.id]
		if len(chunks) < 2 || t.output < 2 {
			continue
		}
		slices.SortFunc(chunks, func(a, b tracev2.ITLRow) int { return a.ChunkIndex - b.ChunkIndex })
		fl := times[t.id]
		var tok []int64
		ok := true
		for k, c := range chunks {
			if c.TimestampUs < fl[0] || c.TimestampUs > fl[1] {
				continue
			}
			if k > 0 && len(tok) > 0 && c.TimestampUs < tok[len(tok)-1] {
				ok = false
				break
			}
			tok = append(tok, c.TimestampUs)
		}
		if ok && len(tok) == t.output && tok[0] == fl[0] && tok[len(tok)-1] == fl[1] {
			t.chunks = tok
			n++
		}
	}
	return n
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
// measured) over the targets of one set.
func errorsOf(ts []target, res map[int64]simResult, rtt int64, holdout bool) Errors {
	var e Errors
	var sumT, sumE float64
	for i := range ts {
		t := &ts[i]
		if t.holdout != holdout {
			continue
		}
		s, ok := res[t.id]
		if !ok || !s.completed {
			e.Missing++
			continue
		}
		e.N++
		if t.ttftClient > 0 {
			sumT += math.Abs(float64(s.ttft+rtt)-t.ttftClient) / t.ttftClient
			e.nT++
		}
		if t.e2eClient > 0 {
			sumE += math.Abs(float64(s.e2e+rtt)-t.e2eClient) / t.e2eClient
			e.nE++
		}
	}
	if e.nT > 0 {
		e.TTFTMAPE = sumT / float64(e.nT)
	}
	if e.nE > 0 {
		e.E2EMAPE = sumE / float64(e.nE)
	}
	return e
}
