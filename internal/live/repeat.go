package live

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/httpload"
)

// maxRepeats bounds --repeat: each repeat is a whole run with its own
// trace, and 100 of them state a mean to a fraction of its spread.
const maxRepeats = 100

// repeatConfig is --repeat, --url-b and --repeat-output.
type repeatConfig struct {
	on     bool   // repeats asked for (--repeat or --url-b given)
	n      int    // runs per server
	urlB   string // a second server measured in turn; "" = one server
	output string // the summary JSON; "" = PREFIX.repeat.json
}

// repeatMark is which repeat a run is, recorded in its header
// (x_ext.client.repeat, repeats, server; x_ext.server_info.url).
type repeatMark struct {
	index, of int
	server    string // "a" or "b" with --url-b
	url       string // the server's URL, credentials removed, with --url-b
}

// parseRepeat reads --repeat, --url-b and --repeat-output, and refuses
// what cannot go with them, before any traffic.
func parseRepeat(in *Config, cfg *config) (repeatConfig, error) {
	r := repeatConfig{n: 1, urlB: strings.TrimSpace(in.URLB), output: in.RepeatOutput}
	r.on = in.Repeat != nil || r.urlB != ""
	if !r.on {
		if r.output != "" {
			return r, exitcode.Usagef("--repeat-output is the summary of --repeat or --url-b: give one")
		}
		return r, nil
	}
	if in.Repeat != nil {
		r.n = *in.Repeat
		if r.n < 1 || r.n > maxRepeats {
			return r, exitcode.Usagef("--repeat %d: want 1 to %d runs", r.n, maxRepeats)
		}
	}
	if r.urlB != "" {
		if u, err := url.Parse(r.urlB); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return r, exitcode.Usagef("--url-b %q: want http(s)://host[:port]", cfg.redactor().Text(r.urlB))
		}
	}
	switch {
	case cfg.sweep.active():
		return r, exitcode.Usagef("--repeat and --url-b repeat one run: --sweep and --rates do not apply")
	case cfg.traceOut == "-":
		return r, exitcode.Usagef("--repeat writes a trace per run: give --trace-output PREFIX")
	case in.ITLOutput != "" || in.MetricsOutput != "":
		return r, exitcode.Usagef("--repeat names its files after each run: --itl-output and --metrics-output do not apply")
	case cfg.shard.Sharded() || in.StartAt != "" || in.DryRun:
		return r, exitcode.Usagef("--repeat runs on one machine against the server: --shard, --start-at and --dry-run do not apply")
	case r.output == "-":
		return r, exitcode.Usagef("--repeat-output needs a file: stdout carries the summary only with --summary")
	}
	if r.output == "" {
		r.output = cfg.traceOut + ".repeat.json"
	}
	return r, nil
}

// repeatServer is one server of the repeats, its set-up and its runs.
type repeatServer struct {
	name string // "a", "b"; "" when one server
	cfg  *config
	s    *setup
	runs []repeatRun
}

// repeatRun is one whole run of a server.
type repeatRun struct {
	index int
	trace string
	tally *tally
}

// runName is the prefix of run i (from 1) of server name: PREFIX.r<i>, or
// PREFIX.<a|b>.r<i> when two servers are measured.
func runName(prefix, server string, i int) string {
	if server == "" {
		return fmt.Sprintf("%s.r%d", prefix, i)
	}
	return fmt.Sprintf("%s.%s.r%d", prefix, server, i)
}

// runRepeats is observe --repeat N [--url-b URL]: the same traffic (the
// same requests: one seed) run N times against the server, each run a
// whole run with its own trace and summary; with --url-b the two servers
// take turns, A B A B …, so slow drift of the machine or the network
// touches both alike. After the runs, the summary states every metric's
// mean over the runs, its 95% interval and its coefficient of variation,
// and whether N was enough (noise.EnoughHalfWidth), on the summary's
// stream and as JSON (--repeat-output). An interrupt keeps the whole runs
// done so far: the interrupted run's trace is written and marked
// interrupted, and the summary covers the runs before it.
func runRepeats(ctx context.Context, cfg *config, tr traffic, stdio IO, log *slog.Logger) error {
	servers := []*repeatServer{{cfg: cfg}}
	if cfg.repeat.urlB != "" {
		b := *cfg
		b.url = cfg.repeat.urlB
		servers = []*repeatServer{{name: "a", cfg: cfg}, {name: "b", cfg: &b}}
	}
	for k, srv := range servers {
		if k > 0 { // the self-test measures this client, not the server
			c := *srv.cfg
			c.noSelfTest = true
			srv.cfg = &c
		}
		s, err := setUp(ctx, srv.cfg, tr, log)
		if err != nil {
			return beforeRun(ctx, err)
		}
		defer s.client.Close()
		if k > 0 {
			s.selfTest = servers[0].s.selfTest
		}
		srv.s = s
	}
	var total httpload.Stats
	var stop error
runs:
	for i := 1; i <= cfg.repeat.n; i++ {
		for _, srv := range servers {
			if ctx.Err() != nil {
				stop = exitcode.WithCode(exitcode.Interrupted, fmt.Errorf("%v: %s", context.Cause(ctx), "no further repeat started"))
				break runs
			}
			run, out, err := repeatOnce(ctx, srv, i, tr, stdio, log)
			if out != nil {
				addStats(&total, out.stats)
			}
			if err != nil {
				stop = err
				break runs
			}
			srv.runs = append(srv.runs, run)
		}
	}
	if exitcode.Of(stop) != exitcode.Interrupted && stop != nil {
		return stop
	}
	if err := writeRepeats(cfg, servers, stop != nil, stdio); err != nil {
		return err
	}
	if stop != nil {
		return stop
	}
	return checkFailures(total, cfg.maxErrorRate)
}

// repeatOnce is run i of a server with its own outputs.
func repeatOnce(ctx context.Context, srv *repeatServer, i int, tr traffic, stdio IO, log *slog.Logger) (repeatRun, *levelOutcome, error) {
	cfg := srv.cfg
	lcfg := *cfg
	lcfg.traceOut = runName(cfg.traceOut, srv.name, i)
	lcfg.mark = repeatMark{index: i, of: cfg.repeat.n, server: srv.name}
	if srv.name != "" {
		lcfg.mark.url = cfg.redactor().Text(cfg.url)
	}
	if cfg.recordITL {
		lcfg.itlOut = lcfg.traceOut + ".itl.csv"
	}
	if cfg.scrape {
		lcfg.metricsOut = lcfg.traceOut + ".metrics.csv"
	}
	if cfg.result.path != "" {
		lcfg.result.path = runName(strings.TrimSuffix(cfg.result.path, ".json"), srv.name, i) + ".json"
	}
	run := repeatRun{index: i, trace: lcfg.traceOut}
	outs, err := openSide(&lcfg, srv.s, log)
	if err != nil {
		return run, nil, err
	}
	defer outs.close()
	if lcfg.scrape {
		outs.scraper.scrapeBefore(ctx)
	}
	log.Info("repeat", "run", i, "of", cfg.repeat.n, "server", srv.name, "trace", lcfg.traceOut)
	out, err := recordRun(ctx, runParts{cfg: &lcfg, tr: tr, s: srv.s, outs: outs, stdio: stdio, log: log})
	if out != nil {
		run.tally = out.tally
	}
	return run, out, err
}

// addStats adds a run's counts to the repeats' total, which the error-rate
// check judges.
func addStats(total *httpload.Stats, st httpload.Stats) {
	total.Results += st.Results
	total.OK += st.OK
	total.Errors += st.Errors
	total.Timeouts += st.Timeouts
}
