package workload

// SessionState is a session's terminal state (simulator INV-11).
type SessionState string

// Terminal states; a session ends in exactly one.
const (
	SessionCompleted          SessionState = "completed"           // every round ran (open sessions: and none failed)
	SessionCancelled          SessionState = "cancelled"           // a round timed out, was dropped or rejected
	SessionHorizonInterrupted SessionState = "horizon_interrupted" // a round would arrive after the horizon, or the run ended first
	SessionBudgetExhausted    SessionState = "budget_exhausted"    // num_requests allowed no further round
)

// SessionCounts counts sessions by state. Started = Active + the four
// terminal counts at all times; Active is 0 after Finish.
type SessionCounts struct {
	Started            int64 `json:"started"`
	Active             int64 `json:"active"`
	Completed          int64 `json:"completed"`
	Cancelled          int64 `json:"cancelled"`
	HorizonInterrupted int64 `json:"horizon_interrupted"`
	BudgetExhausted    int64 `json:"budget_exhausted"`
}

// SessionEnd reports one session reaching its terminal state.
type SessionEnd struct {
	ID       string
	ClientID string
	State    SessionState
	Rounds   int // rounds sent (emitted or created)
}

// FailReason says why a request ended without completing. Every reason
// cancels a multi-turn session; a concurrency user carries on after its
// think time.
type FailReason string

// Failure reasons.
const (
	FailTimeout  FailReason = "timeout"  // deadline passed
	FailDropped  FailReason = "dropped"  // unservable (longer than the model allows)
	FailRejected FailReason = "rejected" // admission or routing refused it
	FailError    FailReason = "error"    // any other failure (observe: HTTP or stream error)
)

// OnSessionEnd sets a function called once per session when it reaches its
// terminal state, in a deterministic order. nil disables it.
func (s *Source) OnSessionEnd(fn func(SessionEnd)) { s.onSessionEnd = fn }

// Sessions returns the session counts so far.
func (s *Source) Sessions() SessionCounts { return s.counts }

// FollowUps is the number of follow-up requests created so far.
func (s *Source) FollowUps() int64 { return s.followUps }

// OnComplete reports that request id completed and its last chunk reached
// the client at doneUs (arrival + E2E) after generating `generated` output
// tokens (fewer than OutputTokens when a length cap cut it). For a
// closed-loop session round or a concurrency user it returns the follow-up
// request, arriving at doneUs + think time, when the session goes on; the
// caller must schedule it. Ids that are not session requests, or were
// already reported, return false.
func (s *Source) OnComplete(id, doneUs int64, generated int) (*Request, bool) {
	sess, ok := s.live[id]
	if !ok {
		return nil, false
	}
	delete(s.live, id)
	if sess.state != "" {
		return nil, false
	}
	switch sess.cc.kind {
	case genOpenSessions:
		sess.finished++
		s.maybeEndOpen(sess)
		return nil, false
	case genClosedSessions:
		switch {
		case sess.round+1 >= sess.cc.maxRounds:
			s.end(sess, SessionCompleted)
			return nil, false
		case sess.round+1 >= sess.cap:
			s.end(sess, SessionBudgetExhausted)
			return nil, false
		}
	}
	return s.followUp(sess, doneUs, generated)
}

// OnFailed reports that request id ended without completing at atUs (the
// deadline for a timeout, the refusal time otherwise). A multi-turn session
// is cancelled; a concurrency user sends its next request at atUs + think
// time, which is returned (budget and horizon permitting).
func (s *Source) OnFailed(id, atUs int64, reason FailReason) (*Request, bool) {
	_ = reason // every reason is treated alike; it documents the call
	sess, ok := s.live[id]
	if !ok {
		return nil, false
	}
	delete(s.live, id)
	if sess.state != "" {
		return nil, false
	}
	switch sess.cc.kind {
	case genOpenSessions:
		sess.finished++
		sess.failed = true
		s.maybeEndOpen(sess)
		return nil, false
	case genClosedSessions:
		s.end(sess, SessionCancelled)
		return nil, false
	}
	return s.followUp(sess, atUs, 0)
}

// followUp creates a closed-loop session's or user's next request at
// fromUs + think time, unless num_requests or the horizon forbid it, in
// which case the session ends. prevOut is the previous round's generated
// output (accumulated into the prompt).
func (s *Source) followUp(sess *session, fromUs int64, prevOut int) (*Request, bool) {
	cc := sess.cc
	n, i := max(s.shardCount, 1), s.shardIndex
	if cc.kind == genUsers && s.limit > 0 && s.followUps*n+i >= s.limit-s.Pregenerated() {
		s.end(sess, SessionBudgetExhausted)
		return nil, false
	}
	at := satAdd(max(fromUs, 0), cc.thinkUs)
	if at > maxTimeUs || (s.w.Spec.HorizonUs > 0 && at > s.w.Spec.HorizonUs) {
		s.end(sess, SessionHorizonInterrupted)
		return nil, false
	}
	prevOut = min(max(prevOut, 0), MaxSampleTokens)
	d := draft{at: at, sess: sess, round: sess.round + 1}
	drawRound(sess.smp, sess.rng, &d)
	if cc.accumulate && sess.promptLen+prevOut+d.in > MaxPromptTokens {
		s.end(sess, SessionCancelled)
		return nil, false
	}
	id := s.Pregenerated() + s.followUps*n + i
	s.followUps++
	sess.round = d.round
	r := s.build(cc, &d, id, true, prevOut)
	r.SessionID = sess.id
	s.live[id] = sess
	return r, true
}

// Share makes this Source worker index of count of a sharded run (observe
// --shard), which sends only some of the pre-generated requests and
// reports the others Elsewhere: its k-th follow-up is the run's follow-up
// k·count + index, so the workers' ids never meet, and the follow-up
// budget of num_requests is shared the same way. Call it before the first
// follow-up.
func (s *Source) Share(index, count int) {
	if count > 1 && index >= 0 && index < count {
		s.shardIndex, s.shardCount = int64(index), int64(count)
	}
}

// sessionElsewhere marks a session driven by another process of a sharded
// run: it is in no count here and never ends here.
const sessionElsewhere SessionState = "elsewhere"

// Elsewhere reports that request id is sent by another process of a sharded
// run (observe --shard), which reports its completion there: this Source
// forgets it. The session it belongs to, if any, is driven by that process;
// here it leaves the session counts at once and creates no follow-up.
// Later rounds of an open session still come from Next, and are to be
// reported here too.
func (s *Source) Elsewhere(id int64) {
	sess, ok := s.live[id]
	if !ok {
		return
	}
	delete(s.live, id)
	if sess.state != "" || !sess.started {
		return
	}
	s.unlink(sess)
	s.counts.Started--
	s.counts.Active--
	sess.state = sessionElsewhere
	sess.prompt = nil
}

// Finish ends generation and every session still active, as
// horizon-interrupted: the run stopped before they could finish. Call it
// once the simulation (or the load run) is over.
func (s *Source) Finish() {
	s.done = true
	for sess := s.first; sess != nil; {
		next := sess.next
		s.end(sess, SessionHorizonInterrupted)
		sess = next
	}
	clear(s.live)
}

// maybeEndOpen ends an open session once no round is to come and every
// emitted round has finished: cancelled if one failed, else the reason it
// was cut short, else completed.
func (s *Source) maybeEndOpen(sess *session) {
	if sess.state != "" || !sess.closed || sess.finished < sess.emitted {
		return
	}
	switch {
	case sess.failed:
		s.end(sess, SessionCancelled)
	case sess.cut != "":
		s.end(sess, sess.cut)
	default:
		s.end(sess, SessionCompleted)
	}
}

func (s *Source) start(sess *session) {
	sess.started = true
	s.counts.Started++
	s.counts.Active++
	sess.prev = s.last
	if s.last != nil {
		s.last.next = sess
	} else {
		s.first = sess
	}
	s.last = sess
}

// unlink takes sess out of the list of active sessions.
func (s *Source) unlink(sess *session) {
	if sess.prev != nil {
		sess.prev.next = sess.next
	} else {
		s.first = sess.next
	}
	if sess.next != nil {
		sess.next.prev = sess.prev
	} else {
		s.last = sess.prev
	}
	sess.prev, sess.next = nil, nil
}

func (s *Source) end(sess *session, st SessionState) {
	if sess.state != "" || !sess.started {
		return
	}
	sess.state = st
	s.unlink(sess)
	sess.prompt = nil
	s.counts.Active--
	switch st {
	case SessionCompleted:
		s.counts.Completed++
	case SessionCancelled:
		s.counts.Cancelled++
	case SessionHorizonInterrupted:
		s.counts.HorizonInterrupted++
	case SessionBudgetExhausted:
		s.counts.BudgetExhausted++
	}
	if s.onSessionEnd != nil {
		rounds := sess.round + 1
		if sess.cc.kind == genOpenSessions {
			rounds = sess.emitted
		}
		s.onSessionEnd(SessionEnd{ID: sess.id, ClientID: sess.cc.c.ID, State: st, Rounds: rounds})
	}
}
