package main

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// defaultMaxTokens is asked for when a request's sampled output is not
// positive (workload.md §10).
const defaultMaxTokens = 2048

// reqInfo is what a trace row needs from the workload request beyond what
// the Result carries. The prompt's token ids are not kept.
type reqInfo struct {
	clientID, tenantID, sloClass, sessionID, prefixGroup, model string

	round, prefixLength, inputTokens int
	reasonRatio                      float64
	deadlineUs, sloTargetUs          int64
	thinkTimeUs                      int64
}

// planner turns workload requests into httpload jobs. Its plan side (jobs,
// followUp) runs under the dispatcher's plan lock, never concurrently, so
// the workload Source and the session prompts need no lock; infos is shared
// with the sink and has its own.
type planner struct {
	src      *workload.Source
	prompter *httpload.Prompter
	idBase   int64 // warm-up requests take ids 0..idBase−1

	chat, forceStream, unconstrained, priorities bool
	reqTimeout                                   time.Duration
	accumulate                                   []bool // per client index

	sessPrompt map[string]sessText // last prompt of accumulating sessions (plan side only)

	mu    sync.Mutex
	infos map[int64]*reqInfo // by job id, for the requests in flight
}

func newPlanner(wl *workload.Workload, src *workload.Source, p *httpload.Prompter, cfg *config, idBase int64) *planner {
	pl := &planner{
		src: src, prompter: p, idBase: idBase,
		chat: cfg.chat, forceStream: cfg.recordITL, unconstrained: cfg.unconstrain,
		priorities: hasSLOClasses(wl), reqTimeout: cfg.reqTimeout,
		sessPrompt: map[string]sessText{},
		infos:      map[int64]*reqInfo{},
	}
	for _, c := range wl.Spec.Clients {
		pl.accumulate = append(pl.accumulate, c.MultiTurn != nil && c.MultiTurn.ContextGrowth == workload.ContextAccumulate)
	}
	src.OnSessionEnd(func(e workload.SessionEnd) { delete(pl.sessPrompt, e.ID) })
	return pl
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

// jobs is the plan's job sequence: the Source's pre-generated requests.
func (pl *planner) jobs(yield func(httpload.Job) bool) {
	for {
		r, ok := pl.src.Next()
		if !ok || !yield(pl.job(r)) {
			return
		}
	}
}

// followUp reports a finished request to the Source and schedules the
// follow-up it returns (closed-loop session rounds, concurrency users).
func (pl *planner) followUp(res httpload.Result) (httpload.Job, bool) {
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
		r, ok = pl.src.OnComplete(id, done, generatedTokens(&res))
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

// job maps one workload request to a job (workload.md §10) and remembers
// its trace fields until its Result arrives.
func (pl *planner) job(r *workload.Request) httpload.Job {
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
	if r.SLOTargetUs > 0 {
		j.SLOTTFTms = (r.SLOTargetUs + 999) / 1000
	}
	if pl.priorities {
		j.Priority, j.HasPriority = tracev2.VLLMPriority(r.SLOClass), true
	}
	if r.SessionID != "" && r.Client < len(pl.accumulate) && pl.accumulate[r.Client] {
		j.Prompt = pl.sessionPrompt(r, j.ID)
	}
	info := &reqInfo{
		clientID: r.ClientID, tenantID: r.TenantID, sloClass: r.SLOClass, sessionID: r.SessionID,
		prefixGroup: r.PrefixGroup, model: r.Model, round: r.RoundIndex, prefixLength: r.PrefixLength,
		inputTokens: r.InputTokens, reasonRatio: r.ReasonRatio, deadlineUs: r.DeadlineUs,
		sloTargetUs: r.SLOTargetUs, thinkTimeUs: r.ThinkTimeUs,
	}
	pl.mu.Lock()
	pl.infos[j.ID] = info
	pl.mu.Unlock()
	return j
}

// sessionPrompt builds the text of an accumulating session's round: round
// 0 is the group prefix and its own text; round k+1 resends round k's
// prompt word for word, followed by text of as many tokens as the workload
// adds (round k's generated answer and round k+1's new input). The
// server's prefix cache so sees the resent context as it would a chat
// client's.
func (pl *planner) sessionPrompt(r *workload.Request, jobID int64) string {
	prev, ok := pl.sessPrompt[r.SessionID]
	var text string
	if !ok || r.RoundIndex == 0 {
		text = pl.prompter.Prompt(jobID, r.PrefixGroup, r.PrefixLength, r.InputTokens)
	} else {
		text = prev.text
		if add := r.InputTokens - prev.inputTokens; add > 0 {
			text += " " + pl.prompter.Text(^jobID, add)
		}
	}
	pl.sessPrompt[r.SessionID] = sessText{text: text, inputTokens: r.InputTokens}
	return text
}

// sessText is the last prompt of an accumulating session.
type sessText struct {
	text        string
	inputTokens int // the workload's input_tokens of that prompt
}

// take removes and returns the trace fields of a finished job.
func (pl *planner) take(id int64) *reqInfo {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	info := pl.infos[id]
	delete(pl.infos, id)
	return info
}

// generatedTokens is the output length of a completed request: the server's
// usage.completion_tokens, or the chunks that carried text when the server
// sent no usage.
func generatedTokens(r *httpload.Result) int {
	if r.HasUsage {
		return r.CompletionTokens
	}
	return r.TextChunks
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
