package replay

import (
	"errors"
	"io"
	"math/rand/v2"
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
		tr, err := NewTrace(recs(in...), tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := injections(t, tr); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		if tr.Skipped() != tt.skip || tr.Len() != len(tt.want) || tr.FollowUps() != nil {
			t.Errorf("%s: skipped %d len %d, want %d %d and no follow-ups", tt.name, tr.Skipped(), tr.Len(), tt.skip, len(tt.want))
		}
		for i, w := range tt.want {
			if got := tr.Ordinal(w.id); got != i {
				t.Errorf("%s: ordinal of %d = %d, want %d", tt.name, w.id, got, i)
			}
		}
	}
}

func TestNewTraceNegativeStart(t *testing.T) {
	tr, err := NewTrace(recs(row{id: 0, arrival: -50, send: -40}, row{id: 1, arrival: 10}), TraceOptions{})
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
		_, err := NewTrace(tt.recs, tt.opts)
		var ec interface{ ExitCode() int }
		if err == nil || err.Error() != tt.want || !errors.As(err, &ec) || ec.ExitCode() != 2 {
			t.Errorf("err %v, want %q with exit code 2", err, tt.want)
		}
	}
}

// TestPermute: moving records cycle by cycle equals building the permuted
// slice, over random permutations.
func TestPermute(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 60; n++ {
		order := make([]int32, n)
		for i := range order {
			order[i] = int32(i)
		}
		r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		recs := make([]tracev2.Record, n)
		keys := make([]int64, n)
		for i := range recs {
			recs[i].RequestID, keys[i] = int64(i), int64(10*i)
		}
		var want []int64
		for _, o := range order {
			want = append(want, int64(o))
		}
		permute(recs, keys, slices.Clone(order))
		for i := range recs {
			if recs[i].RequestID != want[i] || keys[i] != 10*want[i] {
				t.Fatalf("n=%d: position %d holds %d (key %d), want %d", n, i, recs[i].RequestID, keys[i], want[i])
			}
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
	tr, err := NewTrace(in, TraceOptions{ClosedLoop: true, ThinkTimeUs: 250})
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
