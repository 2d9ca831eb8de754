package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"servesim/internal/cli"
	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// sideOutputs are the files opened before t0 (so a bad path fails before
// any request): the ITL CSV and the /metrics time series.
type sideOutputs struct {
	itlFile *os.File
	itl     *tracev2.ITLWriter
	metFile *os.File
	scraper *scraper
}

func openSide(cfg *config, s *setup, log *slog.Logger) (*sideOutputs, error) {
	o := &sideOutputs{}
	if cfg.itlOut != "" {
		f, err := os.Create(cfg.itlOut)
		if err != nil {
			return nil, fmt.Errorf("--itl-output: %w", err)
		}
		o.itlFile = f
		if o.itl, err = tracev2.NewITLWriter(f); err != nil {
			o.close()
			return nil, err
		}
	}
	if cfg.scrape {
		// A client of its own, so a scrape never takes a connection the
		// load client kept warm for a request.
		c, err := httpload.NewClient(httpload.Config{BaseURL: cfg.url, APIKey: cfg.apiKey, Headers: cfg.headers,
			InsecureSkipVerify: cfg.insecure, MaxConns: 2})
		if err != nil {
			o.close()
			return nil, cli.Usagef("--server-url: %v", err)
		}
		var w io.Writer // nil: no time series
		if cfg.metricsOut != "" {
			f, err := os.Create(cfg.metricsOut)
			if err != nil {
				o.close()
				return nil, fmt.Errorf("--metrics-output: %w", err)
			}
			o.metFile, w = f, f
		} else {
			log.Info("--scrape-metrics: no time series file with the trace on stdout (give --metrics-output); the deltas go to the trailer")
		}
		o.scraper, err = newScraper(c, w, log)
		if err != nil {
			o.close()
			return nil, err
		}
	}
	return o, nil
}

// close closes the side files; safe to call twice.
func (o *sideOutputs) close() error {
	var errs []error
	if o.itlFile != nil {
		errs = append(errs, o.itlFile.Close())
		o.itlFile = nil
	}
	if o.metFile != nil {
		errs = append(errs, o.metFile.Close())
		o.metFile = nil
	}
	if o.scraper != nil {
		o.scraper.c.Close()
	}
	return errors.Join(errs...)
}

// openTrace starts the trace: the header goes out at once.
func openTrace(cfg *config, stdio cli.IO, h *tracev2.Header, cols tracev2.Columns) (*tracev2.TraceWriter, error) {
	if cfg.traceOut == "-" {
		return tracev2.NewStreamWriter(stdio.Out, h, cols)
	}
	hp, dp, _ := prefixPaths(cfg.traceOut)
	return tracev2.CreateFiles(hp, dp, h, cols, !cfg.blisHeader)
}

// recordRun is the recorded run: t0, the header, then every request
// dispatched at its intended time and written as it finishes.
func recordRun(ctx context.Context, cfg *config, tr traffic, s *setup, outs *sideOutputs, stdio cli.IO, log *slog.Logger, watch *saturation) (*levelOutcome, error) {
	pl := tr.newPlanner(s.prompter, cfg, int64(cfg.warmup), log)
	tal := newTally(cfg.goodput)
	tal.slo = cfg.sweep.bounds
	var rows *resultRows
	if cfg.result.path != "" {
		rows = &resultRows{detailed: cfg.result.detailed}
	}
	var bar *cli.Progress
	if !cfg.quiet && cli.IsTerminal(stdio.Err) {
		bar = cli.NewProgress(stdio.Err, cfg.quiet, pl.total(), "observing")
	}
	lv := newLive(bar)
	d, err := httpload.NewDispatcher(s.client, httpload.DispatchConfig{MaxConcurrency: cfg.maxConc, Drain: cfg.drain})
	if err != nil {
		return nil, err
	}
	plan := httpload.Plan{Jobs: watch.count(pl.jobs), FollowUp: pl.followUpFunc()}

	// t0: the monotonic instant just before the first dispatch, or the
	// --start-at instant every worker of a sharded run shares; every time
	// in the trace, the ITL file and the metrics series counts from it.
	t0 := time.Now()
	if !cfg.startAt.IsZero() {
		wait := cfg.startAt.Sub(t0) // wall clock: startAt has no monotonic reading
		if wait < 0 {
			return nil, cli.Usagef("--start-at %s passed %v ago, before set-up ended; give a later time (nothing was recorded)",
				cfg.startAt.UTC().Format(time.RFC3339Nano), (-wait).Round(time.Millisecond))
		}
		t0 = t0.Add(wait) // keeps the monotonic reading
		log.Info("waiting for --start-at", "in", wait.Round(time.Millisecond))
	}
	clock := httpload.NewClock(t0)
	hdr := header(cfg, tr, s, t0)
	tw, err := openTrace(cfg, stdio, hdr, tr.columns())
	if err != nil {
		return nil, fmt.Errorf("--trace-output: %w", err)
	}
	log.Info("recording", "trace", cfg.describe(), "t0", hdr.CreatedAt)

	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	ran := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-ran:
			return
		}
		log.Info(fmt.Sprintf("interrupted: no new requests; waiting up to %v for the requests in flight (interrupt again to cancel them now)", cfg.drain))
		select {
		case <-cli.Aborted(ctx):
			log.Info("second interrupt: cancelling the requests in flight")
			d.Abort()
		case <-ran:
		}
	}()
	scrapeCtx, stopScrape := context.WithCancel(context.WithoutCancel(ctx))
	scraped := make(chan struct{})
	if outs.scraper != nil {
		go func() {
			defer close(scraped)
			outs.scraper.run(scrapeCtx, t0, cfg.scrapeInterval)
		}()
	} else {
		close(scraped)
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watch.run(runCtx, t0, stopRun, log)
	}()

	var werr error
	sink := func(res httpload.Result) {
		info := pl.take(res.Job.ID)
		rec := record(&res, info)
		if rows != nil {
			rows.add(&res, info)
		}
		if werr == nil {
			werr = tw.Write(&rec)
			if werr == nil && outs.itl != nil && res.Status == httpload.StatusOK && res.Job.Stream && len(res.ChunkUS) > 0 {
				werr = outs.itl.WriteRequest(rec.RequestID, res.ChunkUS)
			}
			if werr != nil {
				stopRun(fmt.Errorf("%w: %w", errWrite, werr))
			}
		}
		tal.add(&res)
		lv.update(tal)
		watch.finished()
	}
	stats, runErr := d.Run(runCtx, clock, plan, sink)
	saturated := errors.Is(context.Cause(runCtx), errOverSaturated)
	stopRun(nil)
	<-watched
	if saturated && ctx.Err() == nil {
		runErr = nil
	}
	close(ran)
	stopScrape()
	<-scraped
	lv.finish()
	pl.finish()

	interrupted := stats.Interrupted && ctx.Err() != nil
	final := hdr.Clone()
	cut := interrupted || werr != nil // a failed write (a full disk) cut the run short too
	final.XExt.Interrupted = &cut
	if outs.scraper != nil {
		// The scrape after the run; an interrupted run allows it a second,
		// an aborted one none.
		bound := afterScrapeTimeout
		if interrupted {
			bound = time.Second
		}
		select {
		case <-cli.Aborted(ctx):
		default:
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
			outs.scraper.scrape(actx, "after")
			cancel()
		}
		final.ObservedKVMetrics = outs.scraper.observed()
		if final.ObservedKVMetrics == nil {
			log.Warn("--scrape-metrics: the server reports no prefix-cache counters; observed_kv_metrics not written")
		}
	}
	finalFacts(final, stats, outs.scraper)
	closeErr := tw.Close(final)
	sideErr := outs.close()
	if outs.scraper != nil {
		sideErr = errors.Join(sideErr, outs.scraper.err())
	}

	sumTo := stdio.Err
	if cfg.summaryTo == "stdout" {
		sumTo = stdio.Out
	}
	sumErr := tal.write(sumTo, summaryInfo{maxConcurrency: cfg.maxConc, interrupted: interrupted})
	if rows != nil {
		sideErr = errors.Join(sideErr, saveResult(cfg, tr, s, tal, rows, t0, stdio))
	}
	if cfg.traceOut != "-" && cfg.blisHeader {
		hp, _, _ := prefixPaths(cfg.traceOut)
		log.Info("x_ext (deployment, client, self-test) is in " + tracev2.ExtSidecarPath(hp) + ", beside the BLIS-compatible header")
	}
	out := &levelOutcome{tally: tal, stats: stats, saturated: saturated, reason: watch.reason()}
	switch {
	case werr != nil:
		return out, fmt.Errorf("write trace: %w (the rows written before it are valid)", werr)
	case closeErr != nil:
		return out, fmt.Errorf("finish trace: %w", closeErr)
	case sideErr != nil:
		return out, sideErr
	case interrupted:
		return out, cli.WithCode(cli.ExitInterrupted, fmt.Errorf("%v: %d requests recorded (%d ok, %d failed, cancelled or not sent)",
			context.Cause(ctx), stats.Results, stats.OK, stats.Results-stats.OK))
	case runErr != nil:
		return out, runErr
	case sumErr != nil:
		return out, fmt.Errorf("write summary: %w", sumErr)
	}
	log.Info("done", "requests", stats.Results, "ok", stats.OK, "errors", stats.Errors, "timeouts", stats.Timeouts,
		"late", stats.Late, "not_sent", stats.NotSent)
	return out, nil
}

// levelOutcome is what one recorded run measured: the sweep's row of it.
type levelOutcome struct {
	tally     *tally
	stats     httpload.Stats
	saturated bool   // stopped early: the server fell behind without bound
	reason    string // why, in numbers
}

// saveResult writes --result-json (whole or not at all).
func saveResult(cfg *config, tr traffic, s *setup, tal *tally, rows *resultRows, t0 time.Time, stdio cli.IO) error {
	backend := "openai"
	if cfg.chat {
		backend = "openai-chat"
	}
	data, err := writeResult(cfg.result, resultInfo{model: s.model, backend: backend, maxConcurrency: cfg.maxConc,
		facts: tr.bench(), t0: t0, end: time.Now(), goodput: cfg.goodput.set()}, tal, rows)
	if err != nil {
		return err
	}
	return writeWhole(cfg.result.path, "--result-json", data, stdio)
}

// writeWhole writes data to path ("-" = stdout) so that a file appears
// whole or not at all; flag names the output in errors.
func writeWhole(path, flag string, data []byte, stdio cli.IO) error {
	out, err := cli.CreateOutput(path, stdio.Out)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	defer out.Abort()
	if _, err := out.Write(data); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return out.Commit()
}
