package replay

import (
	"context"
	"io"

	"servesim/internal/deploy"
	"servesim/internal/des/metrics"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// WorkloadSource presents a workload generator as the rows `run` writes to
// its trace: it is both the Source of pre-generated requests and the
// FollowUps of closed-loop sessions.
type WorkloadSource struct {
	src *workload.Source
	rec tracev2.Record // the last record handed out
}

// FromWorkload adapts a workload source.
func FromWorkload(src *workload.Source) *WorkloadSource { return &WorkloadSource{src: src} }

// Next implements Source.
func (w *WorkloadSource) Next() (*tracev2.Record, error) {
	r, ok := w.src.Next()
	if !ok {
		return nil, io.EOF
	}
	w.rec = Record(r)
	return &w.rec, nil
}

// OnComplete implements FollowUps.
func (w *WorkloadSource) OnComplete(rec *tracev2.Record, doneUs int64, generated int) (*tracev2.Record, bool) {
	return w.follow(w.src.OnComplete(rec.RequestID, doneUs, generated))
}

// OnFailed implements FollowUps.
func (w *WorkloadSource) OnFailed(rec *tracev2.Record, atUs int64, timedOut bool) (*tracev2.Record, bool) {
	reason := workload.FailDropped
	if timedOut {
		reason = workload.FailTimeout
	}
	return w.follow(w.src.OnFailed(rec.RequestID, atUs, reason))
}

func (w *WorkloadSource) follow(r *workload.Request, ok bool) (*tracev2.Record, bool) {
	if !ok {
		return nil, false
	}
	w.rec = Record(r)
	return &w.rec, true
}

// Record is the generated-mode trace row of a workload request before
// simulation (docs/tracev2.md §4.2): send = arrival, no chunk times yet.
func Record(r *workload.Request) tracev2.Record {
	return tracev2.Record{
		RequestID:     r.ID,
		ClientID:      r.ClientID,
		TenantID:      r.TenantID,
		SLOClass:      r.SLOClass,
		VLLMPriority:  tracev2.VLLMPriority(r.SLOClass),
		SessionID:     r.SessionID,
		RoundIndex:    r.RoundIndex,
		PrefixGroup:   r.PrefixGroup,
		PrefixLength:  r.PrefixLength,
		Streaming:     r.Streaming,
		InputTokens:   r.InputTokens,
		OutputTokens:  r.OutputTokens,
		TextTokens:    r.PrefixLength + r.InputTokens - r.ImageTokens - r.AudioTokens - r.VideoTokens,
		ImageTokens:   r.ImageTokens,
		AudioTokens:   r.AudioTokens,
		VideoTokens:   r.VideoTokens,
		ReasonRatio:   r.ReasonRatio,
		Model:         r.Model,
		DeadlineUs:    r.DeadlineUs,
		SLOTargetUs:   r.SLOTargetUs,
		ArrivalTimeUs: r.ArrivalUs,
		SendTimeUs:    r.ArrivalUs,
		ThinkTimeUs:   r.ThinkTimeUs,
	}
}

// WorkloadConfig is the simulation `run` makes of a generated workload on a
// deployment: the workload's seed, session context growth, horizon and
// goodput targets. run and the sweep of run share it, so that a sweep's
// case is exactly the run of the same flags.
func WorkloadConfig(wl *workload.Workload, dep *deploy.Resolved) Config {
	var targets map[string]metrics.SLOTarget
	for class, t := range wl.Spec.GoodputSLOTargets {
		if targets == nil {
			targets = map[string]metrics.SLOTarget{}
		}
		targets[class] = metrics.SLOTarget{TTFTMs: t.TTFTMs, ITLMs: t.ITLMs, E2EMs: t.E2EMs}
	}
	return Config{
		Deploy:        dep,
		Seed:          wl.Spec.Seed,
		ContextGrowth: wl.ContextGrowth(),
		HorizonUs:     wl.Spec.HorizonUs,
		SLOTargets:    targets,
	}
}

// SimulateWorkload generates wl's requests (and the follow-ups of its
// closed-loop sessions) and simulates them with cfg (WorkloadConfig). The
// simulator synthesises its own token ids (tokens), so the workload's are
// not made.
func SimulateWorkload(ctx context.Context, cfg Config, wl *workload.Workload, sink Sink) (Outcome, error) {
	src := wl.NewShapeSource()
	var fu FollowUps
	if wl.HasSessions() {
		fu = FromWorkload(src)
	}
	cfg.UniqueIDs = true // the workload numbers its requests
	res, err := Simulate(ctx, cfg, FromWorkload(src), fu, sink)
	if err != nil && !res.Interrupted {
		return res, err
	}
	src.Finish() // an interrupted run's sessions end with it
	return res, err
}
