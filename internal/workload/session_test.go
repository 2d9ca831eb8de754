package workload

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// fakeServer is a deterministic stand-in for the simulator: infinite
// capacity, latency 1 ms + 10 µs per prompt token + 50 µs per output token.
// A request whose latency passes its deadline times out at the deadline; a
// prompt longer than maxPrompt is dropped on arrival; outputs are cut at
// lengthCap tokens when it is > 0.
type fakeServer struct {
	maxPrompt int
	lengthCap int
}

type event struct {
	at   int64
	seq  int64
	r    *Request
	fail FailReason
	gen  int
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() (x any) { x, *e = (*e)[len(*e)-1], (*e)[:len(*e)-1]; return x }
func (e events) peek() (int64, bool) {
	if len(e) == 0 {
		return 0, false
	}
	return e[0].at, true
}

// run drives src to the end and returns every request sent, the session
// ends reported, and the completion (or failure) time of each request.
type runResult struct {
	sent             []*Request
	ends             map[string]SessionEnd
	doneAt           map[int64]int64
	gen              map[int64]int
	failed           map[int64]bool
	followUpsInOrder []int64
}

func (f fakeServer) run(t *testing.T, src *Source, stopAt int64) runResult {
	t.Helper()
	res := runResult{ends: map[string]SessionEnd{}, doneAt: map[int64]int64{}, gen: map[int64]int{}, failed: map[int64]bool{}}
	src.OnSessionEnd(func(e SessionEnd) {
		if _, dup := res.ends[e.ID]; dup {
			t.Errorf("session %s ended twice", e.ID)
		}
		res.ends[e.ID] = e
	})
	var q events
	seq := int64(0)
	send := func(r *Request) {
		res.sent = append(res.sent, r)
		ev := event{r: r, seq: seq}
		seq++
		out := r.OutputTokens
		if f.lengthCap > 0 && out > f.lengthCap {
			out = f.lengthCap
		}
		done := r.ArrivalUs + 1000 + 10*int64(r.PromptTokens()) + 50*int64(out)
		switch {
		case f.maxPrompt > 0 && r.PromptTokens() > f.maxPrompt:
			ev.at, ev.fail = r.ArrivalUs, FailDropped
		case r.DeadlineUs > 0 && done > r.DeadlineUs:
			ev.at, ev.fail = r.DeadlineUs, FailTimeout
		default:
			ev.at, ev.gen = done, out
		}
		heap.Push(&q, ev)
	}
	next, ok := src.Next()
	for {
		at, pending := q.peek()
		if ok && (!pending || next.ArrivalUs <= at) {
			if stopAt > 0 && next.ArrivalUs > stopAt {
				ok = false
				continue
			}
			send(next)
			next, ok = src.Next()
			continue
		}
		if !pending || (stopAt > 0 && at > stopAt) {
			break
		}
		ev := heap.Pop(&q).(event)
		var fu *Request
		var more bool
		if ev.fail != "" {
			res.failed[ev.r.ID] = true
			fu, more = src.OnFailed(ev.r.ID, ev.at, ev.fail)
		} else {
			res.gen[ev.r.ID] = ev.gen
			fu, more = src.OnComplete(ev.r.ID, ev.at, ev.gen)
		}
		res.doneAt[ev.r.ID] = ev.at
		if more {
			if fu.ArrivalUs < ev.at {
				t.Fatalf("follow-up %d arrives at %d, before its cause ended at %d", fu.ID, fu.ArrivalUs, ev.at)
			}
			res.followUpsInOrder = append(res.followUpsInOrder, fu.ID)
			send(fu)
		}
	}
	src.Finish()
	return res
}

// checkSessions asserts the invariants every run must keep.
func checkSessions(t *testing.T, w *Workload, src *Source, res runResult) {
	t.Helper()
	c := src.Sessions()
	if c.Active != 0 {
		t.Errorf("active sessions after Finish = %d, want 0", c.Active)
	}
	if sum := c.Completed + c.Cancelled + c.HorizonInterrupted + c.BudgetExhausted; sum != c.Started || int64(len(res.ends)) != c.Started {
		t.Errorf("counts %+v: terminal sum %d, reported %d, want both = started", c, sum, len(res.ends))
	}
	seen := map[int64]bool{}
	last := map[string]*Request{}
	pre := src.Pregenerated()
	for _, r := range res.sent {
		if seen[r.ID] {
			t.Fatalf("request id %d sent twice", r.ID)
		}
		seen[r.ID] = true
		if r.SessionID == "" {
			continue
		}
		if _, ok := res.ends[r.SessionID]; !ok {
			t.Errorf("session %s of request %d never ended", r.SessionID, r.ID)
		}
		p := last[r.SessionID]
		last[r.SessionID] = r
		if p == nil || r.ID < pre {
			continue // round 0, or pre-generated (open sessions)
		}
		// INV-10: round k+1 arrives at round k's client-visible end + think time.
		if want := res.doneAt[p.ID] + r.ThinkTimeUs; r.ArrivalUs != want {
			t.Errorf("%s round %d arrives at %d, want end of round %d (%d) + think %d = %d",
				r.SessionID, r.RoundIndex, r.ArrivalUs, p.RoundIndex, res.doneAt[p.ID], r.ThinkTimeUs, want)
		}
		if r.RoundIndex != p.RoundIndex+1 {
			t.Errorf("%s: round %d follows round %d", r.SessionID, r.RoundIndex, p.RoundIndex)
		}
		if w.clients[r.Client].accumulate {
			// prompt(k+1) = prompt(k) + generated ids + at least one new id.
			newIn := len(r.PromptIDs) - len(p.PromptIDs) - res.gen[p.ID]
			n, g := len(p.PromptIDs), res.gen[p.ID]
			if newIn < 1 || !slices.Equal(r.PromptIDs[:n], p.PromptIDs) || !slices.Equal(r.PromptIDs[n:n+g], p.OutputIDs(g)) {
				t.Errorf("%s round %d: prompt of %d does not extend round %d's %d + %d generated",
					r.SessionID, r.RoundIndex, len(r.PromptIDs), p.RoundIndex, len(p.PromptIDs), res.gen[p.ID])
			}
		}
	}
	for i, id := range res.followUpsInOrder {
		if id != pre+int64(i) {
			t.Fatalf("follow-up %d has id %d, want %d (numbered after %d pre-generated, in creation order)", i, id, pre+int64(i), pre)
		}
	}
	if n := w.Spec.NumRequests; n > 0 && int64(len(res.sent)) > n {
		t.Errorf("sent %d requests, want <= num_requests %d", len(res.sent), n)
	}
}

func sessionSpec(extra, client string) string {
	return "aggregate_rate: 5\nseed: 4\n" + extra + `clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: uniform, params: {min: 10, max: 50}}
    output_distribution: {type: uniform, params: {min: 5, max: 40}}
` + client
}

func TestClosedLoopSessions(t *testing.T) {
	mt := func(extra string) string {
		return "    reasoning:\n      multi_turn: {max_rounds: 4, think_time_us: 300000, context_growth: accumulate" + extra + "}\n"
	}
	tests := []struct {
		name   string
		spec   string
		server fakeServer
		want   func(c SessionCounts) string // "" when the counts are as expected
	}{
		{"num_requests reserves rounds", sessionSpec("num_requests: 201\n", mt("")), fakeServer{},
			func(c SessionCounts) string {
				// 201 slots: 50 sessions of 4 rounds, then one with 1 slot.
				if c.Started != 51 || c.Completed != 50 || c.BudgetExhausted != 1 {
					return "want 51 started, 50 completed, 1 budget-exhausted"
				}
				return ""
			}},
		{"horizon interrupts", sessionSpec("horizon: 20000000\n", mt("")), fakeServer{},
			func(c SessionCounts) string {
				if c.HorizonInterrupted == 0 || c.Completed == 0 || c.Cancelled != 0 {
					return "want some horizon-interrupted and some completed"
				}
				return ""
			}},
		{"timeouts cancel", sessionSpec("num_requests: 400\n", mt("")+"    timeout: 3000\n"), fakeServer{},
			func(c SessionCounts) string {
				if c.Cancelled == 0 || c.Completed == 0 {
					return "want some cancelled and some completed"
				}
				return ""
			}},
		{"drops cancel", sessionSpec("num_requests: 400\n", mt("")), fakeServer{maxPrompt: 150},
			func(c SessionCounts) string {
				if c.Cancelled == 0 {
					return "want some cancelled by the prompt limit"
				}
				return ""
			}},
		{"length cap still accumulates", sessionSpec("num_requests: 100\n", mt("")), fakeServer{lengthCap: 7},
			func(c SessionCounts) string {
				if c.Completed < 20 {
					return "want completed sessions"
				}
				return ""
			}},
		{"single session", sessionSpec("num_requests: 100\n", mt(", single_session: true")), fakeServer{},
			func(c SessionCounts) string {
				if c.Started != 1 || c.Completed != 1 {
					return "want exactly one completed session"
				}
				return ""
			}},
		{"open-loop sessions", sessionSpec("num_requests: 101\n", mt("")+"    closed_loop: false\n    timeout: 4000\n"), fakeServer{},
			func(c SessionCounts) string {
				if c.Cancelled == 0 || c.BudgetExhausted == 0 {
					return "want cancelled (timeouts) and budget-exhausted (truncation) sessions"
				}
				return ""
			}},
		{"open-loop sessions and horizon", sessionSpec("horizon: 5000000\n", mt("")+"    closed_loop: false\n"), fakeServer{},
			func(c SessionCounts) string {
				if c.HorizonInterrupted == 0 || c.Completed == 0 || c.Cancelled != 0 {
					return "want horizon-interrupted and completed sessions"
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := mustDecode(t, tt.spec)
			src := w.NewSource()
			res := tt.server.run(t, src, 0)
			checkSessions(t, w, src, res)
			if msg := tt.want(src.Sessions()); msg != "" {
				t.Errorf("counts %+v: %s", src.Sessions(), msg)
			}
		})
	}
}

func TestAccumulatedPromptUsesGeneratedOutput(t *testing.T) {
	spec := sessionSpec("num_requests: 40\n", "    reasoning:\n      multi_turn: {max_rounds: 3, think_time_us: 1000, context_growth: accumulate}\n")
	w := mustDecode(t, spec)
	src := w.NewSource()
	r0, _ := src.Next()
	r1, ok := src.OnComplete(r0.ID, r0.ArrivalUs+5000, 3) // a length cap let only 3 tokens out
	if !ok {
		t.Fatal("no follow-up")
	}
	if r1.ID != src.Pregenerated() || r1.RoundIndex != 1 || r1.SessionID != r0.SessionID || r1.ArrivalUs != r0.ArrivalUs+6000 {
		t.Errorf("follow-up %+v: want id %d, round 1 of %s at %d", r1, src.Pregenerated(), r0.SessionID, r0.ArrivalUs+6000)
	}
	n0 := len(r0.PromptIDs)
	if !slices.Equal(r1.PromptIDs[:n0], r0.PromptIDs) || len(r1.PromptIDs) < n0+3+10 || len(r1.PromptIDs) > n0+3+50 {
		t.Fatalf("round 1 prompt %d tokens: want round 0's %d + 3 generated + 10..50 new", len(r1.PromptIDs), n0)
	}
	if got := r1.PromptIDs[n0 : n0+3]; !slices.Equal(got, r0.OutputIDs(3)) {
		t.Errorf("accumulated output ids %v, want round 0's OutputIDs(3) %v", got, r0.OutputIDs(3))
	}
	src2 := w.NewSource()
	q0, _ := src2.Next()
	q1, _ := src2.OnComplete(q0.ID, q0.ArrivalUs+5000, 3)
	if !slices.Equal(q1.PromptIDs, r1.PromptIDs) {
		t.Error("the same completions gave different follow-up prompts")
	}
	// Reporting twice, or an unknown id, gives nothing.
	if _, ok := src.OnComplete(r0.ID, 1, 1); ok {
		t.Error("second OnComplete for one request gave a follow-up")
	}
	if _, ok := src.OnComplete(123456, 1, 1); ok {
		t.Error("OnComplete for an unknown id gave a follow-up")
	}
}

func TestConcurrencyUsers(t *testing.T) {
	spec := `num_requests: 50
seed: 8
clients:
  - id: users
    concurrency: 4
    think_time_us: 200000
    timeout: 4000
    input_distribution: {type: uniform, params: {min: 10, max: 100}}
    output_distribution: {type: uniform, params: {min: 5, max: 90}}
`
	w := mustDecode(t, spec)
	src := w.NewSource()
	res := fakeServer{}.run(t, src, 0)
	checkSessions(t, w, src, res)
	c := src.Sessions()
	if len(res.sent) != 50 || c.Started != 4 || c.BudgetExhausted != 4 {
		t.Errorf("sent %d, sessions %+v: want 50 requests and 4 users ending budget-exhausted", len(res.sent), c)
	}
	failed := 0
	for _, r := range res.sent {
		if res.failed[r.ID] {
			failed++
		}
		if want := fmt.Sprintf("concurrency_users_user_%d", r.ID%4); r.ID < 4 && r.SessionID != want {
			t.Errorf("request %d session %q, want %q", r.ID, r.SessionID, want)
		}
	}
	if failed == 0 {
		t.Error("no request timed out; the test wants users to go on after timeouts")
	}
	// Users keep going after failures: every user sent many requests.
	perUser := map[string]int{}
	for _, r := range res.sent {
		perUser[r.SessionID]++
	}
	for u, n := range perUser {
		if n < 8 {
			t.Errorf("user %s sent %d requests, want >= 8 (closed loop holds its concurrency)", u, n)
		}
	}
}

func TestFinishInterruptsActiveSessions(t *testing.T) {
	spec := sessionSpec("num_requests: 100\n", "    reasoning:\n      multi_turn: {max_rounds: 5, think_time_us: 1000000}\n")
	w := mustDecode(t, spec)
	src := w.NewSource()
	res := fakeServer{}.run(t, src, 3_000_000) // the run stops at 3 s
	checkSessions(t, w, src, res)
	if c := src.Sessions(); c.HorizonInterrupted == 0 || c.Active != 0 {
		t.Errorf("counts %+v: want sessions interrupted by the end of the run", c)
	}
	if _, ok := src.Next(); ok {
		t.Error("Next after Finish returned a request")
	}
}

func TestSessionsDeterministic(t *testing.T) {
	spec := sessionSpec("num_requests: 150\n", "    reasoning:\n      multi_turn: {max_rounds: 3, think_time_us: 5000, context_growth: accumulate}\n    timeout: 6000\n")
	run := func() runResult {
		w := mustDecode(t, spec)
		return fakeServer{}.run(t, w.NewSource(), 0)
	}
	a, b := run(), run()
	if len(a.sent) != len(b.sent) {
		t.Fatalf("runs sent %d and %d requests", len(a.sent), len(b.sent))
	}
	for i := range a.sent {
		if a.sent[i].ID != b.sent[i].ID || !slices.Equal(a.sent[i].PromptIDs, b.sent[i].PromptIDs) || a.sent[i].ArrivalUs != b.sent[i].ArrivalUs {
			t.Fatalf("request %d differs between runs", i)
		}
	}
}

func TestClosedAndOpenSessionsBuildTheSamePrompts(t *testing.T) {
	// With every round generating its full output, a closed-loop session's
	// rounds carry the same token ids as the open-loop session drawn from the
	// same seed: both draw each round from the session's own stream.
	mt := "    reasoning:\n      multi_turn: {max_rounds: 4, think_time_us: 1000, context_growth: accumulate}\n"
	closed := mustDecode(t, sessionSpec("num_requests: 40\n", mt)).NewSource()
	var closedRounds []*Request
	r, _ := closed.Next()
	for ok := true; ok; r, ok = closed.OnComplete(r.ID, r.ArrivalUs+10, r.OutputTokens) {
		closedRounds = append(closedRounds, r)
	}
	var openRounds []*Request
	for _, q := range drain(mustDecode(t, sessionSpec("num_requests: 40\n", mt+"    closed_loop: false\n"))) {
		if q.SessionID == "sess_0" {
			openRounds = append(openRounds, q)
		}
	}
	if len(closedRounds) != 4 || len(openRounds) != 4 {
		t.Fatalf("rounds: closed %d, open %d; want 4 each", len(closedRounds), len(openRounds))
	}
	for k := range 4 {
		c, o := closedRounds[k], openRounds[k]
		if !slices.Equal(c.PromptIDs, o.PromptIDs) || c.OutputTokens != o.OutputTokens || c.RoundIndex != o.RoundIndex {
			t.Errorf("round %d: closed prompt %d/out %d, open prompt %d/out %d; want equal", k, len(c.PromptIDs), c.OutputTokens, len(o.PromptIDs), o.OutputTokens)
		}
	}
}

// TestShapeSourceEqualsSource: a shape source gives the requests, follow-ups
// and session ends of a full source, without token ids, whatever the
// spec (every generator kind, accumulating sessions, timeouts, drops and
// length caps that shorten the accumulated context).
func TestShapeSourceEqualsSource(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	servers := []fakeServer{{}, {maxPrompt: 120}, {lengthCap: 7}}
	for i := range 120 {
		spec := randomSpec(r)
		w, err := New(spec)
		if err != nil {
			t.Fatalf("spec %d: %v", i, err)
		}
		srv := servers[i%len(servers)]
		full, shape := w.NewSource(), w.NewShapeSource()
		a, b := srv.run(t, full, 0), srv.run(t, shape, 0)
		if len(a.sent) != len(b.sent) || len(a.sent) == 0 {
			t.Fatalf("spec %d: full source sent %d requests, shape source %d", i, len(a.sent), len(b.sent))
		}
		for j, x := range a.sent {
			y := *b.sent[j]
			if y.PromptIDs != nil {
				t.Fatalf("spec %d: request %d has %d token ids from a shape source", i, j, len(y.PromptIDs))
			}
			if x.PromptTokens() != len(x.PromptIDs) {
				t.Fatalf("spec %d: request %d: PromptTokens %d, %d ids", i, j, x.PromptTokens(), len(x.PromptIDs))
			}
			y.PromptIDs = x.PromptIDs
			if !reflect.DeepEqual(*x, y) {
				t.Fatalf("spec %d: request %d differs:\n full %+v\nshape %+v", i, j, *x, y)
			}
		}
		if !reflect.DeepEqual(a.ends, b.ends) || !reflect.DeepEqual(a.followUpsInOrder, b.followUpsInOrder) || full.Sessions() != shape.Sessions() {
			t.Fatalf("spec %d: sessions differ: %+v / %+v", i, full.Sessions(), shape.Sessions())
		}
	}
}
