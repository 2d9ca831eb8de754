package live

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// TestTracePlaysInReplayOrder: observe --trace plays rows in replay's
// order (playback.Order: injection time, then request id), not by round,
// and a row whose deadline is its arrival (a budget of 0) keeps a deadline
// at its send time, at the origin too, so that it is not sent: replay
// times it out at injection.
func TestTracePlaysInReplayOrder(t *testing.T) {
	row := func(id int64, sid string, round, in int, arrival, deadline int64) tracev2.Record {
		return tracev2.Record{RequestID: id, SessionID: sid, RoundIndex: round, InputTokens: in, OutputTokens: 4,
			ArrivalTimeUs: arrival, SendTimeUs: arrival, DeadlineUs: deadline, Status: "ok"}
	}
	recs := []tracev2.Record{
		row(7, "", 0, 30, 100, 400), // a tie at 100 µs: id 7 after id 4, whatever the rounds
		row(4, "s", 1, 20, 100, 0),  // no deadline
		row(2, "s", 0, 10, 50, 50),  // the first played row (at 0), deadline at its arrival
		row(9, "", 0, 40, 250, 250), // deadline at its arrival
	}
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeReal
	var b bytes.Buffer
	if err := tracev2.WriteStream(&b, h, tracev2.Columns{}, recs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ties.trace")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &config{}
	tr, err := readTrace(playConfig(path, tracev2.SessionFixed), cfg, IO{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p, err := httpload.NewPrompter(tr.seed(), 1)
	if err != nil {
		t.Fatal(err)
	}
	pl := tr.newPlanner(p, cfg, 0, nil).(*tracePlanner)
	type planned struct{ prompt, at, deadline int64 }
	var got []planned
	for j := range pl.jobs {
		got = append(got, planned{int64(tr.p.rows[j.ID].prompt), j.IntendedUS, j.DeadlineUS})
	}
	want := []planned{{10, 0, 1}, {20, 50, 0}, {30, 50, 350}, {40, 200, 200}}
	if len(got) != len(want) {
		t.Fatalf("planned %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("job %d: prompt %d at %d µs, deadline %d; want prompt %d at %d, deadline %d",
				i, got[i].prompt, got[i].at, got[i].deadline, want[i].prompt, want[i].at, want[i].deadline)
		}
	}
}
