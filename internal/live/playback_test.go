package live

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// closedLoopTrace is a closed-loop trace whose sessions hit every case of
// the playback's think-time rule: a recorded gap of 0, a recorded gap, a
// row's own think time, a round whose predecessor's last chunk was not
// recorded, and a concurrency user (which goes on after a failed round).
// Times in µs; the default think time of the tests is defaultThinkUs.
func closedLoopTrace() []tracev2.Record {
	row := func(id int64, sid string, round int, arrival, lastChunk, think int64) tracev2.Record {
		r := tracev2.Record{RequestID: id, SessionID: sid, RoundIndex: round, InputTokens: 20, OutputTokens: 4,
			ArrivalTimeUs: arrival, SendTimeUs: arrival, LastChunkTimeUs: lastChunk, ThinkTimeUs: think, Status: "ok", Streaming: true}
		if lastChunk > 0 {
			r.FirstChunkTimeUs = arrival + 1
		}
		return r
	}
	return []tracev2.Record{
		row(0, "sess_a", 0, 0, 10_000, 0),
		row(1, "sess_a", 1, 10_000, 25_000, 0),    // sent the moment round 0 ended: gap 0
		row(2, "sess_a", 2, 40_000, 50_000, 0),    // gap 15 ms
		row(3, "sess_a", 3, 60_000, 70_000, 4000), // its own think time
		row(4, "sess_b", 0, 1_000, 0, 0),          // no last chunk recorded
		row(5, "sess_b", 1, 20_000, 30_000, 0),    // so: the default
		row(6, "concurrency_chat_user_0", 0, 2_000, 8_000, 0),
		row(7, "concurrency_chat_user_0", 1, 8_000, 9_000, 0), // gap 0
		row(8, "concurrency_chat_user_0", 2, 30_000, 35_000, 3000),
		row(9, "", 0, 5_000, 6_000, 0),
	}
}

const defaultThinkUs = 7000

// replayThinkUs is the think time replay gives each later round of
// closedLoopTrace (docs/simulator.md §13): after a completed round, and
// after a failed one (only the concurrency user goes on).
var replayThinkUs = map[[2]any][2]int64{
	{"sess_a", 1}:                  {0, defaultThinkUs}, // gap 0 is a think time of 0
	{"sess_a", 2}:                  {15_000, defaultThinkUs},
	{"sess_a", 3}:                  {4000, 4000},
	{"sess_b", 1}:                  {defaultThinkUs, defaultThinkUs},
	{"concurrency_chat_user_0", 1}: {0, defaultThinkUs},
	{"concurrency_chat_user_0", 2}: {3000, 3000},
}

func writeClosedLoopTrace(t *testing.T) string {
	t.Helper()
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeReal
	var b bytes.Buffer
	if err := tracev2.WriteStream(&b, h, tracev2.Columns{ThinkTime: true}, closedLoopTrace()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "closed.trace")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func playConfig(path, mode string) *TraceConfig {
	return &TraceConfig{Path: path, TimeScale: 1, InjectAt: "arrival", SessionMode: mode, HashBlock: 512,
		ThinkTime: defaultThinkUs * time.Microsecond}
}

// TestDryRunPlansReplayThinkTimes: observe --dry-run --trace plans every
// later session round with the think time replay gives it after a
// completed round (the think_time_us column of the plan), a recorded gap
// of 0 included.
func TestDryRunPlansReplayThinkTimes(t *testing.T) {
	var out, errs bytes.Buffer
	in := Config{DryRun: true, TraceOutput: "-", ScrapeInterval: time.Second, PercentileMetrics: "ttft", MetricPercentiles: "99",
		Trace: playConfig(writeClosedLoopTrace(t), tracev2.SessionFixed)}
	if err := Run(context.Background(), in, IO{In: bytes.NewReader(nil), Out: &out, Err: &errs}); err != nil {
		t.Fatalf("dry run: %v\n%s", err, errs.String())
	}
	r, _, err := tracev2.Open(tracev2.Input{Path: "-", Stdin: &out}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tracev2.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Records) != len(closedLoopTrace()) {
		t.Fatalf("the plan has %d rows, want %d", len(tr.Records), len(closedLoopTrace()))
	}
	seen := 0
	for _, rec := range tr.Records {
		want, ok := replayThinkUs[[2]any{rec.SessionID, rec.RoundIndex}]
		if !ok {
			continue
		}
		seen++
		if rec.ThinkTimeUs != want[0] {
			t.Errorf("%s round %d: planned think_time_us %d, want %d (replay's)", rec.SessionID, rec.RoundIndex, rec.ThinkTimeUs, want[0])
		}
	}
	if seen != len(replayThinkUs) {
		t.Errorf("the plan has %d later rounds, want %d", seen, len(replayThinkUs))
	}
}

// TestClosedLoopPlaysReplayThinkTimes: in closed loop, each later round is
// sent its replay think time after its predecessor's last chunk, or after
// its failure; a failed round ends its session unless it is a concurrency
// user's, which goes on.
func TestClosedLoopPlaysReplayThinkTimes(t *testing.T) {
	cfg := &config{}
	tr, err := readTrace(playConfig(writeClosedLoopTrace(t), tracev2.SessionClosedLoop), cfg, IO{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p, err := httpload.NewPrompter(tr.seed(), 1)
	if err != nil {
		t.Fatal(err)
	}
	pl := tr.newPlanner(p, cfg, 0, nil).(*tracePlanner)
	jobs := map[[2]any]httpload.Job{} // by session and round
	key := func(j httpload.Job) [2]any {
		r := &tr.p.rows[j.ID]
		return [2]any{r.sessionID, int(r.round)}
	}
	for j := range pl.jobs {
		jobs[key(j)] = j
	}
	if len(jobs) != 4 {
		t.Fatalf("%d first rounds planned, want 4 (3 sessions, 1 row outside)", len(jobs))
	}
	steps := []struct {
		session       string
		round         int
		status        httpload.Status
		lastChunk     int64 // of the finished round; 0 = nothing streamed
		done          int64
		wantNext      bool
		wantAt, think int64 // the next round's intended send and think time
	}{
		{"sess_a", 0, httpload.StatusOK, 100_000, 100_500, true, 100_000, 0},
		{"sess_a", 1, httpload.StatusOK, 0, 200_000, true, 215_000, 15_000},
		{"sess_a", 2, httpload.StatusOK, 300_000, 300_100, true, 304_000, 4000},
		{"sess_b", 0, httpload.StatusError, 0, 50_000, false, 0, 0},
		{"concurrency_chat_user_0", 0, httpload.StatusError, 0, 60_000, true, 67_000, defaultThinkUs},
		{"concurrency_chat_user_0", 1, httpload.StatusTimeout, 0, 90_000, true, 93_000, 3000},
	}
	for _, s := range steps {
		k := [2]any{s.session, s.round}
		j, ok := jobs[k]
		if !ok {
			t.Fatalf("%s round %d was never planned", s.session, s.round)
		}
		pl.take(j.ID)
		res := httpload.Result{Job: j, Status: s.status, LastChunkUS: s.lastChunk, DoneUS: s.done}
		next, ok := pl.followUp(res)
		if ok != s.wantNext {
			t.Fatalf("%s round %d (%s): follow-up %v, want %v", s.session, s.round, s.status, ok, s.wantNext)
		}
		if !ok {
			continue
		}
		nk := key(next)
		if nk != [2]any{s.session, s.round + 1} {
			t.Fatalf("%s round %d: the follow-up is %v, want round %d", s.session, s.round, nk, s.round+1)
		}
		want := replayThinkUs[nk]
		if s.status != httpload.StatusOK {
			want[0] = want[1]
		}
		info := pl.take(next.ID)
		if next.IntendedUS != s.wantAt || info.thinkTimeUs != s.think || s.think != want[0] {
			t.Errorf("%s round %d: sent at %d µs, think %d; want %d, %d (replay's %d)", s.session, s.round+1,
				next.IntendedUS, info.thinkTimeUs, s.wantAt, s.think, want[0])
		}
		jobs[nk] = next
	}
	if pl.cancelled != 1 {
		t.Errorf("%d rounds cancelled, want 1 (sess_b's round 1)", pl.cancelled)
	}
}
