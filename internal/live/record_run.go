package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"servesim/internal/exitcode"
	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// runParts is what a recorded run is made of: the checked flags, the
// traffic, the set-up's client and facts, the side files opened before t0,
// the process's streams and log, and, for a sweep level, the watch that
// stops an over-saturated level (nil: none).
type runParts struct {
	cfg   *config
	tr    traffic
	s     *setup
	outs  *sideOutputs
	stdio IO
	log   *slog.Logger
	watch *saturation
}

// recording is one recorded run under way.
type recording struct {
	runParts
	pl   jobPlanner
	tal  *tally
	rows *resultRows // nil: no --result-json
	lv   *progressLine
	d    *httpload.Dispatcher
	plan httpload.Plan
	t0   time.Time
	hdr  *tracev2.Header
	tw   *tracev2.TraceWriter
	werr error // the first failed write: the run stops at it
}

// dispatched is how the dispatch ended.
type dispatched struct {
	stats     httpload.Stats
	err       error
	saturated bool // stopped early: the server fell behind without bound
}

// recordRun is the recorded run: t0, the header, then every request
// dispatched at its intended time and written as it finishes.
func recordRun(ctx context.Context, p runParts) (*levelOutcome, error) {
	r, err := startRecording(p)
	if err != nil {
		return nil, err
	}
	return r.finish(ctx, r.dispatch(ctx))
}

// startRecording plans the run, waits for --start-at, fixes t0 and writes
// the header.
func startRecording(p runParts) (*recording, error) {
	cfg := p.cfg
	r := &recording{runParts: p, pl: p.tr.newPlanner(p.s.prompter, cfg, int64(cfg.warmup), p.log), tal: newTally(cfg.goodput)}
	r.tal.slo = cfg.sweep.bounds
	if cfg.result.path != "" {
		r.rows = &resultRows{detailed: cfg.result.detailed}
	}
	var bar Progress
	if p.stdio.Progress != nil {
		bar = p.stdio.Progress(r.pl.total(), "observing")
	}
	r.lv = newProgressLine(bar)
	var err error
	if r.d, err = httpload.NewDispatcher(p.s.client, httpload.DispatchConfig{MaxConcurrency: cfg.maxConc, Drain: cfg.drain}); err != nil {
		return nil, err
	}
	r.plan = httpload.Plan{Jobs: p.watch.count(r.pl.jobs), FollowUp: r.pl.followUpFunc()}

	// t0: the monotonic instant just before the first dispatch, or the
	// --start-at instant every worker of a sharded run shares; every time
	// in the trace, the ITL file and the metrics series counts from it.
	r.t0 = time.Now()
	if !cfg.startAt.IsZero() {
		wait := cfg.startAt.Sub(r.t0) // wall clock: startAt has no monotonic reading
		if wait < 0 {
			return nil, exitcode.Usagef("--start-at %s passed %v ago, before set-up ended; give a later time (nothing was recorded)",
				cfg.startAt.UTC().Format(time.RFC3339Nano), (-wait).Round(time.Millisecond))
		}
		r.t0 = r.t0.Add(wait) // keeps the monotonic reading
		p.log.Info("waiting for --start-at", "in", wait.Round(time.Millisecond))
	}
	r.hdr = header(cfg, p.tr, p.s, r.t0)
	if r.tw, err = openTrace(cfg, p.stdio, r.hdr, p.tr.columns()); err != nil {
		return nil, fmt.Errorf("--trace-output: %w", err)
	}
	p.log.Info("recording", "trace", cfg.describe(), "t0", r.hdr.CreatedAt)
	return r, nil
}

// dispatch sends the requests, writing each row as its request finishes,
// while the scraper samples /metrics and the watch judges the backlog. The
// first interrupt stops new requests and lets those in flight drain; the
// second (IO.Aborted) cancels them.
func (r *recording) dispatch(ctx context.Context) dispatched {
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	ran := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-ran:
			return
		}
		r.log.Info(fmt.Sprintf("interrupted: no new requests; waiting up to %v for the requests in flight (interrupt again to cancel them now)", r.cfg.drain))
		select {
		case <-r.stdio.Aborted:
			r.log.Info("second interrupt: cancelling the requests in flight")
			r.d.Abort()
		case <-ran:
		}
	}()
	scrapeCtx, stopScrape := context.WithCancel(context.WithoutCancel(ctx))
	scraped := make(chan struct{})
	if r.outs.scraper != nil {
		go func() {
			defer close(scraped)
			r.outs.scraper.run(scrapeCtx, r.t0, r.cfg.scrapeInterval)
		}()
	} else {
		close(scraped)
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watch.run(runCtx, r.t0, stopRun, r.log)
	}()

	stats, runErr := r.d.Run(runCtx, httpload.NewClock(r.t0), r.plan, func(res httpload.Result) { r.sink(&res, stopRun) })
	saturated := errors.Is(context.Cause(runCtx), errOverSaturated)
	stopRun(nil)
	<-watched
	if saturated && ctx.Err() == nil {
		runErr = nil
	}
	close(ran)
	stopScrape()
	<-scraped
	r.lv.finish()
	r.pl.finish()
	return dispatched{stats: stats, err: runErr, saturated: saturated}
}

// sink writes a finished request's row (and ITL) and counts it; a failed
// write stops the run.
func (r *recording) sink(res *httpload.Result, stopRun context.CancelCauseFunc) {
	info := r.pl.take(res.Job.ID)
	rec := record(res, info)
	if r.rows != nil {
		r.rows.add(res, info)
	}
	if r.werr == nil {
		r.werr = r.tw.Write(&rec)
		if r.werr == nil && r.outs.itl != nil && res.Status == httpload.StatusOK && res.Job.Stream && len(res.ChunkUS) > 0 {
			r.werr = r.outs.itl.WriteRequest(rec.RequestID, res.ChunkUS)
		}
		if r.werr != nil {
			stopRun(fmt.Errorf("%w: %w", errWrite, r.werr))
		}
	}
	r.tal.add(res)
	r.lv.update(r.tal)
	r.watch.finished()
}

// finish scrapes /metrics once more, closes the trace with its trailer,
// writes the summary and --result-json, and says how the run ended.
func (r *recording) finish(ctx context.Context, dd dispatched) (*levelOutcome, error) {
	cfg, stats := r.cfg, dd.stats
	interrupted := stats.Interrupted && ctx.Err() != nil
	final := r.hdr.Clone()
	cut := interrupted || r.werr != nil // a failed write (a full disk) cut the run short too
	final.XExt.Interrupted = &cut
	r.scrapeAfter(ctx, final, interrupted)
	finalFacts(final, stats, r.outs.scraper)
	closeErr := r.tw.Close(final)
	sideErr := r.outs.close()
	if r.outs.scraper != nil {
		sideErr = errors.Join(sideErr, r.outs.scraper.err())
	}

	sumTo := r.stdio.Err
	if cfg.summaryTo == "stdout" {
		sumTo = r.stdio.Out
	}
	sumErr := r.tal.write(sumTo, summaryInfo{maxConcurrency: cfg.maxConc, interrupted: interrupted})
	if r.rows != nil {
		sideErr = errors.Join(sideErr, saveResult(cfg, r.tr, r.s, r.tal, r.rows, r.t0, r.stdio))
	}
	if cfg.traceOut != "-" && cfg.blisHeader {
		hp, _, _ := tracev2.PrefixPaths(cfg.traceOut)
		r.log.Info("x_ext (deployment, client, self-test) is in " + tracev2.ExtSidecarPath(hp) + ", beside the BLIS-compatible header")
	}
	out := &levelOutcome{tally: r.tal, stats: stats, saturated: dd.saturated, reason: r.watch.reason()}
	switch {
	case r.werr != nil:
		return out, fmt.Errorf("write trace: %w (the rows written before it are valid)", r.werr)
	case closeErr != nil:
		return out, fmt.Errorf("finish trace: %w", closeErr)
	case sideErr != nil:
		return out, sideErr
	case interrupted:
		return out, exitcode.WithCode(exitcode.Interrupted, fmt.Errorf("%v: %d requests recorded (%d ok, %d failed, cancelled or not sent)",
			context.Cause(ctx), stats.Results, stats.OK, stats.Results-stats.OK))
	case dd.err != nil:
		return out, dd.err
	case sumErr != nil:
		return out, fmt.Errorf("write summary: %w", sumErr)
	}
	r.log.Info("done", "requests", stats.Results, "ok", stats.OK, "errors", stats.Errors, "timeouts", stats.Timeouts,
		"late", stats.Late, "not_sent", stats.NotSent)
	return out, nil
}

// scrapeAfter is the scrape after the run, into the final header; an
// interrupted run allows it a second, an aborted one none.
func (r *recording) scrapeAfter(ctx context.Context, final *tracev2.Header, interrupted bool) {
	sc := r.outs.scraper
	if sc == nil {
		return
	}
	bound := afterScrapeTimeout
	if interrupted {
		bound = time.Second
	}
	select {
	case <-r.stdio.Aborted:
	default:
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
		sc.scrape(actx, "after")
		cancel()
	}
	final.ObservedKVMetrics = sc.observed()
	if final.ObservedKVMetrics == nil {
		r.log.Warn("--scrape-metrics: the server reports no prefix-cache counters; observed_kv_metrics not written")
	}
}
