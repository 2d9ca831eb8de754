package live

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"servesim/internal/fanout"
	"servesim/internal/httpload"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// defaultMaxTokens is asked for when a request's sampled output is not
// positive (docs/workload.md §10).
const defaultMaxTokens = 2048

// reqInfo is what a trace row needs from the workload request beyond what
// the Result carries. The prompt's token ids are not kept.
type reqInfo struct {
	clientID, tenantID, sloClass, sessionID, prefixGroup, model string

	round, prefixLength, inputTokens int
	reasonRatio                      float64
	deadlineUs, sloTargetUs          int64
	thinkTimeUs                      int64
	hashIDs                          []int64 // played traces: the row's prefix blocks
}

// specTraffic is a workload (spec, preset or flags), possibly one slice of
// a sharded run.
type specTraffic struct {
	wl    *workload.Workload
	shard fanout.Shard
}

func (t *specTraffic) seed() int64 { return t.wl.Spec.Seed }

func (t *specTraffic) users() int {
	users := 0
	for _, c := range t.wl.Spec.Clients {
		users += c.Concurrency
	}
	if t.shard.Sharded() {
		// Users are sliced like any request: user u's first request goes
		// to one worker, which then drives the user.
		users = (users + t.shard.Count - 1) / t.shard.Count
	}
	return users
}

func (t *specTraffic) describe(h *tracev2.Header) {
	seed := t.wl.Spec.Seed
	h.WorkloadSeed = &seed
	h.WorkloadSpec = t.wl.Name
	h.SessionContextGrowth = t.wl.ContextGrowth()
	for class, g := range t.wl.Spec.GoodputSLOTargets {
		if h.GoodputSLOTargets == nil {
			h.GoodputSLOTargets = map[string]tracev2.SLOTargets{}
		}
		h.GoodputSLOTargets[class] = tracev2.SLOTargets{TTFTMs: g.TTFTMs, ITLMs: g.ITLMs, E2EMs: g.E2EMs}
	}
	h.XExt.Loop = t.wl.Loop()
	h.XExt.Shard = t.shard.String()
}

func (t *specTraffic) client() tracev2.Client { return t.wl.Client() }

func (t *specTraffic) bench() benchFacts {
	f := benchFacts{requestRate: "inf", ramp: t.wl.Spec.RateRamp}
	cs := t.wl.Spec.Clients
	for i := range cs {
		if cs[i].Concurrency > 0 {
			return f // closed-loop users: no rate
		}
	}
	if f.ramp != nil || t.wl.Spec.AggregateRate == 0 {
		return f
	}
	f.requestRate = t.wl.Spec.AggregateRate
	if len(cs) == 1 && cs[0].Lifecycle == nil {
		switch a := cs[0].Arrival; a.Process {
		case workload.ProcessPoisson:
			f.burstiness = 1.0
		case workload.ProcessConstant:
			f.burstiness = "inf"
		case workload.ProcessGamma:
			if a.Shape == 0 {
				f.burstiness = 1 / (max(a.CV, 0) * max(a.CV, 0))
				if a.CV == 0 {
					f.burstiness = 1.0
				}
			}
		}
	}
	return f
}

// specPlanner turns workload requests into httpload jobs. Its plan side
// (jobs, followUp) runs under the dispatcher's plan lock, never
// concurrently, so the workload Source and the session prompts need no
// lock; infos is shared with the sink and has its own.
type specPlanner struct {
	wl       *workload.Workload
	src      *workload.Source
	prompter *httpload.Prompter
	idBase   int64 // warm-up requests take ids 0..idBase−1
	shard    fanout.Shard

	chat, forceStream, unconstrained, priorities bool
	reqTimeout                                   time.Duration
	accumulate                                   []bool // per client index

	sess *sessionTexts // prompts of accumulating sessions (plan side only)
	infos
}

func (t *specTraffic) newPlanner(p *httpload.Prompter, cfg *config, idBase int64, _ *slog.Logger) jobPlanner {
	return newSpecPlanner(t.wl, p, cfg, idBase, t.shard)
}

func newSpecPlanner(wl *workload.Workload, p *httpload.Prompter, cfg *config, idBase int64, shard fanout.Shard) *specPlanner {
	src := wl.NewSource()
	pl := &specPlanner{
		wl: wl, src: src, prompter: p, idBase: idBase, shard: shard,
		chat: cfg.chat, forceStream: cfg.recordITL, unconstrained: cfg.unconstrain,
		priorities: hasSLOClasses(wl), reqTimeout: cfg.reqTimeout,
		sess:  newSessionTexts(p),
		infos: newInfos(),
	}
	for _, c := range wl.Spec.Clients {
		pl.accumulate = append(pl.accumulate, c.MultiTurn != nil && c.MultiTurn.ContextGrowth == workload.ContextAccumulate)
	}
	src.OnSessionEnd(func(e workload.SessionEnd) { pl.sess.end(e.ID) })
	if shard.Sharded() {
		src.Share(shard.Index, shard.Count)
	}
	return pl
}

// sloTTFTms is the x-slo-ttft-ms header of a request, in whole ms rounded
// up (0 = no header): its own TTFT target (slo_target_us) when it has one,
// else its SLO class's goodput TTFT target (goodput_slo_targets), so that a
// gateway ordering by deadline sees the tier's target.
func sloTTFTms(targetUs int64, classMs float64) int64 {
	switch {
	case targetUs > 0:
		return (targetUs + 999) / 1000
	case classMs > 0:
		return int64(math.Ceil(min(classMs, 1e12)))
	}
	return 0
}

// hasSLOClasses reports whether any client names an SLO class: then the
// trace has the vllm_priority column and requests carry a priority.
func hasSLOClasses(wl *workload.Workload) bool {
	for _, c := range wl.Spec.Clients {
		if c.SLOClass != "" {
			return true
		}
	}
	return false
}

// jobs is the plan's job sequence: the Source's pre-generated requests
// (those of this worker's slice when sharded).
func (pl *specPlanner) jobs(yield func(httpload.Job) bool) {
	for {
		r, ok := pl.src.Next()
		if !ok {
			return
		}
		if !pl.owns(r) {
			pl.src.Elsewhere(r.ID)
			continue
		}
		if !yield(pl.job(r)) {
			return
		}
	}
}

// owns reports whether this worker sends r (Shard): a request that
// starts no session by its id, a session's later rounds with its round 0,
// so that a session is driven by one worker from start to end.
func (pl *specPlanner) owns(r *workload.Request) bool {
	if !pl.shard.Sharded() {
		return true
	}
	id := r.ID
	if r.RoundIndex > 0 {
		// Only open sessions' later rounds come from Next; their ids are
		// "sess_<id of round 0>" (workload doc).
		if n, ok := strings.CutPrefix(r.SessionID, "sess_"); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil {
				id = v
			}
		}
	}
	return pl.shard.Owns(id)
}

func (pl *specPlanner) followUpFunc() func(httpload.Result) (httpload.Job, bool) {
	if !pl.wl.HasFollowUps() {
		return nil
	}
	return pl.followUp
}

// followUp reports a finished request to the Source and schedules the
// follow-up it returns (closed-loop session rounds, concurrency users).
func (pl *specPlanner) followUp(res httpload.Result) (httpload.Job, bool) {
	id := res.Job.ID - pl.idBase
	var (
		r  *workload.Request
		ok bool
	)
	if res.Status == httpload.StatusOK {
		done := res.LastChunkUS
		if done == 0 {
			done = res.DoneUS
		}
		r, ok = pl.src.OnComplete(id, done, res.GeneratedTokens())
	} else {
		reason := workload.FailError
		if res.Status == httpload.StatusTimeout {
			reason = workload.FailTimeout
		}
		r, ok = pl.src.OnFailed(id, res.DoneUS, reason)
	}
	if !ok {
		return httpload.Job{}, false
	}
	return pl.job(r), true
}

func (pl *specPlanner) total() int64 {
	if !pl.wl.HasFollowUps() {
		n := pl.src.Pregenerated()
		if pl.shard.Sharded() {
			// Requests k ≡ I (mod N) of n.
			c, i := int64(pl.shard.Count), int64(pl.shard.Index)
			n = (n - i + c - 1) / c
		}
		return n
	}
	if pl.wl.Spec.NumRequests > 0 && !pl.shard.Sharded() {
		return pl.wl.Spec.NumRequests
	}
	return -1
}

func (pl *specPlanner) finish() { pl.src.Finish() }

// job maps one workload request to a job (docs/workload.md §10) and remembers
// its trace fields until its Result arrives.
func (pl *specPlanner) job(r *workload.Request) httpload.Job {
	j := httpload.Job{
		ID:           pl.idBase + r.ID,
		IntendedUS:   r.ArrivalUs,
		PrefixGroup:  r.PrefixGroup,
		PrefixTokens: r.PrefixLength,
		PromptTokens: r.InputTokens,
		Chat:         pl.chat,
		Stream:       r.Streaming || pl.forceStream,
		Model:        r.Model,
		RequestID:    newUUID(),
		Objective:    r.SLOClass,
		FairnessID:   r.TenantID,
		Timeout:      pl.reqTimeout,
		DeadlineUS:   r.DeadlineUs,
	}
	if !pl.unconstrained {
		n := r.OutputTokens
		if n <= 0 {
			n = defaultMaxTokens
		}
		j.MaxTokens, j.MinTokens = n, n
	}
	j.SLOTTFTms = sloTTFTms(r.SLOTargetUs, pl.wl.Spec.GoodputSLOTargets[r.SLOClass].TTFTMs)

	if pl.priorities {
		j.Priority, j.HasPriority = tracev2.VLLMPriority(r.SLOClass), true
	}
	if r.SessionID != "" && r.Client < len(pl.accumulate) && pl.accumulate[r.Client] {
		j.Prompt = pl.sess.prompt(r.SessionID, r.RoundIndex, j.ID, r.InputTokens, func() string {
			return pl.prompter.Prompt(j.ID, r.PrefixGroup, r.PrefixLength, r.InputTokens)
		})
	}
	pl.put(j.ID, &reqInfo{
		clientID: r.ClientID, tenantID: r.TenantID, sloClass: r.SLOClass, sessionID: r.SessionID,
		prefixGroup: r.PrefixGroup, model: r.Model, round: r.RoundIndex, prefixLength: r.PrefixLength,
		inputTokens: r.InputTokens, reasonRatio: r.ReasonRatio, deadlineUs: r.DeadlineUs,
		sloTargetUs: r.SLOTargetUs, thinkTimeUs: r.ThinkTimeUs,
	})
	return j
}

// sessionTexts builds the prompts of accumulating sessions (docs/workload.md
// §7): round 0 is its own first prompt; round k+1 resends round k's prompt
// word for word, followed by text of as many tokens as the round adds
// (round k's answer and round k+1's new input). The server's prefix cache
// so sees the resent context as it would a chat client's. Used on the plan
// side only.
type sessionTexts struct {
	p    *httpload.Prompter
	last map[string]sessText
}

// sessText is the last prompt of an accumulating session.
type sessText struct {
	text        string
	inputTokens int // input_tokens of that prompt (the group prefix not counted)
}

func newSessionTexts(p *httpload.Prompter) *sessionTexts {
	return &sessionTexts{p: p, last: map[string]sessText{}}
}

// prompt is the text of a session's round: first() for round 0 or a
// session not seen before, else the previous round's text extended.
func (st *sessionTexts) prompt(session string, round int, jobID int64, inputTokens int, first func() string) string {
	prev, ok := st.last[session]
	var text string
	if !ok || round == 0 {
		text = first()
	} else {
		text = prev.text
		if add := inputTokens - prev.inputTokens; add > 0 {
			text += " " + st.p.Text(^jobID, add)
		}
	}
	st.last[session] = sessText{text: text, inputTokens: inputTokens}
	return text
}

// end forgets a session.
func (st *sessionTexts) end(session string) { delete(st.last, session) }

// infos holds the trace fields of the jobs in flight, by job id; the plan
// side puts, the sink takes.
type infos struct {
	mu sync.Mutex
	m  map[int64]*reqInfo
}

func newInfos() infos { return infos{m: map[int64]*reqInfo{}} }

func (in *infos) put(id int64, info *reqInfo) {
	in.mu.Lock()
	in.m[id] = info
	in.mu.Unlock()
}

// take removes and returns the trace fields of a finished job.
func (in *infos) take(id int64) *reqInfo {
	in.mu.Lock()
	defer in.mu.Unlock()
	info := in.m[id]
	delete(in.m, id)
	return info
}

// newUUID returns a random (version 4) UUID from crypto/rand, for the
// x-request-id header and the x_request_id column.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}
