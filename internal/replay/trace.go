package replay

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"servesim/internal/tracev2"
)

// TraceOptions say how a trace's rows become requests (simulator.md §13,
// tracev2.md §5).
type TraceOptions struct {
	// InjectAtArrival injects each row at its intended arrival_time_us
	// instead of its actual send_time_us.
	InjectAtArrival bool
	// SkipFailed leaves out rows whose status is not ok.
	SkipFailed bool
	// ClosedLoop injects only the first round of each session (and every
	// row without one); later rounds arrive at the previous round's
	// completion plus think time.
	ClosedLoop bool
	// ThinkTimeUs is the closed-loop think time when neither the row
	// (think_time_us) nor the trace (arrival minus the previous round's
	// last chunk) gives one.
	ThinkTimeUs int64
}

// Trace is a trace's rows made ready for Simulate: injection times and
// deadlines on the simulation's origin, rows in injection order. It is the
// Source of the rows injected at their own time and, in closed-loop mode,
// the FollowUps that create later session rounds.
//
// Memory: every row is held (about 400 bytes plus its ext_hash_ids; strings
// are shared by the trace reader), because a real trace lists requests in
// completion order while the simulator needs them in send order. Token ids
// are not held: they are synthesised when a request is injected.
type Trace struct {
	recs     []tracev2.Record
	opts     TraceOptions
	inject   []int32 // closed-loop: rows the source yields, in order; nil = every row
	next     int
	sessions map[string][]int32 // closed-loop: each session's rows, by round
	ordinals map[int64]int32    // request_id -> index in recs, built on first use
	warnings []string
	skipped  int
}

// NewTrace prepares records for replay. The records must already be on the
// file's time origin (tracev2.Load, or an importer, which writes offsets);
// NewTrace takes them over and reorders them. Each row's injection time is
// its send_time_us when positive, else its arrival_time_us (with
// InjectAtArrival, always the arrival); a positive deadline keeps its
// budget: deadline' = injection + (deadline − arrival). Rows are ordered by
// injection time, ties by request_id. An empty result is an input error.
func NewTrace(recs []tracev2.Record, opts TraceOptions) (*Trace, error) {
	if opts.ThinkTimeUs < 0 {
		return nil, usageError(fmt.Sprintf("think time %d µs is negative", opts.ThinkTimeUs))
	}
	t := &Trace{opts: opts}
	if len(recs) == 0 {
		return nil, usageError("the trace has no requests")
	}
	if opts.SkipFailed {
		kept := recs[:0]
		for i := range recs {
			if recs[i].Status == "ok" {
				kept = append(kept, recs[i])
			}
		}
		t.skipped = len(recs) - len(kept)
		clear(recs[len(kept):]) // let the skipped rows' strings go
		recs = kept
		if len(recs) == 0 {
			return nil, usageError(fmt.Sprintf("no request is left: all %d rows have a status other than ok (--skip-failed)", t.skipped))
		}
	}
	keys := make([]int64, len(recs))
	low := int64(0)
	for i := range recs {
		keys[i] = t.injection(&recs[i])
		low = min(low, keys[i])
	}
	if low < 0 {
		t.warnings = append(t.warnings, fmt.Sprintf("the trace starts %d µs before its time origin; every injection time is shifted by %d µs", -low, -low))
		for i := range keys {
			keys[i] -= low
		}
	}
	order := make([]int32, len(recs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(recs[a].RequestID, recs[b].RequestID), cmp.Compare(a, b))
	})
	permute(recs, keys, order)
	t.recs = recs
	if opts.ClosedLoop {
		t.indexSessions()
	}
	for i := range recs {
		if t.inject == nil || t.isFirstRound(int32(i)) {
			setArrival(&recs[i], keys[i])
		}
	}
	if t.inject != nil {
		t.inject = t.inject[:0]
		for i := range recs {
			if t.isFirstRound(int32(i)) {
				t.inject = append(t.inject, int32(i))
			}
		}
	}
	return t, nil
}

// injection is a row's injection time on the file's origin.
func (t *Trace) injection(rec *tracev2.Record) int64 {
	if !t.opts.InjectAtArrival && rec.SendTimeUs > 0 {
		return rec.SendTimeUs
	}
	return rec.ArrivalTimeUs
}

// setArrival moves a row to arrive at `at`, keeping its deadline budget.
func setArrival(rec *tracev2.Record, at int64) {
	if rec.DeadlineUs > 0 {
		rec.DeadlineUs = at + max(0, rec.DeadlineUs-rec.ArrivalTimeUs)
	}
	rec.ArrivalTimeUs = at
}

// permute reorders recs and keys so that position i holds what was at
// order[i], moving each record once (cycle by cycle). order is destroyed.
func permute(recs []tracev2.Record, keys []int64, order []int32) {
	for i := range order {
		if order[i] < 0 {
			continue
		}
		j := i
		rec, key := recs[i], keys[i]
		for {
			k := int(order[j])
			order[j] = -1
			if k == i {
				recs[j], keys[j] = rec, key
				break
			}
			recs[j], keys[j] = recs[k], keys[k]
			j = k
		}
	}
}

// indexSessions groups the rows of each session by round (closed loop).
func (t *Trace) indexSessions() {
	t.sessions = map[string][]int32{}
	for i := range t.recs {
		if s := t.recs[i].SessionID; s != "" {
			t.sessions[s] = append(t.sessions[s], int32(i))
		}
	}
	for _, rows := range t.sessions {
		slices.SortStableFunc(rows, func(a, b int32) int {
			return cmp.Compare(t.recs[a].RoundIndex, t.recs[b].RoundIndex)
		})
	}
	t.inject = []int32{}
}

// isFirstRound reports whether the source injects row i: in closed-loop
// mode, a row without a session or the lowest round of its session.
func (t *Trace) isFirstRound(i int32) bool {
	s := t.recs[i].SessionID
	return s == "" || t.sessions[s][0] == i
}

// Len is the number of rows to replay.
func (t *Trace) Len() int { return len(t.recs) }

// Skipped is the number of rows --skip-failed left out.
func (t *Trace) Skipped() int { return t.skipped }

// Warnings are the findings of preparing and replaying the trace.
func (t *Trace) Warnings() []string { return t.warnings }

// Next implements Source.
func (t *Trace) Next() (*tracev2.Record, error) {
	if t.inject == nil {
		if t.next >= len(t.recs) {
			return nil, io.EOF
		}
		t.next++
		return &t.recs[t.next-1], nil
	}
	if t.next >= len(t.inject) {
		return nil, io.EOF
	}
	t.next++
	return &t.recs[t.inject[t.next-1]], nil
}

// Ordinal is the index of the row with the given request_id in the
// replayed list (injection order): the request_id of a replayed trace
// (tracev2.md §4.2). It is -1 for an unknown id.
func (t *Trace) Ordinal(requestID int64) int {
	if t.ordinals == nil {
		t.ordinals = make(map[int64]int32, len(t.recs))
		for i := range t.recs {
			if _, dup := t.ordinals[t.recs[i].RequestID]; !dup {
				t.ordinals[t.recs[i].RequestID] = int32(i)
			}
		}
	}
	if i, ok := t.ordinals[requestID]; ok {
		return int(i)
	}
	return -1
}

// FollowUps returns the closed-loop session manager, or nil in fixed mode.
func (t *Trace) FollowUps() FollowUps {
	if !t.opts.ClosedLoop {
		return nil
	}
	return (*traceFollowUps)(t)
}

// traceFollowUps creates a session's next round from the trace's rows.
type traceFollowUps Trace

// successor returns the index of the row after rec in its session.
func (f *traceFollowUps) successor(rec *tracev2.Record) (int32, bool) {
	rows := f.sessions[rec.SessionID]
	j, _ := slices.BinarySearchFunc(rows, rec.RoundIndex, func(i int32, round int) int {
		return cmp.Compare(f.recs[i].RoundIndex, round)
	})
	for ; j < len(rows); j++ {
		if &f.recs[rows[j]] == rec {
			if j+1 < len(rows) {
				return rows[j+1], true
			}
			return 0, false
		}
	}
	return 0, false
}

// OnComplete implements FollowUps: round k + 1 arrives at round k's
// client-visible completion plus think time, where think time is the next
// row's think_time_us if positive, else the trace's own gap between round
// k's last chunk and round k + 1's arrival when round k's last chunk was
// recorded, else the configured default.
func (f *traceFollowUps) OnComplete(rec *tracev2.Record, doneUs int64, generated int) (*tracev2.Record, bool) {
	if rec.SessionID == "" {
		return nil, false
	}
	i, ok := f.successor(rec)
	if !ok {
		return nil, false
	}
	nxt := &f.recs[i]
	think := f.opts.ThinkTimeUs
	switch {
	case nxt.ThinkTimeUs > 0:
		think = nxt.ThinkTimeUs
	case rec.LastChunkTimeUs > 0:
		think = max(0, nxt.ArrivalTimeUs-rec.LastChunkTimeUs)
	}
	setArrival(nxt, doneUs+think)
	return nxt, true
}

// OnFailed implements FollowUps: a failed round cancels the rest of its
// session, except for a closed-loop concurrency user (session id
// "concurrency_…", workload.md §8), which goes on after its think time.
func (f *traceFollowUps) OnFailed(rec *tracev2.Record, atUs int64, timedOut bool) (*tracev2.Record, bool) {
	if !strings.HasPrefix(rec.SessionID, "concurrency_") {
		return nil, false
	}
	i, ok := f.successor(rec)
	if !ok {
		return nil, false
	}
	nxt := &f.recs[i]
	think := f.opts.ThinkTimeUs
	if nxt.ThinkTimeUs > 0 {
		think = nxt.ThinkTimeUs
	}
	setArrival(nxt, atUs+think)
	return nxt, true
}
