package replay

import (
	"log/slog"

	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// Session modes (TraceFlags.SessionMode).
const (
	SessionFixed      = tracev2.SessionFixed
	SessionClosedLoop = tracev2.SessionClosedLoop
)

// Resolver decides what a trace is replayed on from what the user gave
// (flags, a --deployment file) and what the trace's header states: the
// deployment, the session mode and the client. warn takes what
// contradicts the trace, debug what is only of interest.
type Resolver interface {
	Deployment(name string, h *tracev2.Header, warn func(string)) (deploy.Config, error)
	SessionMode(name string, h *tracev2.Header, warn func(string)) (string, error)
	// Client is the client given, else the one stated (nil: none), else
	// the one detect finds in the rows.
	Client(name string, stated *tracev2.Client, detect func() (Client, bool, string, error), warn, debug func(string)) (Client, error)
}

// settings validates the command's settings before anything is read or
// written.
func (cmd *Command) settings() (*job, error) {
	j := &job{cmd: cmd, stdout: cmd.Stdout, summaryTo: cmd.Stdout, resultsPath: cmd.ResultsPath}
	switch cmd.Format {
	case "json", "jsonl":
		if j.resultsPath == "" {
			j.resultsPath = "-"
		}
	case "text":
	default:
		return nil, exitcode.Usagef("--format %q: want json, jsonl or text", cmd.Format)
	}
	if cmd.Interval && (j.resultsPath == "" || j.resultsPath == "-") {
		return nil, exitcode.Usagef("--interval writes the results of its two runs beside --results-path FILE: give one")
	}
	var err error
	if j.opts, j.horizonUs, err = cmd.Trace.options(); err != nil {
		return nil, err
	}
	// stdout carries one data stream; the text summary gives way to stderr.
	var claims []string
	for _, o := range []struct{ flag, path string }{
		{"--results-path", j.resultsPath}, {"--metrics-out", cmd.MetricsOut}, {"--timeline", cmd.Timeline},
		{"--trace-output", cmd.Sim.TraceOutput}, {"--requests-out", cmd.Sim.RequestsOut},
	} {
		if o.path == "-" {
			claims = append(claims, o.flag)
		}
	}
	if len(claims) > 1 {
		note := ""
		if claims[0] == "--results-path" && cmd.ResultsPath == "" {
			note = " (--results-path defaults to stdout with --format json or jsonl)"
		}
		return nil, exitcode.Usagef("%s all ask for stdout; give all but one of them a file%s", claimList(claims), note)
	}
	if len(claims) == 1 && cmd.Format == "text" {
		j.summaryTo = cmd.Stderr
	}
	return j, nil
}

func claimList(c []string) string {
	out := c[0]
	for i := 1; i < len(c); i++ {
		sep := ", "
		if i == len(c)-1 {
			sep = " and "
		}
		out += sep + c[i]
	}
	return out
}

// options validates the settings that say how the trace's rows become
// requests (the session mode is checked here and decided by TraceSetup,
// as the trace's client may set it), the horizon and the hash block size.
func (f *TraceFlags) options() (opts TraceOptions, horizonUs int64, err error) {
	switch f.InjectAt {
	case "send":
	case "arrival":
		opts.InjectAtArrival = true
	default:
		return opts, 0, exitcode.Usagef("--inject-at %q: want send or arrival", f.InjectAt)
	}
	switch f.SessionMode {
	case SessionFixed, SessionClosedLoop:
	default:
		return opts, 0, exitcode.Usagef("--session-mode %q: want fixed or closed-loop", f.SessionMode)
	}
	if s := f.TimeScale; f.TimeScaleSet && !(s > 0 && s <= 1e6) {
		return opts, 0, exitcode.Usagef("--time-scale %v: must be > 0 (and at most 1e6)", s)
	}
	if f.RateSet && f.TimeScaleSet {
		return opts, 0, exitcode.Usagef("--rate and --time-scale both set the pace; give one")
	}
	if f.ThinkTime < 0 {
		return opts, 0, exitcode.Usagef("--think-time %v is negative", f.ThinkTime)
	}
	opts.ThinkTimeUs = f.ThinkTime.Microseconds()
	if f.Horizon < 0 {
		return opts, 0, exitcode.Usagef("--horizon %v is negative", f.Horizon)
	}
	horizonUs = f.Horizon.Microseconds()
	if f.HashBlockTokens <= 0 {
		return opts, 0, exitcode.Usagef("--hash-block-tokens %d must be positive", f.HashBlockTokens)
	}
	if n := f.HashBlockTokens; n > tracev2.MaxTokens {
		return opts, 0, exitcode.Usagef("--hash-block-tokens %d exceeds %d, the largest prompt a trace may hold", n, tracev2.MaxTokens)
	}
	if _, err := FlagSLOTargets(f.SLO); err != nil {
		return opts, 0, err
	}
	if _, err := FlagFitness(f.Fitness); err != nil {
		return opts, 0, err
	}
	opts.SkipFailed = f.SkipFailed
	return opts, horizonUs, nil
}

// setUp decides what the trace is replayed on (TraceSetup) and resolves
// it: the deployment and the client to simulate, the options of the
// trace, and the replayed trace's header recording them.
func (j *job) setUp() error {
	given, client, facts, err := TraceSetup(j.cmd.Resolver, &j.cmd.Trace, j.in, &j.opts, j.log)
	if err != nil {
		return err
	}
	dep, err := deploy.Resolve(given)
	if err != nil {
		return err
	}
	j.header = replayedHeader(j.in.Header, j.cmd.ToolVersion)
	if err := deploy.Record(j.header, given, dep); err != nil {
		return err
	}
	j.header.XExt.Client = &facts
	j.setup = &Setup{Deployment: j.header.Deployment(), Client: facts}
	j.dep, j.client = dep, client
	return nil
}

// TraceSetup decides what a trace is replayed on, for a replay and a
// replay sweep alike: the deployment its header states under what the
// user gave (not yet resolved), the session mode (into opts) and the
// client. facts is the client as the replayed header records it.
func TraceSetup(r Resolver, f *TraceFlags, in *input.Trace, opts *TraceOptions, log *slog.Logger) (deploy.Config, Client, tracev2.Client, error) {
	warn := func(m string) { log.Warn(m) }
	var facts tracev2.Client
	given, err := r.Deployment(in.Name, in.Header, warn)
	if err != nil {
		return given, Client{}, facts, err
	}
	mode, err := r.SessionMode(in.Name, in.Header, warn)
	if err != nil {
		return given, Client{}, facts, err
	}
	opts.ClosedLoop = mode == SessionClosedLoop
	var stated *tracev2.Client
	if x := in.Header.XExt; x != nil && x.Client != nil && !f.IgnoreTraceDeployment {
		facts, stated = *x.Client, x.Client
		if !f.ThinkTimeSet && facts.ThinkTimeUs > 0 {
			opts.ThinkTimeUs = facts.ThinkTimeUs
		}
	}
	client, err := traceClient(r, f, in, stated, opts, log)
	if err != nil {
		return given, client, facts, err
	}
	facts.SessionMode, facts.MaxConcurrency, facts.SendGapUs = mode, client.MaxConcurrency, client.SendGapUs
	return given, client, facts, nil
}

// traceClient is the client to replay (the Resolver's: the user's, the
// header's, or the one found in the rows). A capped client's rows are
// injected at their intended arrival, and the cap decides their send.
func traceClient(r Resolver, f *TraceFlags, in *input.Trace, stated *tracev2.Client, opts *TraceOptions,
	log *slog.Logger) (Client, error) {
	detect := func() (Client, bool, string, error) {
		if !in.Spans { // what DetectClient finds in rows without a send and an end
			var none ClientFinding
			return none.Client, none.Capped, none.String(), nil
		}
		found, err := DetectClient(in.Rows)
		return found.Client, found.Capped, found.String(), err
	}
	client, err := r.Client(in.Name, stated, detect, func(m string) { log.Warn(m) }, func(m string) { log.Debug(m) })
	if err != nil {
		return client, err
	}
	if client.Capped() {
		if f.InjectAtSet && f.InjectAt == "send" {
			return client, exitcode.Usagef("--inject-at send contradicts a capped client: its requests arrive at their intended time and the cap decides when they are sent")
		}
		opts.InjectAtArrival = true
	}
	return client, nil
}

// replayedHeader is the header of the replayed trace (docs/tracev2.md):
// mode replayed, with the input's SLO targets, KV offload, observed KV
// metrics and session context growth; setUp adds the deployment and
// client.
func replayedHeader(in *tracev2.Header, version string) *tracev2.Header {
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeReplayed
	h.WarmUpRequests = 0
	h.SessionContextGrowth = in.SessionContextGrowth
	h.GoodputSLOTargets = in.GoodputSLOTargets
	h.KVOffload = in.KVOffload
	h.ObservedKVMetrics = in.ObservedKVMetrics
	h.XExt = &tracev2.Ext{Tool: "replay", ToolVersion: version, TimeOrigin: tracev2.OriginRelative}
	return h.Clone()
}

// replayedColumns keeps the input's optional columns that a simulated
// trace may carry, and adds the instance and preemption columns.
func replayedColumns(in tracev2.Columns) tracev2.Columns {
	return tracev2.Columns{
		SLOTarget: in.SLOTarget, Adapter: in.Adapter, ThinkTime: in.ThinkTime, HashIDs: in.HashIDs,
		Instance: true, Preemptions: true,
	}
}
