package fit

import (
	"context"
	"math"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// closedTruth is a closed-loop measurement: 4 users, each sending its next
// request 20 ms after its last one completed, on a server of 4 sequences,
// blackbox truth as blackboxTruth. The batch holds 3 or 4 sequences nearly
// always, so a replay whose follow-ups arrive by its own completions drifts
// away from the measured batches as soon as its coefficients are off: the
// equations oscillated between two wrong points when taken from such
// replays.
func closedTruth() synth {
	return synth{n: 240, promptLo: 100, promptHi: 1500, outLo: 10, outHi: 200, kind: "blackbox",
		alpha: []float64{10000, 0, 0}, beta: []float64{6000, 20, 300}, noise: 0.01, seed: 11, itl: true,
		users: 4, thinkUs: 20000}
}

// seqDeployment is testDeployment with a cap of seqs sequences.
func seqDeployment(t testing.TB, alpha, beta []float64, seqs int) *deploy.Resolved {
	t.Helper()
	cfg := deploy.Default()
	cfg.LatencyModel, cfg.AlphaCoeffs, cfg.BetaCoeffs, cfg.MaxNumSeqs = "blackbox", alpha, beta, seqs
	d, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFitClosedLoop fits a closed-loop run the way `replay --session-mode
// closed-loop` replays it: later rounds arrive at the simulated completion
// of the one before plus the think time. The fit recovers the truth, and
// the errors it reports are those of that replay, computed apart through
// replay.Simulate with fast-forward on (what the replay binary runs).
func TestFitClosedLoop(t *testing.T) {
	s := closedTruth()
	truth := seqDeployment(t, s.alpha, s.beta, 4)
	recs, itl := s.makeOn(t, truth)
	opts := replay.TraceOptions{ClosedLoop: true}
	dep := seqDeployment(t, []float64{0, 0, 0}, []float64{10000, 20, 100}, 4)
	res, err := Fit(context.Background(), Config{Deploy: dep, Seed: 1, Replay: opts}, Input{Records: recs, ITL: itl})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("alpha %.5g beta %.5g; start TTFT %.3f E2E %.3f; fit TTFT %.4f E2E %.4f; %d replays",
		res.Alpha, res.Beta, res.Start.TTFTMAPE, res.Start.E2EMAPE, res.Fit.TTFTMAPE, res.Fit.E2EMAPE, res.Iterations)
	for i, want := range s.beta {
		if got := res.Beta[i]; math.Abs(got-want) > 0.05*want {
			t.Errorf("beta[%d] = %.5g, want %.5g ± 5%%", i, got, want)
		}
	}
	// α₀ within 10 %: it trades with the half step a request waits for
	// the step in progress (doc.go, "Phase"), and with the batch nearly
	// always full, steps are long against the 10 ms.
	if got, want := res.Alpha[0], s.alpha[0]; math.Abs(got-want) > 0.10*want {
		t.Errorf("alpha[0] = %.5g, want %.5g ± 10%%", got, want)
	}
	if res.Fit.E2EMAPE > 0.02 || res.Start.E2EMAPE < 0.3 {
		t.Errorf("E2E MAPE %.3f from a start of %.3f; want at most 0.02 from a start at least 0.3 off", res.Fit.E2EMAPE, res.Start.E2EMAPE)
	}
	fitted := seqDeployment(t, res.Alpha, res.Beta, 4)
	for _, tc := range []struct {
		name string
		opts replay.TraceOptions
	}{{"closed loop", opts}, {"fixed", replay.TraceOptions{}}} {
		ttft, e2e := replayMAPE(t, fitted, tc.opts, recs)
		if tc.opts.ClosedLoop {
			if math.Abs(ttft-res.Fit.TTFTMAPE) > 1e-12 || math.Abs(e2e-res.Fit.E2EMAPE) > 1e-12 {
				t.Errorf("%s replay: TTFT MAPE %.6f, E2E %.6f; the fit reported %.6f, %.6f", tc.name, ttft, e2e, res.Fit.TTFTMAPE, res.Fit.E2EMAPE)
			}
			continue
		}
		// The check is not vacuous: injecting every row at its recorded
		// send time replays another run.
		if e2e == res.Fit.E2EMAPE {
			t.Errorf("%s replay: E2E MAPE %.6f equals the closed loop's", tc.name, e2e)
		}
	}
}

// replayMAPE replays recs through replay.Simulate with dep as is and
// returns the TTFT and E2E MAPE against the records (no RTT), as calibrate
// grades them.
func replayMAPE(t *testing.T, dep *deploy.Resolved, opts replay.TraceOptions, recs []tracev2.Record) (ttft, e2e float64) {
	t.Helper()
	tr, err := replay.NewTrace(replay.RecordRows(recs), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sim := map[int64]*tracev2.SimResult{}
	sink := func(_ *tracev2.Record, r *tracev2.SimResult) error {
		c := *r
		sim[r.RequestID] = &c
		return nil
	}
	if _, err := replay.Simulate(context.Background(), replay.Config{Deploy: dep, Seed: 1}, tr, tr.FollowUps(), sink); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		r := &recs[i]
		s, ok := sim[r.RequestID]
		if !ok {
			t.Fatalf("request %d not replayed", r.RequestID)
		}
		realT, realE := float64(r.FirstChunkTimeUs-r.SendTimeUs), float64(r.LastChunkTimeUs-r.SendTimeUs)
		ttft += math.Abs(s.TTFTUs-realT) / realT
		e2e += math.Abs(s.E2EUs-realE) / realE
	}
	return ttft / float64(len(recs)), e2e / float64(len(recs))
}

// stubFollowUps hands out one fixed next round, arriving at done + think.
type stubFollowUps struct {
	next  tracev2.Record
	think int64
}

func (s *stubFollowUps) OnComplete(_ *tracev2.Record, doneUs int64, _ int) (*tracev2.Record, bool) {
	n := s.next
	n.ArrivalTimeUs = doneUs + s.think
	return &n, true
}

func (s *stubFollowUps) OnFailed(*tracev2.Record, int64, bool) (*tracev2.Record, bool) {
	return nil, false
}

// TestAnchoredFollowUps: a later round arrives at the later of its
// measured send time and the simulated completion plus think time, keeping
// its deadline budget.
func TestAnchoredFollowUps(t *testing.T) {
	tests := []struct {
		name              string
		send, done, think int64
		deadline          int64 // 700 µs after the unanchored arrival, when set
		wantArrival       int64
	}{
		{"replay faster: waits for the measured send", 5000, 3000, 100, 0, 5000},
		{"replay slower: follows its completion", 5000, 6000, 100, 0, 6100},
		{"deadline budget kept", 5000, 3000, 100, 3100 + 700, 5000},
		{"no send time: completion", 0, 3000, 100, 0, 3100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &anchoredFollowUps{inner: &stubFollowUps{next: tracev2.Record{RequestID: 2, SendTimeUs: tc.send, DeadlineUs: tc.deadline}, think: tc.think}}
			got, ok := a.OnComplete(&tracev2.Record{RequestID: 1}, tc.done, 10)
			if !ok || got.ArrivalTimeUs != tc.wantArrival {
				t.Fatalf("arrival %d (ok %v), want %d", got.ArrivalTimeUs, ok, tc.wantArrival)
			}
			if tc.deadline > 0 && got.DeadlineUs != tc.wantArrival+700 {
				t.Errorf("deadline %d, want %d (700 µs after arrival, as before)", got.DeadlineUs, tc.wantArrival+700)
			}
		})
	}
}
