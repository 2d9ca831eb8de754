package fit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// synth describes a synthetic measurement: requests arriving as a Poisson
// process, replayed through the simulator with known coefficients, their
// chunk times then perturbed by a seeded relative noise.
type synth struct {
	n           int
	ratePerS    float64
	promptLo    int
	promptHi    int
	outLo       int
	outHi       int
	kind        string
	alpha, beta []float64
	noise       float64 // relative, uniform in ±noise
	seed        uint64
	itl         bool // also write one ITL chunk per token
	// users, if positive, makes the run a closed loop instead: that many
	// users (sessions "concurrency_<u>"), each sending its next request
	// thinkUs after its last one completed, n requests in all.
	users   int
	thinkUs int64
	// client, if capped, holds arrivals while its cap is reached (the
	// measured arrival stays the intended one; the send is when the
	// simulation sent it).
	client replay.Client
}

// deployment is the test deployment: the default one (Qwen3-14B on an H100)
// with the given latency model and coefficients.
func testDeployment(t testing.TB, kind string, alpha, beta []float64) *deploy.Resolved {
	t.Helper()
	cfg := deploy.Default()
	cfg.LatencyModel, cfg.AlphaCoeffs, cfg.BetaCoeffs = kind, alpha, beta
	cfg.MaxNumSeqs = 64
	d, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// make simulates the synthetic run and returns its trace as a measurement
// (mode real: send, first and last chunk times) and its ITL rows.
func (s synth) make(t testing.TB) ([]tracev2.Record, []tracev2.ITLRow) {
	t.Helper()
	return s.makeOn(t, testDeployment(t, s.kind, s.alpha, s.beta))
}

// makeOn is make on the deployment dep (its coefficients are the truth).
func (s synth) makeOn(t testing.TB, dep *deploy.Resolved) ([]tracev2.Record, []tracev2.ITLRow) {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 7))
	recs := make([]tracev2.Record, s.n)
	at := int64(1000)
	for i := range recs {
		recs[i] = tracev2.Record{RequestID: int64(i), SLOClass: "standard", Streaming: true,
			InputTokens: s.promptLo + rng.IntN(s.promptHi-s.promptLo+1), OutputTokens: s.outLo + rng.IntN(s.outHi-s.outLo+1),
			Status: "ok"}
		if s.users > 0 {
			// Round i/users of user i%users; the first rounds start 1 ms
			// apart, the later ones follow completions (their times are
			// set from the simulation below).
			u := i % s.users
			recs[i].SessionID, recs[i].RoundIndex, recs[i].ThinkTimeUs = fmt.Sprintf("concurrency_%d", u), i/s.users, s.thinkUs
			if i < s.users {
				at += 1000
			}
		} else {
			at += int64(rng.ExpFloat64() / s.ratePerS * 1e6)
		}
		recs[i].ArrivalTimeUs, recs[i].SendTimeUs = at, at
	}
	sp, err := newSpace(kindOf(t, s.kind), dep.Instance.Latency, s.alpha, s.beta, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(dep.Instance.Latency, sp, s.n)
	d := *dep
	d.Instance.Latency, d.Instance.FastForward = rec, false
	cfg := Config{Deploy: &d, Replay: replay.TraceOptions{ClosedLoop: s.users > 0, InjectAtArrival: s.client.Capped()}, Client: s.client}
	if err := replayTrace(context.Background(), &cfg, recs, &d, rec); err != nil {
		t.Fatal(err)
	}
	aTok := dep.Instance.Latency.TokenOverhead()
	aEnd := dep.Instance.Latency.EndOverhead()
	var itl []tracev2.ITLRow
	for i := range recs {
		r := &recs[i]
		res, ok := rec.results[r.RequestID]
		if !ok || !res.completed {
			t.Fatalf("request %d did not complete", r.RequestID)
		}
		// A closed loop's later rounds were sent when the simulation
		// made them arrive; a capped client's held requests when it sent
		// them.
		if !s.client.Capped() {
			r.ArrivalTimeUs = res.arrival
		}
		r.SendTimeUs = res.arrival
		jitter := func() float64 { return 1 + s.noise*(2*rng.Float64()-1) }
		ttft := float64(res.ttft) * jitter()
		r.FirstChunkTimeUs = r.SendTimeUs + int64(math.Round(ttft))
		r.LastChunkTimeUs = r.FirstChunkTimeUs + int64(math.Round(float64(res.e2e-res.ttft)*jitter()))
		r.NumChunks = r.OutputTokens
		if !s.itl {
			continue
		}
		// Token k ends the k-th step after the first token; its client
		// time carries k·A_tok, and the last one A_end too.
		lo, hi := rec.Steps(res.firstToken, res.done)
		if hi-lo != r.OutputTokens-1 {
			continue // a request that skipped a step: no ITL rows
		}
		tm, prev := r.FirstChunkTimeUs, res.firstToken
		itl = append(itl, tracev2.ITLRow{RequestID: r.RequestID, ChunkIndex: 0, TimestampUs: tm})
		for k := 1; k < r.OutputTokens; k++ {
			end := rec.end[lo+k-1]
			gap := float64(end-prev) + float64(aTok)
			prev = end
			if k == r.OutputTokens-1 {
				gap += float64(aEnd)
			}
			tm += int64(math.Round(gap * jitter()))
			itl = append(itl, tracev2.ITLRow{RequestID: r.RequestID, ChunkIndex: k, TimestampUs: tm})
		}
		r.LastChunkTimeUs = tm
	}
	return recs, itl
}

func kindOf(t testing.TB, s string) latency.Kind {
	t.Helper()
	k, err := latency.ParseKind(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
