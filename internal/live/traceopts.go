package live

import (
	"log/slog"
	"math"
	"slices"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/playback"
)

// readTrace checks the --trace options and loads the trace.
func readTrace(in *TraceConfig, cfg *config, stdio IO, log *slog.Logger) (*traceTraffic, error) {
	o := playOptions{path: in.Path, from: in.From, lenient: in.Lenient, offset: in.Offset, hashBlock: in.HashBlock,
		rule: playback.Rule{ThinkTimeUs: in.ThinkTime.Microseconds(), TimeScale: in.TimeScale}}
	if o.path == "" {
		return nil, exitcode.Usagef("--trace: name a file, or - for stdin")
	}
	if s := o.rule.TimeScale; !(s > 0) || math.IsInf(s, 0) || s > 1e6 {
		return nil, exitcode.Usagef("--time-scale %v: must be > 0 (and at most 1e6)", s)
	}
	if o.offset < 0 || o.rule.ThinkTimeUs < 0 {
		return nil, exitcode.Usagef("--trace-offset and --think-time must not be negative")
	}
	if o.hashBlock < 1 || o.hashBlock > 1<<20 {
		return nil, exitcode.Usagef("--hash-block-tokens %d: want 1 to %d", o.hashBlock, 1<<20)
	}
	switch v := in.InjectAt; v {
	case "arrival":
	case "send":
		o.atSend = true
	default:
		return nil, exitcode.Usagef("--inject-at %q: want arrival or send", v)
	}
	switch v := in.SessionMode; v {
	case tracev2.SessionFixed:
	case tracev2.SessionClosedLoop:
		o.closed = true
	default:
		return nil, exitcode.Usagef("--session-mode %q: want fixed or closed-loop", v)
	}
	if in.NumRequests != nil {
		if o.limit = *in.NumRequests; o.limit < 0 {
			return nil, exitcode.Usagef("--num-requests %d: must be >= 0", o.limit)
		}
	}
	if cfg.duration != nil {
		if d := *cfg.duration; d <= 0 {
			return nil, exitcode.Usagef("--duration %v: must be > 0", d)
		} else {
			o.horizonUs = d.Microseconds()
		}
	}
	p, err := loadPlay(o, stdio.In, log)
	if err != nil {
		return nil, err
	}
	log.Info("playing", "trace", describePlay(p), "skipped_rows", p.skipped)
	t := &traceTraffic{p: p, closed: o.closed, hashBlock: o.hashBlock, stream: in.Streaming, shard: cfg.shard, seedValue: 42}
	switch {
	case in.Seed != nil:
		t.seedValue = *in.Seed
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
