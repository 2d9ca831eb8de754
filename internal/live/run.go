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

// setupTimeout bounds each set-up exchange with the server (model list,
// calibration) when --request-timeout does not.
const setupTimeout = 60 * time.Second

// afterScrapeTimeout bounds the /metrics scrape after the run.
const afterScrapeTimeout = 5 * time.Second

// observe runs the whole command against the server once the workload is
// resolved: probe, calibrate, self-test, warm-up, then the recorded run.
func observe(ctx context.Context, cfg *config, tr traffic, stdio IO, log *slog.Logger) error {
	s, err := setUp(ctx, cfg, tr, log)
	if err != nil {
		return beforeRun(ctx, err)
	}

	defer s.client.Close()
	outs, err := openSide(cfg, s, log)
	if err != nil {
		return beforeRun(ctx, err)
	}
	defer outs.close()
	if cfg.scrape {
		outs.scraper.scrapeBefore(ctx)
	}
	if ctx.Err() != nil {
		return beforeRun(ctx, ctx.Err())
	}
	out, err := recordRun(ctx, runParts{cfg: cfg, tr: tr, s: s, outs: outs, stdio: stdio, log: log})
	if err != nil {
		return err
	}
	// A sweep's levels past the server's capacity fail by design; a single
	// run in which requests fail does not pass.
	return checkFailures(out.stats, cfg.maxErrorRate)
}

// beforeRun is the error of a run that stopped before t0: nothing was
// written; an interrupt still exits 130.
func beforeRun(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return exitcode.WithCode(exitcode.Interrupted, fmt.Errorf("interrupted before the run started; no trace written: %w", context.Cause(ctx)))
	}
	return err
}

// setup is what the run needs from the set-up phase.
type setup struct {
	client      *httpload.Client
	prompter    *httpload.Prompter
	model       string
	info        serverInfo
	maxModelLen int64
	selfTest    *tracev2.SelfTest
	facts       serverFacts
}

// setUp learns the model and the tokenizer ratio, measures the client's
// own error, and warms the server and the connection pool.
func setUp(ctx context.Context, cfg *config, tr traffic, log *slog.Logger) (*setup, error) {
	bound := setupTimeout
	if cfg.reqTimeout > 0 {
		bound = max(bound, cfg.reqTimeout)
	}
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	info, err := probeServer(sctx, cfg)
	if err != nil {
		return nil, err
	}
	if m, ok := tr.(modelAware); ok {
		m.setModels(info.models)
	}
	s := &setup{info: info, model: cfg.model, maxModelLen: info.maxModelLen}
	if s.model == "" {
		if len(info.models) == 0 {
			return nil, exitcode.Usagef("--model is required: the server lists no model at /v1/models")
		}
		s.model = info.models[0]
		log.Info("model taken from the server's /v1/models", "model", s.model)
	}
	hcfg := httpload.Config{BaseURL: cfg.url, Model: s.model, APIKey: cfg.apiKey, Headers: cfg.headers, InsecureSkipVerify: cfg.insecure}
	probe, err := httpload.NewClient(hcfg)
	if err != nil {
		return nil, exitcode.Usagef("--server-url: %v", err)
	}
	cal, err := probe.Calibrate(sctx)
	if err != nil {
		probe.Close()
		return nil, fmt.Errorf("server %s: %w", cfg.url, err)
	}
	if s.maxModelLen == 0 {
		s.maxModelLen = int64(cal.MaxModelLen)
	}
	s.facts = learnServer(sctx, probe, cfg, s, log)
	probe.Close()
	log.Info("server", "model", s.model, "tokens_per_word", fmt.Sprintf("%.4f", cal.TokensPerWord), "from", cal.Source,
		"max_model_len", s.maxModelLen, "rtt_ms", info.rttMs)
	if s.prompter, err = httpload.NewPrompter(tr.seed(), cal.TokensPerWord); err != nil {
		return nil, fmt.Errorf("server %s: %w", cfg.url, err)
	}
	if !cfg.noSelfTest {
		streams := selfTestStreams(cfg, tr)
		st, err := runSelfTest(ctx, streams, quickSelfTest())
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			log.Warn("self-test failed; the client's own error is unknown", "error", err)
		default:
			s.selfTest = &st
			log.Info("self-test", "streams", st.Streams, "ttft_error_p50_us", st.TTFTBiasUs, "ttft_error_p99_us", st.TTFTErrorP99Us,
				"itl_jitter_p99_us", st.ITLJitterP99Us, "dispatch_lag_p99_us", st.DispatchLagP99Us)
			if st.TTFTBiasUs > 1000 || st.TTFTErrorP99Us > 5000 {
				log.Warn("this machine adds measurable error to the client's own timing; latency differences below it are not resolved",
					"ttft_error_p50_ms", float64(st.TTFTBiasUs)/1000, "ttft_error_p99_ms", float64(st.TTFTErrorP99Us)/1000)
			}
		}
	}
	hcfg.Prompter = s.prompter
	hcfg.MaxConns = max(4096, cfg.maxConc, prewarmConns(cfg, tr))
	if s.client, err = httpload.NewClient(hcfg); err != nil {
		return nil, exitcode.Usagef("--server-url: %v", err)
	}
	if err := warmUp(ctx, cfg, tr, s, log); err != nil {
		s.client.Close()
		return nil, err
	}
	if conns := prewarmConns(cfg, tr); conns > 0 {
		n, err := s.client.Prewarm(ctx, conns)
		if err != nil {
			if ctx.Err() != nil {
				s.client.Close()
				return nil, ctx.Err()
			}
			log.Warn("prewarm", "opened", n, "error", err)
		}
	}
	return s, nil
}

// prewarmConns is the number of connections to open before t0: --prewarm,
// or by default the run's concurrency when it is known (the cap, or the
// closed-loop users); an open loop without a cap opens them as it goes.
func prewarmConns(cfg *config, tr traffic) int {
	if cfg.prewarm >= 0 {
		return cfg.prewarm
	}
	if cfg.maxConc > 0 {
		return cfg.maxConc
	}
	return tr.users()
}

// selfTestStreams is the self-test's concurrency: the flag, else the run's
// cap, else its closed-loop users, else defaultSelfTestStreams.
func selfTestStreams(cfg *config, tr traffic) int {
	if cfg.selfTestStreams > 0 {
		return cfg.selfTestStreams
	}
	if cfg.maxConc > 0 {
		return min(cfg.maxConc, maxSelfTestStreams)
	}
	if users := tr.users(); users > 0 {
		return min(users, maxSelfTestStreams)
	}
	return defaultSelfTestStreams
}

// warmUp sends the first --warmup-requests requests of a separate pass over
// the same traffic before t0, as ids 0..N−1 (not recorded; the run's ids
// start at N, docs/tracev2.md §4.2). Their own text differs from the run's, so
// they warm the server without pre-filling the run's prompts.
func warmUp(ctx context.Context, cfg *config, tr traffic, s *setup, log *slog.Logger) error {
	if cfg.warmup == 0 {
		return nil
	}
	pl := tr.newPlanner(s.prompter, cfg, 0, log)
	defer pl.finish()
	n := cfg.warmup
	jobs := func(yield func(httpload.Job) bool) {
		sent := 0
		for j := range pl.jobs {
			if sent >= n {
				return
			}
			pl.take(j.ID)
			j.IntendedUS, j.DeadlineUS = 0, 0
			if !yield(j) {
				return
			}
			sent++
		}
	}
	d, err := httpload.NewDispatcher(s.client, httpload.DispatchConfig{MaxConcurrency: cfg.maxConc})
	if err != nil {
		return err
	}
	failed, first := 0, ""
	stats, err := d.Run(ctx, httpload.NewClock(time.Now()), httpload.Plan{Jobs: jobs}, func(r httpload.Result) {
		if r.Status != httpload.StatusOK {
			failed++
			if first == "" {
				first = r.Error
			}
		}
	})
	if err != nil {
		return err
	}
	log.Info("warm-up done", "requests", stats.Results, "failed", failed)
	if failed > 0 {
		log.Warn("warm-up requests failed", "failed", failed, "first_error", first)
	}
	return nil
}

// header is the trace header of the run (docs/tracev2.md §3, mode real).
func header(cfg *config, tr traffic, s *setup, t0 time.Time) *tracev2.Header {
	h := tracev2.DefaultHeader()
	h.CreatedAt = tracev2.FormatCreatedAt(t0)
	h.Mode = tracev2.ModeReal
	h.WarmUpRequests = cfg.warmup
	h.Server = &tracev2.Server{Type: "vllm"} // its model and context length: the checked facts (recordFacts)
	if s.info.rttMs > 0 {
		h.Network = &tracev2.Network{MeasuredRTTMs: s.info.rttMs}
	}
	h.XExt = &tracev2.Ext{Tool: "observe", ToolVersion: cfg.version, T0UnixUs: t0.UnixMicro(),
		TimeOrigin: tracev2.OriginRelative, SelfTest: s.selfTest}
	tr.describe(h)
	recordFacts(h, s.facts, observedClient(cfg, tr))
	if cfg.mark.url != "" {
		if h.XExt.ServerInfo == nil {
			h.XExt.ServerInfo = &tracev2.ServerInfo{}
		}
		h.XExt.ServerInfo.URL = cfg.mark.url
	}
	return h
}

// errWrite marks a failure to write an output: the run stops (exit 1).
var errWrite = errors.New("output failed")
