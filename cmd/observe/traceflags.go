package main

import (
	"log/slog"
	"math"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// traceFlags are the flags of observe --trace; their names are replay's.
func traceFlags() []ucli.Flag {
	var formats []string
	for _, f := range importer.Formats() {
		formats = append(formats, string(f))
	}
	return []ucli.Flag{
		&ucli.StringFlag{Name: "trace", Usage: "play this trace against the server instead of a workload: TraceV2 in any form replay reads (gzip, - for stdin), or a foreign trace with --from"},
		&ucli.StringFlag{Name: "from", Usage: "--trace is a foreign trace: " + strings.Join(formats, ", ")},
		&ucli.Float64Flag{Name: "time-scale", Value: 1, Usage: "multiply every recorded time (and think time) by this: 0.5 plays the trace twice as fast"},
		&ucli.DurationFlag{Name: "trace-offset", Usage: "start playing this far into the trace, e.g. 2h (with --duration: a window of it)"},
		&ucli.StringFlag{Name: "inject-at", Value: "arrival", Usage: "send each row at its intended arrival (arrival) or at its recorded send time (send)"},
		&ucli.StringFlag{Name: "session-mode", Value: "fixed", Usage: "fixed: every row at its own time (a session's rounds in order); closed-loop: later rounds follow the live completions plus think time"},
		&ucli.IntFlag{Name: "hash-block-tokens", Value: tracev2.DefaultHashBlockTokens, Usage: "prompt tokens per ext_hash_ids entry (Mooncake: 512)"},
		&ucli.BoolFlag{Name: "lenient", Usage: "skip malformed trace rows with a warning instead of stopping"},
	}
}

// workloadOnly are the workload flags that shape a workload; with --trace
// the trace does.
var workloadOnly = []string{"workload", "workload-spec", "rate", "arrival", "concurrency", "prompt-tokens",
	"prompt-tokens-stdev", "prompt-tokens-min", "prompt-tokens-max", "output-tokens", "output-tokens-stdev",
	"output-tokens-min", "output-tokens-max", "prefix-tokens", "timeout", "horizon"}

// refuseTraceFlags fails when a --trace flag is given without --trace.
func refuseTraceFlags(c *ucli.Context) error {
	for _, f := range traceFlags() {
		if n := f.Names()[0]; c.IsSet(n) {
			return cli.Usagef("--%s applies to --trace only", n)
		}
	}
	return nil
}

// readTrace checks the --trace flags and loads the trace.
func readTrace(c *ucli.Context, cfg *config, stdio cli.IO, log *slog.Logger) (*traceTraffic, error) {
	for _, n := range workloadOnly {
		if c.IsSet(n) {
			return nil, cli.Usagef("--%s does not apply to --trace: the trace gives the requests (see --time-scale, --trace-offset, --duration, --num-requests)", n)
		}
	}
	o := playOptions{path: c.String("trace"), from: c.String("from"), lenient: c.Bool("lenient"),
		scale: c.Float64("time-scale"), offset: c.Duration("trace-offset"), hashBlock: c.Int("hash-block-tokens"),
		thinkUs: c.Duration("think-time").Microseconds()}
	if o.path == "" {
		return nil, cli.Usagef("--trace: name a file, or - for stdin")
	}
	if !(o.scale > 0) || math.IsInf(o.scale, 0) || o.scale > 1e6 {
		return nil, cli.Usagef("--time-scale %v: must be > 0 (and at most 1e6)", o.scale)
	}
	if o.offset < 0 || o.thinkUs < 0 {
		return nil, cli.Usagef("--trace-offset and --think-time must not be negative")
	}
	if o.hashBlock < 1 || o.hashBlock > 1<<20 {
		return nil, cli.Usagef("--hash-block-tokens %d: want 1 to %d", o.hashBlock, 1<<20)
	}
	switch v := c.String("inject-at"); v {
	case "arrival":
	case "send":
		o.atSend = true
	default:
		return nil, cli.Usagef("--inject-at %q: want arrival or send", v)
	}
	switch v := c.String("session-mode"); v {
	case "fixed":
	case "closed-loop":
		o.closed = true
	default:
		return nil, cli.Usagef("--session-mode %q: want fixed or closed-loop", v)
	}
	if c.IsSet("num-requests") {
		if o.limit = c.Int64("num-requests"); o.limit < 0 {
			return nil, cli.Usagef("--num-requests %d: must be >= 0", o.limit)
		}
	}
	if c.IsSet("duration") {
		if d := c.Duration("duration"); d <= 0 {
			return nil, cli.Usagef("--duration %v: must be > 0", d)
		} else {
			o.horizonUs = d.Microseconds()
		}
	}
	p, err := loadPlay(o, stdio.In, log)
	if err != nil {
		return nil, err
	}
	log.Info("playing", "trace", describePlay(p), "skipped_rows", p.skipped)
	t := &traceTraffic{p: p, closed: o.closed, hashBlock: o.hashBlock, stream: c.Bool("streaming"), shard: cfg.shard, seedValue: 42}
	switch {
	case c.IsSet("seed"):
		t.seedValue = c.Int64("seed")
	case p.header != nil && p.header.WorkloadSeed != nil:
		t.seedValue = *p.header.WorkloadSeed
	}
	return t, nil
}

// setModels tells the player which models the server lists (set-up has
// read /v1/models): a row's own model is sent only when it is one of them.
func (t *traceTraffic) setModels(models []string) {
	t.models = func(m string) bool { return slices.Contains(models, m) }
}
