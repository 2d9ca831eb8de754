package live

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"servesim/internal/exitcode"
	"servesim/internal/fanout"
	"servesim/internal/httpload"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
)

// config is the command line, checked. It never holds the API key in a form
// that is printed: String is not defined on it, and the key is only handed
// to the HTTP client.
type config struct {
	url        string
	model      string
	apiKey     string
	insecure   bool
	headers    http.Header
	reqTimeout time.Duration

	warmup      int
	prewarm     int // -1 = the run's concurrency when known
	maxConc     int
	chat        bool
	unconstrain bool

	traceOut   string // "-" = single stream on stdout, else a two-file prefix
	blisHeader bool   // a two-file header BLIS loads, x_ext in the sidecar
	recordITL  bool
	itlOut     string // "" = none
	drain      time.Duration
	summaryTo  string // "stderr" or "stdout"
	goodput    goodput
	// maxErrorRate is the share of failed requests above which the run is
	// an assertion failure (exit 3); 1 = never.
	maxErrorRate float64

	scrape         bool
	scrapeInterval time.Duration
	metricsOut     string // "" = no time series file

	// What the user says of the server (--server-config, --vllm-args) and
	// of the run (--sweep-level), for the header.
	serverConfig string
	vllmArgs     string
	fromFile     map[string]any
	fromArgs     map[string]any
	sweepLevel   string

	selfTestOnly    bool
	noSelfTest      bool
	selfTestStreams int // 0 = the run's concurrency

	shard   fanout.Shard // this worker's slice of a sharded run
	startAt time.Time    // shared wall-clock t0; zero = start when set-up ends
	dryRun  bool         // write the planned requests; contact no server

	result resultConfig // --result-json (path "" = none)
	sweep  sweepConfig  // --sweep, --rates
	repeat repeatConfig // --repeat, --url-b
	mark   repeatMark   // which repeat this run is, for its header

	duration *time.Duration // --duration; nil = not given
	version  string         // the tool version recorded in headers
}

// goodput holds the --goodput targets in ms; 0 = not gated.
type goodput struct {
	ttftMs, tpotMs, e2elMs float64
}

func (g goodput) set() bool { return g.ttftMs > 0 || g.tpotMs > 0 || g.e2elMs > 0 }

// meets reports whether a request's TTFT, TPOT and E2E (ms) meet every
// target set.
func (g goodput) meets(ttft, tpot, e2e float64) bool {
	return (g.ttftMs == 0 || ttft <= g.ttftMs) && (g.tpotMs == 0 || tpot <= g.tpotMs) && (g.e2elMs == 0 || e2e <= g.e2elMs)
}

// parseGoodput reads "ttft:MS,tpot:MS,e2el:MS" (any subset; commas or
// spaces between items), the targets of vllm bench serve's --goodput.
func parseGoodput(s string) (goodput, error) {
	var g goodput
	items := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(items) == 0 && strings.TrimSpace(s) != "" {
		return g, exitcode.Usagef("--goodput %q: want ttft:MS,tpot:MS,e2el:MS", s)
	}
	for _, it := range items {
		k, v, ok := strings.Cut(it, ":")
		ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || math.IsNaN(ms) || math.IsInf(ms, 0) || ms <= 0 {
			return g, exitcode.Usagef("--goodput %q: %q is not KEY:MS with MS a positive number of milliseconds", s, it)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "ttft":
			g.ttftMs = ms
		case "tpot":
			g.tpotMs = ms
		case "e2el":
			g.e2elMs = ms
		default:
			return g, exitcode.Usagef("--goodput %q: unknown metric %q (want ttft, tpot or e2el)", s, k)
		}
	}
	return g, nil
}

// parseHeaders reads repeated --header "Name: value" flags.
func parseHeaders(list []string) (http.Header, error) {
	h := http.Header{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return nil, exitcode.Usagef("--header %q: want NAME:VALUE", kv)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h, nil
}

// newConfig checks the flags that are not workload flags.
func newConfig(in *Config) (*config, error) {
	cfg := &config{
		url:             strings.TrimSpace(in.URL),
		model:           in.Model,
		apiKey:          in.APIKey,
		insecure:        in.Insecure,
		reqTimeout:      in.RequestTimeout,
		warmup:          in.WarmupRequests,
		prewarm:         in.Prewarm,
		maxConc:         in.MaxConcurrency,
		chat:            in.Chat,
		unconstrain:     in.Unconstrained,
		traceOut:        in.TraceOutput,
		blisHeader:      in.BLISHeader,
		serverConfig:    in.ServerConfig,
		vllmArgs:        in.VLLMArgs,
		sweepLevel:      in.SweepLevel,
		recordITL:       in.RecordITL,
		itlOut:          in.ITLOutput,
		drain:           in.Drain,
		summaryTo:       "stderr",
		scrape:          in.Scrape,
		scrapeInterval:  in.ScrapeInterval,
		metricsOut:      in.MetricsOutput,
		selfTestOnly:    in.SelfTest,
		noSelfTest:      in.NoSelfTest,
		selfTestStreams: in.SelfTestStreams,
		maxErrorRate:    in.MaxErrorRate,
		shard:           in.Shard,
		version:         in.Version,
		duration:        in.Duration,
	}
	if err := cfg.checkClient(in); err != nil {
		return nil, err
	}
	if cfg.selfTestOnly {
		return cfg, nil
	}
	if err := cfg.checkRun(in); err != nil {
		return nil, err
	}
	if err := cfg.checkOutputs(in); err != nil {
		return nil, err
	}
	return cfg, nil
}

// redactor removes the run's secrets (its API key, header values and URL
// password) and credentials in general from text before it is written.
func (cfg *config) redactor() httpload.Redactor {
	return httpload.NewRedactor(httpload.Config{BaseURL: cfg.url, APIKey: cfg.apiKey, Headers: cfg.headers})
}

// checkClient checks what the self-test needs too: the client's flags.
func (cfg *config) checkClient(in *Config) error {
	if r := cfg.maxErrorRate; !(r >= 0 && r <= 1) {
		return exitcode.Usagef("--max-error-rate %g: want a share in [0, 1]", r)
	}
	var err error
	if cfg.headers, err = parseHeaders(in.Headers); err != nil {
		return err
	}
	if cfg.goodput, err = parseGoodput(in.Goodput); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"--warmup-requests", cfg.warmup}, {"--prewarm", cfg.prewarm + 1}, {"--max-concurrency", cfg.maxConc}, {"--self-test-streams", cfg.selfTestStreams}} {
		if f.v < 0 {
			return exitcode.Usagef("%s: must be >= 0 (--prewarm: >= -1)", f.name)
		}
	}
	if cfg.selfTestStreams > maxSelfTestStreams {
		return exitcode.Usagef("--self-test-streams %d: at most %d", cfg.selfTestStreams, maxSelfTestStreams)
	}
	if cfg.reqTimeout < 0 || cfg.drain < 0 {
		return exitcode.Usagef("--request-timeout and --drain-timeout must not be negative")
	}
	if cfg.scrape && cfg.scrapeInterval <= 0 {
		return exitcode.Usagef("--scrape-interval %v: must be > 0", cfg.scrapeInterval)
	}
	if cfg.selfTestOnly && cfg.noSelfTest {
		return exitcode.Usagef("--self-test and --no-self-test exclude each other")
	}
	return nil
}

// checkRun checks what the run declares, records and sweeps.
func (cfg *config) checkRun(in *Config) error {
	var err error
	if len(cfg.vllmArgs) > maxServeArgsBytes {
		return exitcode.Usagef("--vllm-args: longer than %d bytes", maxServeArgsBytes)
	}
	// Only the redacted line is kept: it is recorded in the header.
	cfg.vllmArgs = cfg.redactor().Args(cfg.vllmArgs)
	if cfg.fromFile, cfg.fromArgs, err = readDeclared(cfg.serverConfig, cfg.vllmArgs); err != nil {
		return err
	}
	if len(cfg.sweepLevel) > 256 {
		return exitcode.Usagef("--sweep-level: longer than 256 bytes")
	}
	if cfg.result, err = parseResultFlags(in.ResultJSON, in.PercentileMetrics, in.MetricPercentiles,
		in.ResultDetailed, in.Label, in.Metadata); err != nil {
		return err
	}
	if cfg.sweep, err = parseSweep(in.Sweep, in.SweepLevels, in.Rates, in.SLO, in.SweepOutput, in.HTML, in.Overlay); err != nil {
		return err
	}
	if cfg.sweep.active() {
		switch {
		case cfg.traceOut == "-":
			return exitcode.Usagef("a sweep writes a trace per level: give --trace-output PREFIX")
		case in.ITLOutput != "" || in.MetricsOutput != "":
			return exitcode.Usagef("a sweep names its files after each level: --itl-output and --metrics-output do not apply")
		case cfg.shard.Sharded() || in.StartAt != "" || in.DryRun:
			return exitcode.Usagef("a sweep runs on one machine against the server: --shard, --start-at and --dry-run do not apply")
		case cfg.sweep.html == "-" || cfg.sweep.output == "-":
			return exitcode.Usagef("--html and --sweep-output need files: stdout carries the sweep's table")
		}
	}
	if cfg.repeat, err = parseRepeat(in, cfg); err != nil {
		return err
	}
	if v := in.StartAt; v != "" {
		if cfg.startAt, err = parseStartAt(v); err != nil {
			return err
		}
	}
	if cfg.dryRun = in.DryRun; cfg.dryRun {
		if cfg.url != "" || cfg.scrape || cfg.recordITL || cfg.warmup > 0 || cfg.result.path != "" {
			return exitcode.Usagef("--dry-run contacts no server: --server-url, --scrape-metrics, --record-itl, --warmup-requests and --result-json do not apply")
		}
		cfg.noSelfTest = true
	} else if cfg.url == "" {
		return exitcode.Usagef("--server-url is required (e.g. --server-url http://127.0.0.1:8000), or use --self-test or --dry-run")
	} else if u, err := url.Parse(cfg.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitcode.Usagef("--server-url %q: want http(s)://host[:port]", cfg.url)
	}
	return nil
}

// checkOutputs checks the outputs and fills in the paths derived from
// --trace-output.
func (cfg *config) checkOutputs(in *Config) error {
	if cfg.traceOut == "" {
		return exitcode.Usagef("--trace-output: empty; use - for stdout or a PREFIX for PREFIX.yaml + PREFIX.csv")
	}
	if in.Summary {
		if cfg.traceOut == "-" {
			return exitcode.Usagef("--summary puts the summary on stdout, which carries the trace; give --trace-output PREFIX")
		}
		cfg.summaryTo = "stdout"
	}
	if cfg.recordITL && cfg.itlOut == "" {
		if cfg.traceOut == "-" {
			return exitcode.Usagef("--record-itl with the trace on stdout needs --itl-output FILE")
		}
		_, _, cfg.itlOut = tracev2.PrefixPaths(cfg.traceOut)
	}
	if cfg.itlOut != "" && !cfg.recordITL {
		return exitcode.Usagef("--itl-output needs --record-itl")
	}
	if cfg.scrape && cfg.metricsOut == "" && cfg.traceOut != "-" {
		cfg.metricsOut = cfg.traceOut + ".metrics.csv"
	}
	if cfg.metricsOut != "" && !cfg.scrape {
		return exitcode.Usagef("--metrics-output needs --scrape-metrics")
	}
	return checkDistinct(cfg, in)
}

// checkDistinct refuses, before anything is sent, outputs that would
// overwrite each other or an input, or that cannot be written
// (outfile.Check).
func checkDistinct(cfg *config, in *Config) error {
	outs, err := tracev2.OutputFiles("--trace-output", cfg.traceOut)
	if err != nil {
		return err
	}
	outs = append(outs, outfile.Named{What: "--itl-output", Path: cfg.itlOut}, outfile.Named{What: "--result-json", Path: cfg.result.path},
		outfile.Named{What: "--metrics-output", Path: cfg.metricsOut}, outfile.Named{What: "--sweep-output", Path: cfg.sweep.output},
		outfile.Named{What: "--html", Path: cfg.sweep.html}, outfile.Named{What: "--repeat-output", Path: cfg.repeat.output})
	ins := []outfile.Named{{What: "--server-config", Path: cfg.serverConfig}, {What: "--overlay", Path: cfg.sweep.overlay}}
	if in.Trace != nil {
		ins = append(ins, tracev2.InputFiles(in.Trace.Path)...)
	}
	return outfile.Check(outs, ins)
}

// describe names the outputs for the log.
func (cfg *config) describe() string {
	out := "stdout (single stream)"
	if cfg.traceOut != "-" {
		h, d, _ := tracev2.PrefixPaths(cfg.traceOut)
		out = fmt.Sprintf("%s + %s", h, d)
	}
	return out
}

// parseStartAt reads --start-at: RFC 3339 (fractions allowed) or Unix
// seconds (fractions allowed).
func parseStartAt(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < 1e11 {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))), nil
	}
	return time.Time{}, exitcode.Usagef("--start-at %q: want an RFC 3339 time (2026-05-01T10:00:00Z) or Unix seconds", v)
}
