package replay

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
	"servesim/internal/tracev2/playback"
)

// TraceOptions say how a trace's rows become requests (docs/simulator.md
// §13, docs/tracev2.md §5): the trace playback of package playback, at
// time scale 1.
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
	// Ordinals keeps each injected row's position in the replayed list
	// until Ordinal asks for it (the request_id of a replayed trace).
	Ordinals bool
}

// Trace is a trace made ready for Simulate: it is the Source of the rows
// injected at their own time, in injection order, and in closed-loop mode
// the FollowUps that create later session rounds from their rows.
//
// Memory stays flat in the trace's length. NewTrace reads the rows once to
// sort their injection times, keeping 4 bytes per row (the row's place in
// the replayed list) and the 8-byte request ids; the replay reads them
// again, holding only the rows read ahead of their turn — a real trace
// lists requests in completion order, so about as many as were in flight —
// and the batches a goroutine decodes (and hashes) ahead of the
// simulation, about a thousand rows (ahead.go). Closed-loop mode also
// indexes the session rows (about 20 bytes each) and holds later rounds
// read before their predecessor completed.
type Trace struct {
	rows     Rows
	opts     TraceOptions
	n        int     // rows in the file
	ordinal  []int32 // file index -> place in the replayed list; -1 = skipped
	count    int     // rows replayed
	ids      []int64 // request ids of the replayed rows, ascending
	shift    int64   // added to every injection time (a trace starting before t0)
	first    int64   // first and last injection time (after shift, before speedup)
	last     int64
	speedup  float64 // SetRate; 0 = as recorded
	skipped  int
	warnings []string

	// Closed loop.
	sessions map[string]*session
	follow   bitset // places of the rows that follow-ups inject

	// The replay pass: rows are read (and their hash-id prefixes hashed)
	// ahead, on another goroutine (ahead.go).
	ah       *ahead
	hasher   *hasher // set by Simulate before the first row is read
	read     int     // rows read so far
	next     int32
	buf      map[int32]*aheadRow // read before their turn, by place
	held     map[int32]*aheadRow // closed loop: later rounds read, by file index
	out      *aheadRow           // the row handed out last (Next, a follow-up)
	ordinals map[int64]int32     // injected rows' places by request id (Options.Ordinals)
	onDrop   func(id int64)
	err      error

	// A streamed trace (stream.go): its reader, whether it has run out,
	// and the last row's request id.
	streamed RowReader
	eof      bool
	lastID   int64

	// prefixes counts the rows' hash-id prefixes (prefixes.go): by scan,
	// or by CountPrefixes for a streamed trace. The rows' hash ids are
	// fingerprinted in the first reading (scanFP, or the count's) and as
	// the replay reads them (readFP): rows that changed in between fail
	// the replay (ErrRowsChanged) instead of being replayed with counts
	// that are not theirs.
	prefixes *prefixCounts
	scanFP   uint64
	readFP   uint64
}

// session is a closed-loop session's rows, by round.
type session struct {
	rows      []int32 // file indices
	ids       []int64
	pos       int  // the round in flight (rounds run one at a time)
	cancelled bool // a round failed: the later ones are never injected
}

// NewTrace reads rows once and prepares their replay. Each row's injection
// time is its send_time_us when positive, else its arrival_time_us (with
// InjectAtArrival, always the arrival); a positive deadline keeps its
// budget: deadline' = injection + (deadline − arrival). Rows are injected
// in playback.Order, ties in file order. A trace without
// rows to replay is an input error. Request ids must be unique (the caller
// checks: SimResults are keyed by them).
func NewTrace(rows Rows, opts TraceOptions) (*Trace, error) {
	if opts.ThinkTimeUs < 0 {
		return nil, exitcode.Usagef("think time %d µs is negative", opts.ThinkTimeUs)
	}
	t := &Trace{rows: rows, opts: opts}
	keys, ids, err := t.scan()
	if err != nil {
		return nil, err
	}
	if t.n == 0 {
		return nil, exitcode.Usagef("the trace has no requests")
	}
	t.count = t.n - t.skipped
	if t.count == 0 {
		return nil, exitcode.Usagef("no request is left: all %d rows have a status other than ok (--skip-failed)", t.skipped)
	}
	order := make([]int32, 0, t.count)
	low := int64(0)
	for i := range t.ordinal {
		if t.ordinal[i] == 0 {
			order = append(order, int32(i))
			low = min(low, keys[i])
		}
	}
	if low < 0 {
		t.shift = -low
		t.warnings = append(t.warnings, fmt.Sprintf("the trace starts %d µs before its time origin; every injection time is shifted by %d µs", t.shift, t.shift))
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(playback.Order(keys[a], ids[a], keys[b], ids[b]), cmp.Compare(a, b))
	})
	t.first, t.last = keys[order[0]]+t.shift, keys[order[len(order)-1]]+t.shift
	t.ids = make([]int64, 0, t.count)
	for place, i := range order {
		t.ordinal[i] = int32(place)
		t.ids = append(t.ids, ids[i])
	}
	slices.Sort(t.ids)
	if t.sessions != nil {
		t.follow = newBitset(t.count)
		for _, s := range t.sessions {
			for _, i := range s.rows[1:] {
				t.follow.set(t.ordinal[i])
			}
		}
	}
	t.buf = map[int32]*aheadRow{}
	t.held = map[int32]*aheadRow{}
	if opts.Ordinals {
		t.ordinals = map[int64]int32{}
	}
	return t, nil
}

// scan is the first pass: every row's injection key and request id, which
// rows are skipped (ordinal −1, the others 0 until sorted), and in closed
// loop the session index.
func (t *Trace) scan() (keys, ids []int64, err error) {
	if t.opts.ClosedLoop {
		t.sessions = map[string]*session{}
	}
	err = input.Each(t.rows, func(rec *tracev2.Record) error {
		i := int32(t.n)
		t.n++
		t.scanFP = fingerprint(t.scanFP, rec.HashIDs)
		if len(rec.HashIDs) > 0 {
			if t.prefixes == nil {
				t.prefixes = newPrefixCounts(0)
			}
			t.prefixes.add(rec.HashIDs)
		}
		keys = append(keys, t.injection(rec))
		ids = append(ids, rec.RequestID)
		if t.opts.SkipFailed && rec.Status != "ok" {
			t.ordinal = append(t.ordinal, -1)
			t.skipped++
			return nil
		}
		t.ordinal = append(t.ordinal, 0)
		if t.sessions != nil && rec.SessionID != "" {
			s := t.sessions[rec.SessionID]
			if s == nil {
				s = &session{}
				t.sessions[rec.SessionID] = s
			}
			s.rows = append(s.rows, i)
			s.ids = append(s.ids, int64(rec.RoundIndex)) // rounds for now; ids after sorting
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range t.sessions {
		idx := make([]int, len(s.rows))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s.ids[a], s.ids[b]) })
		rows, sids := make([]int32, len(idx)), make([]int64, len(idx))
		for j, k := range idx {
			rows[j], sids[j] = s.rows[k], ids[s.rows[k]]
		}
		s.rows, s.ids = rows, sids
	}
	return keys, ids, nil
}

// injection is a row's injection time on the file's origin.
func (t *Trace) injection(rec *tracev2.Record) int64 {
	return playback.InjectionUs(rec, !t.opts.InjectAtArrival)
}

// setArrival moves a row to arrive at `at`, keeping its deadline budget.
func setArrival(rec *tracev2.Record, at int64) { playback.Move(rec, at) }

// SetRate speeds the replay up or slows it down to a mean rate (requests
// per second, see RateRPS) before it starts: each row is injected at
// first + (t − first)·RateRPS/rps, where first is the first injection
// time. The requests are unchanged, and so are closed-loop think times
// (the client's, not the arrival process's).
func (t *Trace) SetRate(rps float64) error {
	switch {
	case !(rps > 0) || math.IsInf(rps, 0):
		return exitcode.Usagef("rate %v must be positive and finite", rps)
	case t.streamed != nil:
		return exitcode.Usagef("a streamed trace's rate is not known before it is replayed")
	case t.RateRPS() == 0:
		return exitcode.Usagef("every request of the trace is injected at once: it has no rate to scale")
	}
	speedup := rps / t.RateRPS()
	if last := float64(t.first) + float64(t.last-t.first)/speedup; !(last <= maxScaledUs) {
		lowest := t.RateRPS() * float64(t.last-t.first) / (maxScaledUs - float64(t.first))
		return exitcode.Usagef("rate %v req/s would play the trace over more than %.3g years: the lowest rate for it is %.3g req/s",
			rps, maxScaledUs/(365.25*24*3600e6), lowest)
	}
	t.speedup = speedup
	return nil
}

// maxScaledUs bounds the last injection time of a trace played at another
// rate (SetRate), far below the simulator's int64 µs clock so that every
// time of the replay stays in range.
const maxScaledUs = float64(1 << 60)

// scaled applies SetRate's speed-up to an injection time.
func (t *Trace) scaled(at int64) int64 {
	if t.speedup == 0 {
		return at
	}
	return t.first + int64(math.Round(float64(at-t.first)/t.speedup))
}

// RateRPS is the trace's own mean arrival rate: (rows − 1) over the time
// from the first injection to the last, in requests per second; 0 when
// every row is injected at once.
func (t *Trace) RateRPS() float64 {
	if t.last <= t.first {
		return 0
	}
	return float64(t.count-1) / (float64(t.last-t.first) / 1e6)
}

// Len is the number of rows to replay.
func (t *Trace) Len() int { return t.count }

// Skipped is the number of rows --skip-failed left out.
func (t *Trace) Skipped() int { return t.skipped }

// Warnings are the findings of preparing the trace.
func (t *Trace) Warnings() []string { return t.warnings }

// RequestIDs are the request ids of the rows to replay, ascending: the
// order of the SimResult file.
func (t *Trace) RequestIDs() []int64 { return t.ids }

// OnDrop sets a function told the request id of every row that will never
// be injected: the later rounds of a closed-loop session whose round failed
// or whose next round would arrive after the horizon.
func (t *Trace) OnDrop(fn func(id int64)) { t.onDrop = fn }

// Next implements Source: the rows in injection order.
func (t *Trace) Next() (*tracev2.Record, error) {
	if t.streamed != nil {
		return t.nextStreamed()
	}
	for t.err == nil && int(t.next) < t.count {
		p := t.next
		if t.follow.has(p) {
			t.next++
			continue
		}
		if row, ok := t.buf[p]; ok {
			delete(t.buf, p)
			t.next++
			rec := &row.rec
			setArrival(rec, t.scaled(t.injection(rec)+t.shift))
			t.injected(row, p)
			return rec, nil
		}
		t.readOne()
	}
	if t.err != nil {
		return nil, t.err
	}
	return nil, io.EOF
}

// injected notes the place of a row handed to the simulator.
func (t *Trace) injected(row *aheadRow, place int32) {
	t.out = row
	if t.ordinals != nil {
		t.ordinals[row.rec.RequestID] = place
	}
}

// setHasher makes the rows' hash-id prefixes hashed ahead (Simulate calls
// it before the first Next).
func (t *Trace) setHasher(h *hasher) { t.hasher = h }

// prefix returns what was computed ahead for rec, the record last handed
// out (Next or a follow-up), if anything was.
func (t *Trace) prefix(rec *tracev2.Record) *hashedPrefix {
	if t.out == nil || rec != &t.out.rec || !t.out.pre.done {
		return nil
	}
	return &t.out.pre
}

// readOne reads the next row of the replay pass into buf (or held).
func (t *Trace) readOne() {
	if t.ah == nil {
		rd, err := t.rows.Open()
		if t.err = err; err != nil {
			return
		}
		t.ah = startAhead(rd, t.n, t.hasher)
	}
	row, err := t.ah.next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("replay: the trace ended after %d rows on its second reading, %d on its first (did it change?)", t.read, t.n)
		}
		t.err = err
		return
	}
	i := int32(t.read)
	t.read++
	t.readFP = fingerprint(t.readFP, row.rec.HashIDs)
	if t.read == t.n {
		t.err = t.ah.close()
		t.ah = nil
		if t.err == nil && t.prefixes != nil && t.readFP != t.scanFP {
			t.err = ErrRowsChanged
		}
	}
	p := t.ordinal[i]
	switch {
	case p < 0:
	case t.follow.has(p):
		if s := t.sessions[row.rec.SessionID]; s != nil && !s.cancelled {
			t.held[i] = row
		}
	default:
		t.buf[p] = row
	}
}

// Ordinal is the place in the replayed list (injection order) of the
// injected row with this request_id: the request_id of a replayed trace
// (docs/tracev2.md §4.2). It forgets the row (each is asked for once, when it
// is written) and is −1 when unknown or without TraceOptions.Ordinals.
func (t *Trace) Ordinal(requestID int64) int {
	p, ok := t.ordinals[requestID]
	if !ok {
		return -1
	}
	delete(t.ordinals, requestID)
	return int(p)
}

// Close ends the replay pass (and the goroutine reading it ahead) and
// reports a failure to read it.
func (t *Trace) Close() error {
	if t.ah != nil {
		err := t.ah.close()
		t.ah = nil
		if t.err == nil {
			t.err = err
		}
	} else if t.streamed != nil && !t.eof {
		t.eof = true // never started: its reader is closed here
		if err := t.streamed.Close(); t.err == nil {
			t.err = err
		}
	}
	return t.err
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

// successor returns the row of the round after the one in flight in rec's
// session (rounds of a closed-loop session run one at a time), reading
// ahead if it was not read yet.
func (f *traceFollowUps) successor(rec *tracev2.Record) (*tracev2.Record, bool) {
	s := f.sessions[rec.SessionID]
	if s == nil || s.cancelled || s.pos+1 >= len(s.rows) {
		return nil, false
	}
	i := s.rows[s.pos+1]
	t := (*Trace)(f)
	for t.err == nil {
		if nxt, ok := f.held[i]; ok {
			delete(f.held, i)
			s.pos++
			t.injected(nxt, t.ordinal[i])
			return &nxt.rec, true
		}
		t.readOne()
	}
	return nil, false
}

// think is the playback's think time before nxt, the round after rec
// (time scale 1: the simulator plays the trace as recorded).
func (f *traceFollowUps) think(rec, nxt *tracev2.Record) playback.Think {
	rule := playback.Rule{ThinkTimeUs: f.opts.ThinkTimeUs, TimeScale: 1}
	return rule.Think(playback.RoundOf(nxt, rec.LastChunkTimeUs))
}

// OnComplete implements FollowUps: round k + 1 arrives at round k's
// client-visible completion plus the playback's think time after a
// completed round.
func (f *traceFollowUps) OnComplete(rec *tracev2.Record, doneUs int64, generated int) (*tracev2.Record, bool) {
	nxt, ok := f.successor(rec)
	if !ok {
		return nil, false
	}
	setArrival(nxt, doneUs+f.think(rec, nxt).AfterDoneUs)
	return nxt, true
}

// OnFailed implements FollowUps: a failed round cancels the rest of its
// session, unless the playback says the session goes on (a closed-loop
// concurrency user), after its think time after a failed round.
func (f *traceFollowUps) OnFailed(rec *tracev2.Record, atUs int64, timedOut bool) (*tracev2.Record, bool) {
	if !playback.GoesOnAfterFailure(rec.SessionID) {
		f.cancel(rec.SessionID)
		return nil, false
	}
	nxt, ok := f.successor(rec)
	if !ok {
		return nil, false
	}
	setArrival(nxt, atUs+f.think(rec, nxt).AfterFailureUs)
	return nxt, true
}

// Refused is told of a follow-up the simulator refused (it would arrive
// after the horizon): the session ends there, and neither that round nor
// the later ones will run.
func (f *traceFollowUps) Refused(rec *tracev2.Record) {
	delete(f.ordinals, rec.RequestID)
	if f.onDrop != nil {
		f.onDrop(rec.RequestID)
	}
	f.cancel(rec.SessionID)
}

// cancel drops the rounds of a session after the one in flight.
func (f *traceFollowUps) cancel(id string) {
	s := f.sessions[id]
	if s == nil || s.cancelled {
		return
	}
	s.cancelled = true
	for j := s.pos + 1; j < len(s.rows); j++ {
		delete(f.held, s.rows[j])
		if f.onDrop != nil {
			f.onDrop(s.ids[j])
		}
	}
}
