package replay

import (
	"fmt"

	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/tracev2"
)

// ResolverFlags are the flags a FlagResolver reads: the deployment's
// (deploy.Flags), the client's (ClientFlags(true)) and
// TraceDeploymentFlags.
func ResolverFlags() []flagspec.Flag {
	return append(append(deploy.Flags(), ClientFlags(true)...), TraceDeploymentFlags()...)
}

// FlagResolver is the Resolver of a command line: defaults < the trace's
// header < --deployment < the flags given, each flag that contradicts the
// trace a warning; --ignore-trace-deployment leaves the header out, and
// says nothing. It reads the --deployment file once, on first use.
type FlagResolver struct {
	Flags        flagspec.Values // the flags of ResolverFlags given
	GivenMode    string          // --session-mode (its default when not given)
	GivenModeSet bool            // whether --session-mode was given
	layers       *deploy.Layers
	noted        bool // the notes on ignored vLLM flags were given
}

// Layers is what the command line lays over a deployment: the
// --deployment file (read on the first call) and the deployment flags.
func (r *FlagResolver) Layers() (*deploy.Layers, error) {
	if r.layers == nil {
		path, _ := r.Flags[deploy.FileFlag].(string)
		l, err := deploy.NewLayers(path, r.Flags)
		if err != nil {
			return nil, err
		}
		r.layers = l
	}
	return r.layers, nil
}

// Check lays the command line over the defaults: a bad flag or
// --deployment file is an error before any trace is read.
func (r *FlagResolver) Check() error {
	l, err := r.Layers()
	if err != nil {
		return err
	}
	_, err = l.On(deploy.Default())
	return err
}

func (r *FlagResolver) ignoreTrace() bool {
	ignore, _ := r.Flags[ignoreTraceFlag].(bool)
	return ignore
}

// Deployment is the deployment a trace is simulated on (deploy.Layers.OnTrace:
// a warning for each key the trace states that the command line changes;
// on the first call, a note for each ignored vLLM flag given).
// With --ignore-trace-deployment the header is not read.
func (r *FlagResolver) Deployment(name string, h *tracev2.Header, warn func(string)) (deploy.Config, error) {
	l, err := r.Layers()
	if err != nil {
		return deploy.Default(), err
	}
	if !r.noted {
		r.noted = true
		for _, note := range deploy.IgnoredFlagNotes(r.Flags) {
			warn(note)
		}
	}
	if r.ignoreTrace() {
		return l.On(deploy.Default())
	}
	return l.OnTrace(name, h, warn)
}

// SessionMode is the session mode a trace is simulated in: the one its
// client implies (closed-loop when the header's x_ext.client says its loop
// was closed, or the mode a replay recorded), else fixed; --session-mode
// overrides it, with a warning when it contradicts the trace. With
// --ignore-trace-deployment it is --session-mode alone.
func (r *FlagResolver) SessionMode(name string, h *tracev2.Header, warn func(string)) (string, error) {
	mode := r.GivenMode
	if mode != SessionFixed && mode != SessionClosedLoop {
		return "", exitcode.Usagef("--session-mode %q: want fixed or closed-loop", mode)
	}
	traced := traceSessionMode(h)
	switch {
	case r.ignoreTrace() || traced == "":
		return mode, nil
	case !r.GivenModeSet:
		return traced, nil
	case mode != traced:
		warn(fmt.Sprintf("%s: the trace's client says session mode %s, --session-mode says %s; simulating %s (--ignore-trace-deployment to simulate on the flags alone, silently)",
			name, traced, mode, mode))
	}
	return mode, nil
}

// traceSessionMode is the session mode a header's client implies, "" when
// the header has no client (a trace without one replays each row at its
// own time).
func traceSessionMode(h *tracev2.Header) string {
	if h == nil || h.XExt == nil || h.XExt.Client == nil {
		return ""
	}
	if m := h.XExt.Client.SessionMode; m == SessionFixed || m == SessionClosedLoop {
		return m
	}
	if h.XExt.Loop == "closed" {
		return SessionClosedLoop
	}
	return SessionFixed
}

// Client is the client a trace is simulated with: the flags' (with a
// warning for each value that contradicts the client the trace's header
// states), else the header's (stated; nil when the header has none or
// --ignore-trace-deployment), else the one detect finds in the rows when
// --detect-client allows it. detect returns the client found, whether it
// is capped, and a sentence saying what it saw; it may be nil.
func (r *FlagResolver) Client(name string, stated *tracev2.Client, detect func() (Client, bool, string, error),
	warn, debug func(string)) (Client, error) {
	client, given, err := ClientFromFlags(r.Flags)
	if err != nil {
		return client, err
	}
	_, gapGiven := r.Flags[clientGapFlag]
	detectOn, set := r.Flags[detectClientFlag].(bool)
	if !set {
		detectOn = true
	}
	switch {
	case given && stated != nil:
		for _, d := range []struct {
			name        string
			trace, flag int64
			set         bool
		}{{"max_concurrency", int64(stated.MaxConcurrency), int64(client.MaxConcurrency), true},
			{"send_gap_us", stated.SendGapUs, client.SendGapUs, gapGiven}} {
			if d.set && d.trace != d.flag {
				warn(fmt.Sprintf("%s: the trace's client says %s %d, the flags say %d; simulating %d (--ignore-trace-deployment to simulate on the flags alone, silently)",
					name, d.name, d.trace, d.flag, d.flag))
			}
		}
	case stated != nil:
		gap := client.SendGapUs
		client = Client{MaxConcurrency: stated.MaxConcurrency, SendGapUs: stated.SendGapUs}
		if gapGiven {
			client.SendGapUs = gap
		}
		if err := client.Validate(); err != nil {
			// Bad input, refused before the simulation, not inside it.
			return client, exitcode.Usagef("%s: x_ext.client: %v", name, err)
		}
	case detect != nil && detectOn:
		found, capped, what, err := detect()
		if err != nil {
			return client, fmt.Errorf("%s: %w", name, err)
		}
		if !capped {
			debug(what)
			break
		}
		gap := client.SendGapUs
		client = found
		if gapGiven {
			client.SendGapUs = gap
		}
		warn(what + "; replaying that client (--client-max-concurrency overrides, --detect-client=false turns this off)")
	}
	return client, nil
}

// ClosedLoop is whether the trace's later session rounds follow the
// simulated completions (the session mode is closed-loop), as a fit asks.
func (r *FlagResolver) ClosedLoop(name string, h *tracev2.Header, warn func(string)) (bool, error) {
	mode, err := r.SessionMode(name, h, warn)
	return mode == SessionClosedLoop, err
}
