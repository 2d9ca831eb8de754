package replay

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"

	"servesim/internal/tracev2"
)

func drain(t *testing.T, src Source) []tracev2.Record {
	t.Helper()
	var out []tracev2.Record
	for {
		rec, err := src.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *rec)
	}
}

type row struct {
	id                      int64
	arrival, send, deadline int64
	status                  string
	session                 string
	round                   int
	lastChunk, think        int64
}

func recs(rows ...row) []tracev2.Record {
	out := make([]tracev2.Record, len(rows))
	for i, r := range rows {
		st := r.status
		if st == "" {
			st = "ok"
		}
		out[i] = tracev2.Record{RequestID: r.id, ArrivalTimeUs: r.arrival, SendTimeUs: r.send, DeadlineUs: r.deadline,
			Status: st, SessionID: r.session, RoundIndex: r.round, LastChunkTimeUs: r.lastChunk, ThinkTimeUs: r.think,
			InputTokens: 10, OutputTokens: 5}
	}
	return out
}

// injected is (request id, arrival, deadline) of each row the source yields.
type injected struct{ id, at, deadline int64 }

func injections(t *testing.T, tr *Trace) []injected {
	var out []injected
	for _, r := range drain(t, tr) {
		out = append(out, injected{r.RequestID, r.ArrivalTimeUs, r.DeadlineUs})
	}
	return out
}

func TestNewTraceOrder(t *testing.T) {
	// Completion order, as a real trace lists its rows.
	in := []row{
		{id: 3, arrival: 300, send: 320, deadline: 1300},
		{id: 1, arrival: 100, send: 150},
		{id: 0, arrival: 0, send: 0, deadline: 500}, // no send time: injected at arrival
		{id: 2, arrival: 200, send: 150},            // same send as id 1: ties by id
		{id: 4, arrival: 400, send: 450, status: "error"},
	}
	tests := []struct {
		name string
		opts TraceOptions
		want []injected
		skip int
	}{
		{"send", TraceOptions{}, []injected{{0, 0, 500}, {1, 150, 0}, {2, 150, 0}, {3, 320, 1320}, {4, 450, 0}}, 0},
		{"arrival", TraceOptions{InjectAtArrival: true}, []injected{{0, 0, 500}, {1, 100, 0}, {2, 200, 0}, {3, 300, 1300}, {4, 400, 0}}, 0},
		{"skip failed", TraceOptions{SkipFailed: true}, []injected{{0, 0, 500}, {1, 150, 0}, {2, 150, 0}, {3, 320, 1320}}, 1},
	}
	for _, tt := range tests {
		tr, err := NewTrace(RecordRows(recs(in...)), tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := injections(t, tr); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		if tr.Skipped() != tt.skip || tr.Len() != len(tt.want) || tr.FollowUps() != nil {
			t.Errorf("%s: skipped %d len %d, want %d %d and no follow-ups", tt.name, tr.Skipped(), tr.Len(), tt.skip, len(tt.want))
		}
		if got, want := tr.RequestIDs(), ids(tt.want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: request ids %v, want %v", tt.name, got, want)
		}
	}
}

func TestNewTraceNegativeStart(t *testing.T) {
	tr, err := NewTrace(RecordRows(recs(row{id: 0, arrival: -50, send: -40}, row{id: 1, arrival: 10})), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []injected{{0, 0, 0}, {1, 60, 0}} // a send time ≤ 0 is "not sent": row 0 goes at its arrival
	if got := injections(t, tr); !reflect.DeepEqual(got, want) || len(tr.Warnings()) != 1 {
		t.Errorf("got %v warnings %q, want %v and one warning", got, tr.Warnings(), want)
	}
}

func TestNewTraceErrors(t *testing.T) {
	tests := []struct {
		recs []tracev2.Record
		opts TraceOptions
		want string
	}{
		{nil, TraceOptions{}, "the trace has no requests"},
		{recs(row{id: 1, status: "timeout"}, row{id: 2, status: "error"}), TraceOptions{SkipFailed: true},
			"no request is left: all 2 rows have a status other than ok (--skip-failed)"},
		{recs(row{id: 1}), TraceOptions{ThinkTimeUs: -1}, "think time -1 µs is negative"},
	}
	for _, tt := range tests {
		_, err := NewTrace(RecordRows(tt.recs), tt.opts)
		var ec interface{ ExitCode() int }
		if err == nil || err.Error() != tt.want || !errors.As(err, &ec) || ec.ExitCode() != 2 {
			t.Errorf("err %v, want %q with exit code 2", err, tt.want)
		}
	}
}

func TestClosedLoop(t *testing.T) {
	in := recs(
		row{id: 0, arrival: 0, send: 10, session: "a", round: 0, lastChunk: 1000, deadline: 100_000},
		row{id: 1, arrival: 1500, send: 1510, session: "a", round: 1, lastChunk: 3000, deadline: 101_500}, // think = 1500 - 1000
		row{id: 2, arrival: 9000, session: "a", round: 2, think: 700},                                     // think from the row
		row{id: 3, arrival: 50, session: "b", round: 0},                                                   // no last chunk
		row{id: 4, arrival: 80, session: "b", round: 1},                                                   // default think
		row{id: 5, arrival: 20}, // no session
		row{id: 6, arrival: 30, session: "concurrency_c_user_0", round: 0},
		row{id: 7, arrival: 90, session: "concurrency_c_user_0", round: 1, think: 40},
	)
	tr, err := NewTrace(RecordRows(in), TraceOptions{ClosedLoop: true, ThinkTimeUs: 250})
	if err != nil {
		t.Fatal(err)
	}
	var first []*tracev2.Record
	for {
		rec, err := tr.Next()
		if err != nil {
			break
		}
		first = append(first, rec)
	}
	var ids []int64
	for _, r := range first {
		ids = append(ids, r.RequestID)
	}
	if want := []int64{0, 5, 6, 3}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("source yields %v, want %v (first rounds and rows without a session)", ids, want)
	}
	fu := tr.FollowUps()
	r1, ok := fu.OnComplete(first[0], 5000, 5)
	if !ok || r1.RequestID != 1 || r1.ArrivalTimeUs != 5500 || r1.DeadlineUs != 105_500 {
		t.Fatalf("after round 0: %+v %v, want id 1 at 5000 + 500 with deadline budget 100000", r1, ok)
	}
	r2, ok := fu.OnComplete(r1, 9000, 5)
	if !ok || r2.RequestID != 2 || r2.ArrivalTimeUs != 9700 {
		t.Fatalf("after round 1: %+v %v, want id 2 at 9000 + 700", r2, ok)
	}
	if r, ok := fu.OnComplete(r2, 20000, 5); ok {
		t.Fatalf("after the last round: %+v", r)
	}
	b1, ok := fu.OnComplete(first[3], 400, 5)
	if !ok || b1.RequestID != 4 || b1.ArrivalTimeUs != 650 {
		t.Fatalf("session b: %+v %v, want id 4 at 400 + default 250", b1, ok)
	}
	if r, ok := fu.OnComplete(first[1], 400, 5); ok {
		t.Fatalf("a row without a session has a follow-up: %+v", r)
	}
	if r, ok := fu.OnFailed(first[0], 400, true); ok {
		t.Fatalf("a failed session round has a follow-up: %+v", r)
	}
	c1, ok := fu.OnFailed(first[2], 700, true)
	if !ok || c1.RequestID != 7 || c1.ArrivalTimeUs != 740 {
		t.Fatalf("concurrency user after a timeout: %+v %v, want id 7 at 700 + 40", c1, ok)
	}
}

func ids(in []injected) []int64 {
	var out []int64
	for _, x := range in {
		out = append(out, x.id)
	}
	slices.Sort(out)
	return out
}

// countingRows counts the rows read and the passes opened.
type countingRows struct {
	recs        []tracev2.Record
	opens, read int
}

func (c *countingRows) Open() (RowReader, error) {
	c.opens++
	return &countingReader{c: c}, nil
}

type countingReader struct {
	c *countingRows
	i int
}

func (r *countingReader) Read(rec *tracev2.Record) error {
	if r.i >= len(r.c.recs) {
		return io.EOF
	}
	*rec = r.c.recs[r.i]
	r.i++
	r.c.read++
	return nil
}

func (r *countingReader) Close() error { return nil }

// TestStreamingReadsAhead: the replay pass reads only as far as the next
// row to inject needs, and gives each injected row its place for Ordinal.
func TestStreamingReadsAhead(t *testing.T) {
	// Completion order: each row is listed 3 rows after it was sent.
	var in []row
	for i := 0; i < 30; i++ {
		id := int64(i + 3)
		if i >= 27 {
			id = int64(i - 27)
		}
		in = append(in, row{id: id, arrival: 1000 * id})
	}
	rows := &countingRows{recs: recs(in...)}
	tr, err := NewTrace(rows, TraceOptions{Ordinals: true})
	if err != nil {
		t.Fatal(err)
	}
	scanned := rows.read
	for want := int64(0); want < 30; want++ {
		rec, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if rec.RequestID != want {
			t.Fatalf("row %d injected in place %d", rec.RequestID, want)
		}
		// Rows 0, 1, 2 are the file's last three: the first injection
		// takes rows up to row 0, holding the 27 rows before it. (A
		// goroutine reads them ahead: TestAheadBounded.)
		if got, wantRead := tr.read, min(28+int(want), 30); got != wantRead || len(tr.buf) != wantRead-int(want)-1 {
			t.Errorf("injection %d: %d rows taken, %d held, want %d and %d", want, got, len(tr.buf), wantRead, wantRead-int(want)-1)
		}
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last row: %v, want EOF", err)
	}
	if rows.opens != 2 || rows.read-scanned != 30 {
		t.Errorf("%d passes reading %d rows, want 2 and 60", rows.opens, rows.read)
	}
	if got := tr.Ordinal(7); got != 7 || tr.Ordinal(7) != -1 {
		t.Errorf("ordinal of 7: %d then forgotten, want 7 then -1", got)
	}
	if err := tr.Close(); err != nil {
		t.Error(err)
	}
}

// TestStreamingBuffer: rows listed in send order are read one at a time.
func TestStreamingBuffer(t *testing.T) {
	var in []row
	for i := 0; i < 20; i++ {
		in = append(in, row{id: int64(i), arrival: int64(i) * 10})
	}
	rows := &countingRows{recs: recs(in...)}
	tr, err := NewTrace(rows, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := tr.Next(); err != nil {
			t.Fatal(err)
		}
		if got := tr.read; got != i+1 {
			t.Fatalf("after %d injections %d rows taken, want %d", i+1, got, i+1)
		}
		if len(tr.buf) != 0 {
			t.Fatalf("%d rows held", len(tr.buf))
		}
	}
}

// TestTraceChanged: a trace shorter on its second reading is an error.
func TestTraceChanged(t *testing.T) {
	rows := &countingRows{recs: recs(row{id: 0}, row{id: 1, arrival: 5})}
	tr, err := NewTrace(rows, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows.recs = rows.recs[:1]
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(); err == nil || err.Error() != "replay: the trace ended after 1 rows on its second reading, 2 on its first (did it change?)" {
		t.Errorf("err %v", err)
	}
}

// TestClosedLoopCancel: a failed round drops its session's later rounds,
// held or not yet read, and says so.
func TestClosedLoopCancel(t *testing.T) {
	in := recs(
		row{id: 0, arrival: 0, session: "a", round: 0},
		row{id: 1, arrival: 100, session: "a", round: 1},
		row{id: 9, arrival: 150},
		row{id: 2, arrival: 200, session: "a", round: 2},
	)
	tr, err := NewTrace(RecordRows(in), TraceOptions{ClosedLoop: true})
	if err != nil {
		t.Fatal(err)
	}
	var dropped []int64
	tr.OnDrop(func(id int64) { dropped = append(dropped, id) })
	a0, _ := tr.Next()
	n9, _ := tr.Next() // reads row 1 into the held rows on the way
	if a0.RequestID != 0 || n9.RequestID != 9 || len(tr.held) != 1 {
		t.Fatalf("injected %d, %d with %d held, want 0, 9 with 1", a0.RequestID, n9.RequestID, len(tr.held))
	}
	if r, ok := tr.FollowUps().OnFailed(a0, 500, true); ok {
		t.Fatalf("follow-up %+v after a failure", r)
	}
	if !reflect.DeepEqual(dropped, []int64{1, 2}) || len(tr.held) != 0 {
		t.Errorf("dropped %v with %d held, want [1 2] and none", dropped, len(tr.held))
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) || len(tr.held) != 0 {
		t.Errorf("next: %v with %d held, want EOF and none (row 2 dropped as read)", err, len(tr.held))
	}
}

// TestClosedLoopHorizon: a follow-up past the horizon is refused; the trace
// drops it and the rounds after it, so every row is settled exactly once,
// by the sink or as dropped.
func TestClosedLoopHorizon(t *testing.T) {
	in := recs(
		row{id: 0, arrival: 0, session: "a", round: 0, think: 1_000_000},
		row{id: 1, arrival: 100, session: "a", round: 1, think: 1_000_000},
		row{id: 2, arrival: 200, session: "a", round: 2, think: 1_000_000},
		row{id: 3, arrival: 300, session: "a", round: 3, think: 1_000_000},
		row{id: 4, arrival: 10},
	)
	tr, err := NewTrace(RecordRows(in), TraceOptions{ClosedLoop: true})
	if err != nil {
		t.Fatal(err)
	}
	settled := map[int64]string{}
	tr.OnDrop(func(id int64) { settled[id] += "dropped " })
	dep := testDeployment(t)
	_, err = Simulate(context.Background(), Config{Deploy: dep, HorizonUs: 1_500_000}, tr, tr.FollowUps(),
		func(rec *tracev2.Record, res *tracev2.SimResult) error {
			settled[rec.RequestID] += rec.Status + " "
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{0: "ok ", 1: "ok ", 2: "dropped ", 3: "dropped ", 4: "ok "}
	if !reflect.DeepEqual(settled, want) {
		t.Errorf("settled %v, want %v", settled, want)
	}
}
