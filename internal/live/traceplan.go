package live

import (
	"log/slog"
	"time"

	"servesim/internal/fanout"
	"servesim/internal/httpload"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/playback"
)

// traceTraffic is a trace played against the server (observe --trace): each
// row is sent at its recorded time (scaled, shifted to start at t0) with its
// prompt and output lengths, its session and round, and its shared prefixes
// (prefix groups and hash-id blocks become prompts sharing those leading
// words, so the server's prefix cache sees what production saw).
type traceTraffic struct {
	p         *playTrace
	seedValue int64
	closed    bool // closed-loop sessions: later rounds follow completions
	hashBlock int
	stream    bool // --streaming: stream every request
	models    func(string) bool
	shard     fanout.Shard
}

func (t *traceTraffic) seed() int64 { return t.seedValue }
func (t *traceTraffic) users() int  { return 0 }

func (t *traceTraffic) columns() tracev2.Columns {
	return tracev2.Columns{
		VLLMPriority:   t.p.classes,
		XRequestID:     true,
		ThinkTime:      t.p.sessions,
		FirstTokenTime: true,
		CachedTokens:   true,
		SLOTarget:      t.p.sloTargets,
		HashIDs:        t.hasHashIDs(),
	}
}

func (t *traceTraffic) hasHashIDs() bool {
	for i := range t.p.rows {
		if len(t.p.rows[i].hashIDs) > 0 {
			return true
		}
	}
	return false
}

// client: a played trace's requests come at the trace's times.
func (t *traceTraffic) client() tracev2.Client {
	c := tracev2.Client{Arrival: "trace", SessionMode: tracev2.SessionFixed}
	if t.closed && t.p.sessions {
		c.SessionMode = tracev2.SessionClosedLoop
	}
	streams := map[bool]bool{}
	for i := range t.p.rows {
		streams[t.p.rows[i].streaming || t.stream] = true
	}
	switch {
	case streams[true] && streams[false]:
		c.Streaming = "mixed"
	case streams[true]:
		c.Streaming = "all"
	default:
		c.Streaming = "none"
	}
	return c
}

// bench: a played trace is timed by its rows (vllm bench serve's
// --self-timed), which it records as an infinite request rate.
func (t *traceTraffic) bench() benchFacts { return benchFacts{requestRate: "inf"} }

func (t *traceTraffic) describe(h *tracev2.Header) {
	seed := t.seedValue
	h.WorkloadSeed = &seed
	h.WorkloadSpec = traceName(t.p)
	if t.p.accumulate {
		h.SessionContextGrowth = tracev2.SessionAccumulate
	}
	if in := t.p.header; in != nil && len(in.GoodputSLOTargets) > 0 {
		h.GoodputSLOTargets = in.GoodputSLOTargets
	}
	h.XExt.Loop = "open"
	if t.closed && t.p.sessions {
		h.XExt.Loop = "closed"
	}
}

// tracePlanner is one pass over a played trace. Job ids are the rows'
// places in send order (plus idBase), whatever the completion order.
type tracePlanner struct {
	t        *traceTraffic
	prompter *httpload.Prompter
	idBase   int64
	log      *slog.Logger

	chat, forceStream, unconstrained bool
	reqTimeout                       time.Duration

	sess *sessionTexts // accumulating sessions' prompts (plan side)
	// Closed loop (plan side): the rounds of each session after round 0,
	// in order, and what is known of each session.
	later     map[string][]int32 // session → row indices of its rounds 1, 2, …
	firstOf   map[string]int     // sharded: session → its first row, which decides its worker
	cancelled int
	warned    map[string]bool
	infos
}

func (t *traceTraffic) newPlanner(p *httpload.Prompter, cfg *config, idBase int64, log *slog.Logger) jobPlanner {
	pl := &tracePlanner{t: t, prompter: p, idBase: idBase, log: log,
		chat: cfg.chat, forceStream: cfg.recordITL || t.stream, unconstrained: cfg.unconstrain,
		reqTimeout: cfg.reqTimeout, sess: newSessionTexts(p), warned: map[string]bool{}, infos: newInfos(),
		firstOf: map[string]int{}}
	if t.closed && t.p.sessions {
		pl.later = map[string][]int32{}
		for i := range t.p.rows {
			r := &t.p.rows[i]
			if r.sessionID != "" && pl.owns(i, r) && pl.isLater(r) {
				pl.later[r.sessionID] = append(pl.later[r.sessionID], int32(i))
			}
		}
		clear(pl.firstOf) // jobs finds the same first rows again
	}
	return pl
}

// isLater reports whether a row is a later round of a session (closed loop:
// created by its predecessor's completion, not sent at its own time).
func (pl *tracePlanner) isLater(r *playRow) bool { return r.round > 0 }

func (pl *tracePlanner) jobs(yield func(httpload.Job) bool) {
	for i := range pl.t.p.rows {
		r := &pl.t.p.rows[i]
		if !pl.owns(i, r) || (pl.later != nil && r.sessionID != "" && pl.isLater(r)) {
			continue
		}
		if !yield(pl.job(i, r.atUs, r.think.AfterDoneUs)) {
			return
		}
	}
}

// owns reports whether this worker of a sharded run sends row i: rows by
// their place, sessions whole with their first row (Shard).
func (pl *tracePlanner) owns(i int, r *playRow) bool {
	sh := pl.t.shard
	if !sh.Sharded() {
		return true
	}
	if r.sessionID == "" {
		return sh.Owns(int64(i))
	}
	first, ok := pl.firstOf[r.sessionID]
	if !ok {
		first = i
		pl.firstOf[r.sessionID] = i
	}
	return sh.Owns(int64(first))
}

func (pl *tracePlanner) followUpFunc() func(httpload.Result) (httpload.Job, bool) {
	if pl.later == nil {
		return nil
	}
	return pl.followUp
}

// followUp sends a session's next round its think time after the previous
// one's last chunk (the playback's rule, docs/simulator.md §13). A failed
// round cancels the rest of its session, unless the playback says the
// session goes on (a concurrency user): then the next round is sent its
// think time after the failure.
func (pl *tracePlanner) followUp(res httpload.Result) (httpload.Job, bool) {
	i := res.Job.ID - pl.idBase
	if i < 0 || i >= int64(len(pl.t.p.rows)) {
		return httpload.Job{}, false
	}
	sid := pl.t.p.rows[i].sessionID
	next := pl.later[sid]
	if sid == "" || len(next) == 0 {
		delete(pl.later, sid)
		return httpload.Job{}, false
	}
	ok := res.Status == httpload.StatusOK
	if !ok && !playback.GoesOnAfterFailure(sid) {
		pl.cancelled += len(next)
		delete(pl.later, sid)
		pl.sess.end(sid)
		return httpload.Job{}, false
	}
	k := next[0]
	if len(next) == 1 {
		delete(pl.later, sid)
	} else {
		pl.later[sid] = next[1:]
	}
	think := pl.t.p.rows[k].think
	if !ok {
		return pl.job(int(k), res.DoneUS+think.AfterFailureUs, think.AfterFailureUs), true
	}
	done := res.LastChunkUS
	if done == 0 {
		done = res.DoneUS
	}
	return pl.job(int(k), done+think.AfterDoneUs, think.AfterDoneUs), true
}

func (pl *tracePlanner) take(id int64) *reqInfo { return pl.infos.take(id) }

func (pl *tracePlanner) total() int64 {
	if pl.t.shard.Sharded() {
		return -1
	}
	return int64(len(pl.t.p.rows))
}

func (pl *tracePlanner) finish() {
	left := pl.cancelled
	for _, rows := range pl.later {
		left += len(rows)
	}
	if left > 0 && pl.log != nil {
		pl.log.Warn("later session rounds not sent: a round before them failed, or the run ended first", "rows", left)
	}
}

// job maps row i, sent at atUs after a think time of thinkUs (a session's
// round), to a job and remembers its trace fields.
func (pl *tracePlanner) job(i int, atUs, thinkUs int64) httpload.Job {
	r := &pl.t.p.rows[i]
	j := httpload.Job{
		ID:         pl.idBase + int64(i),
		IntendedUS: atUs,
		Chat:       pl.chat,
		Stream:     r.streaming || pl.forceStream,
		RequestID:  newUUID(),
		Objective:  r.sloClass,
		FairnessID: r.tenantID,
		Timeout:    pl.reqTimeout,
	}
	if r.model != "" && pl.t.models != nil && pl.t.models(r.model) {
		j.Model = r.model
	} else if r.model != "" && !pl.warned[r.model] && pl.log != nil {
		pl.warned[r.model] = true
		pl.log.Warn("the server does not list the trace's model; its rows go to the run's model", "trace_model", r.model)
	}
	// A budget of 0 is a deadline at the send time: the job is not sent
	// (httpload), as the simulator times it out at injection.
	j.DeadlineUS = playback.DeadlineUs(atUs, r.budgetUs)
	if !pl.unconstrained {
		n := int(r.out)
		if n <= 0 {
			n = defaultMaxTokens
		}
		j.MaxTokens, j.MinTokens = n, n
	}
	var classMs float64
	if h := pl.t.p.header; h != nil {
		classMs = h.GoodputSLOTargets[r.sloClass].TTFTMs
	}
	j.SLOTTFTms = sloTTFTms(r.sloTargetUs, classMs)
	if pl.t.p.classes {
		j.Priority, j.HasPriority = tracev2.VLLMPriority(r.sloClass), true
	}
	pl.prompt(&j, r)
	info := &reqInfo{
		clientID: r.clientID, tenantID: r.tenantID, sloClass: r.sloClass, sessionID: r.sessionID,
		prefixGroup: r.prefixGroup, model: r.model, round: int(r.round), prefixLength: int(r.prefixLen),
		inputTokens: int(r.prompt - r.prefixLen), reasonRatio: r.reasonRatio, sloTargetUs: r.sloTargetUs,
		hashIDs: r.hashIDs,
	}
	if j.DeadlineUS > 0 {
		info.deadlineUs = j.DeadlineUS
	}
	if r.sessionID != "" {
		info.thinkTimeUs = thinkUs
	}
	pl.put(j.ID, info)
	return j
}

// prompt gives a job the prompt of its row, with the sharing structure
// replay gives the simulator (docs/simulator.md §13): an accumulating session's
// later round resends its previous round's prompt; else the row's leading
// hash-id blocks; else its prefix group's prefix; then text of its own.
func (pl *tracePlanner) prompt(j *httpload.Job, r *playRow) {
	n, pre := int(r.prompt), int(r.prefixLen)
	first := func() string {
		if len(r.hashIDs) > 0 {
			head, covered := pl.prompter.Blocks(r.hashIDs, pl.t.hashBlock, n)
			if own := pl.prompter.Text(j.ID, n-covered); own != "" {
				if head == "" {
					return own
				}
				return head + " " + own
			}
			return head
		}
		return pl.prompter.Prompt(j.ID, r.prefixGroup, pre, n-pre)
	}
	switch {
	case pl.t.p.accumulate && r.sessionID != "":
		j.Prompt = pl.sess.prompt(r.sessionID, int(r.round), j.ID, n-pre, first)
	case len(r.hashIDs) > 0:
		j.Prompt = first()
	default:
		// The client builds it from the counts, off the plan lock's path.
		j.PrefixGroup, j.PrefixTokens, j.PromptTokens = r.prefixGroup, pre, n-pre
	}
}
