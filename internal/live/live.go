package live

import (
	"context"
	"io"
	"log/slog"
	"time"

	"servesim/internal/exitcode"
	"servesim/internal/fanout"
	"servesim/internal/workload"
)

// Config is one observe invocation, as its flags give it: values typed but
// not yet checked (Run checks them and reports a usage error, exit 2, for
// the first one that is wrong). Zero values are the flags' zero values,
// not their defaults: the command fills in its defaults.
type Config struct {
	URL            string // --server-url
	Model          string
	APIKey         string // never written anywhere
	Insecure       bool
	Headers        []string // NAME:VALUE
	RequestTimeout time.Duration
	Chat           bool
	Unconstrained  bool // --unconstrained-output
	MaxConcurrency int
	WarmupRequests int
	Prewarm        int // -1 = the run's concurrency when known

	TraceOutput string // "-" = one stream on stdout, else a two-file prefix
	BLISHeader  bool   // --blis-compatible-header
	RecordITL   bool
	ITLOutput   string
	Drain       time.Duration
	Summary     bool // the end summary on stdout

	ResultJSON        string
	PercentileMetrics string
	MetricPercentiles string
	ResultDetailed    bool
	Label             string
	Metadata          []string // KEY=VALUE

	MaxErrorRate   float64
	Goodput        string // ttft:MS,tpot:MS,e2el:MS
	Scrape         bool
	ScrapeInterval time.Duration
	MetricsOutput  string

	ServerConfig string // a deployment YAML declaring the server
	VLLMArgs     string // the `vllm serve` command line
	SweepLevel   string

	Sweep       bool // --sweep
	SweepLevels int
	Rates       string
	SLO         string
	SweepOutput string
	HTML        string
	Overlay     string

	// Repeat runs the traffic this many times, each run its own trace
	// (nil: once, a plain run); URLB is a second server measured in turn
	// with the first (A B A B …); RepeatOutput is the JSON of the repeats'
	// summary ("" = PREFIX.repeat.json).
	Repeat       *int
	URLB         string
	RepeatOutput string

	SelfTest        bool // only the self-test
	NoSelfTest      bool
	SelfTestStreams int
	DryRun          bool
	Shard           fanout.Shard
	StartAt         string // RFC 3339 or Unix seconds; "" = when set-up ends

	// Trace, when set, plays a recorded trace; else Workload is sent.
	Trace *TraceConfig
	// Workload reads the workload's options (--workload, --rate, ...)
	// when the run sends a workload: they may read a spec from stdin.
	// Duration bounds the workload or the played trace (nil: not given).
	Workload func() (workload.Options, error)
	Duration *time.Duration

	// Merge merges the traces Inputs by time into TraceOutput and contacts
	// no server.
	Merge  bool
	Inputs []string

	Version string // the tool version recorded in headers
}

// TraceConfig is observe --trace: which trace to play and how.
type TraceConfig struct {
	Path        string // file, or - for stdin
	From        string // a foreign format; "" = TraceV2
	Lenient     bool
	TimeScale   float64
	Offset      time.Duration
	InjectAt    string // arrival or send
	SessionMode string // fixed or closed-loop
	HashBlock   int    // prompt tokens per hash-id block
	ThinkTime   time.Duration
	NumRequests *int64 // nil: all rows
	Seed        *int64 // nil: the header's seed, else 42
	Streaming   bool   // stream every request
}

// Progress is a progress bar (the command draws it on a terminal).
type Progress interface {
	Set(n int64, desc string)
	Finish()
}

// IO is what the process gives a run: its standard streams, its logger,
// a progress bar and the second-interrupt channel.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	Log      *slog.Logger
	// Progress returns a bar of max steps (−1 unknown), or nil for none;
	// a nil Progress func draws none.
	Progress func(max int64, desc string) Progress
	// Aborted is closed when the user asks a draining run to stop at once
	// (a second Ctrl+C); nil never is.
	Aborted <-chan struct{}
}

// Run is observe: it checks cfg, then merges traces, runs the self-test,
// writes the plan of a dry run, sweeps the server, records the workload or
// the played trace several times (--repeat, --url-b), or records one run
// of it. Its error carries the exit code
// (ExitCode): 2 for bad usage, 3 for an assertion, 130 when interrupted.
// Nothing it writes to Err carries the run's secrets.
func Run(ctx context.Context, in Config, stdio IO) (err error) {
	log := stdio.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if in.Merge {
		return mergeTraces(in.Inputs, in.TraceOutput, in.BLISHeader, stdio, log)
	}
	cfg, err := newConfig(&in)
	if err != nil {
		return err
	}
	red := cfg.redactor()
	log = slog.New(&redactHandler{h: log.Handler(), red: red})
	defer func() { err = redactError(err, red) }()
	if cfg.selfTestOnly {
		return selfTestOnly(ctx, cfg, stdio)
	}
	if in.Trace != nil {
		tr, err := readTrace(in.Trace, cfg, stdio, log)
		if err != nil {
			return err
		}
		if cfg.sweep.active() {
			return exitcode.Usagef("--trace plays a trace at its own times: --sweep and --rates do not apply")
		}
		if cfg.dryRun {
			return dryRun(cfg, tr, stdio)
		}
		if cfg.repeat.on {
			return runRepeats(ctx, cfg, tr, stdio, log)
		}
		return observe(ctx, cfg, tr, stdio, log)
	}
	wl, err := resolveWorkload(&in, log)
	if err != nil {
		return err
	}
	if cfg.sweep.active() {
		return runSweep(ctx, cfg, wl, stdio, log)
	}
	tr := &specTraffic{wl: wl, shard: cfg.shard}
	if cfg.dryRun {
		return dryRun(cfg, tr, stdio)
	}
	if cfg.repeat.on {
		return runRepeats(ctx, cfg, tr, stdio, log)
	}
	return observe(ctx, cfg, tr, stdio, log)
}

// resolveWorkload resolves the workload's options, --duration bounding it.
func resolveWorkload(in *Config, log *slog.Logger) (*workload.Workload, error) {
	var opts workload.Options
	if in.Workload != nil {
		var err error
		if opts, err = in.Workload(); err != nil {
			return nil, err
		}
	}
	if (in.Sweep || in.Rates != "") && opts.Preset != "" && opts.Rate == nil && opts.RampStrategy == nil {
		// A sweep gives every level its own rate (Workload.AtRate): the
		// preset's own rate is never used.
		placeholder := 1.0
		opts.Rate = &placeholder
	}
	if in.Duration != nil {
		d := *in.Duration
		if d <= 0 {
			return nil, exitcode.Usagef("--duration %v: must be > 0", d)
		}
		if opts.Horizon == nil || *opts.Horizon > d {
			opts.Horizon = &d
		}
		if opts.NumRequests == nil && opts.SpecPath == "" {
			unlimited := int64(0)
			opts.NumRequests = &unlimited
		}
	}
	wl, err := workload.Resolve(opts)
	if err != nil {
		return nil, err
	}
	for _, w := range wl.Warnings {
		log.Warn(w)
	}
	return wl, nil
}

// selfTestOnly is observe --self-test: the full self-test, reported on
// stderr.
func selfTestOnly(ctx context.Context, cfg *config, stdio IO) error {
	streams := cfg.selfTestStreams
	if streams == 0 {
		streams = cfg.maxConc
	}
	if streams == 0 {
		streams = defaultSelfTestStreams
	}
	st, err := runSelfTest(ctx, min(streams, maxSelfTestStreams), fullSelfTest())
	if err != nil {
		return err
	}
	writeSelfTest(stdio.Err, st)
	return nil
}
