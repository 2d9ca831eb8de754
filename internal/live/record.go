package live

import (
	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// columns decides the trace's optional columns before the first row
// (docs/tracev2.md §4.3–4.4).
func (t *specTraffic) columns() tracev2.Columns {
	wl := t.wl
	cols := tracev2.Columns{
		VLLMPriority:   hasSLOClasses(wl),
		XRequestID:     true,
		ThinkTime:      wl.HasSessions(),
		FirstTokenTime: true,
		CachedTokens:   true,
	}
	for _, c := range wl.Spec.Clients {
		if c.SLOTargetUs > 0 {
			cols.SLOTarget = true
		}
	}
	return cols
}

// record is the trace row of one finished request (docs/tracev2.md §4.2, mode
// real). All times are on the run's origin t0.
func record(res *httpload.Result, info *reqInfo) tracev2.Record {
	j := &res.Job
	rec := tracev2.Record{
		RequestID:         j.ID,
		Streaming:         j.Stream,
		OutputTokens:      res.CompletionTokens,
		ServerInputTokens: res.PromptTokens,
		ArrivalTimeUs:     j.IntendedUS,
		SendTimeUs:        res.SendUS,
		FirstChunkTimeUs:  res.FirstChunkUS,
		LastChunkTimeUs:   res.LastChunkUS,
		NumChunks:         res.NumChunks,
		Status:            string(res.Status),
		ErrorMessage:      res.Error,
		FinishReason:      res.FinishReason,
		XRequestID:        j.RequestID,
		FirstTokenTimeUs:  res.FirstTokenUS,
		CachedTokens:      res.CachedTokens,
	}
	if j.HasPriority {
		rec.VLLMPriority = j.Priority
	}
	if res.Status == httpload.StatusOK {
		rec.OutputTokens = res.GeneratedTokens()
		if why := res.UsageMismatch(); why != "" {
			rec.ErrorMessage = why // the row stays ok: it was answered
		}
	}
	if info != nil {
		rec.ClientID, rec.TenantID, rec.SLOClass = info.clientID, info.tenantID, info.sloClass
		rec.SessionID, rec.RoundIndex = info.sessionID, info.round
		rec.PrefixGroup, rec.PrefixLength = info.prefixGroup, info.prefixLength
		rec.InputTokens, rec.ReasonRatio, rec.Model = info.inputTokens, info.reasonRatio, info.model
		rec.DeadlineUs, rec.SLOTargetUs, rec.ThinkTimeUs = info.deadlineUs, info.sloTargetUs, info.thinkTimeUs
		rec.HashIDs = info.hashIDs
	}
	return rec
}
