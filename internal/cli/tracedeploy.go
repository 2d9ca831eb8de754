package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
	"servesim/internal/des/sim"
	"servesim/internal/flagspec"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// TraceDeploymentFlags are the flags of the commands that simulate a trace
// on the deployment its header states (replay, calibrate fit).
func TraceDeploymentFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.BoolFlag{Name: "ignore-trace-deployment", Category: flagspec.CatDeployment, Usage: "simulate on the built-in deployment, --deployment and the flags only, not on the deployment and client the trace's header states (and say nothing of the differences)"},
	}
}

// TraceDeployment is the deployment a trace is simulated on
// (deploy.Layers.OnTrace: defaults < the trace's header < --deployment <
// the flags given, with a warning for each key the trace states that the
// command line changes). With --ignore-trace-deployment it is Deployment:
// the header is not read and nothing is said.
func TraceDeployment(c *ucli.Context, name string, h *tracev2.Header, warn func(string)) (deploy.Config, error) {
	l, err := DeploymentLayers(c)
	if err != nil {
		return deploy.Default(), err
	}
	if c.Bool("ignore-trace-deployment") {
		return l.On(deploy.Default())
	}
	return l.OnTrace(name, h, warn)
}

// WorkloadClient is the client a workload describes, all of it declared:
// its closed-loop users and their think time (when they share one), the
// arrival process and aggregate rate of its open-loop clients, whether its
// requests stream, and whether later session rounds follow completions
// (session mode closed-loop) or not (fixed).
func WorkloadClient(wl *workload.Workload) tracev2.Client {
	var c tracev2.Client
	think := map[int64]bool{}
	arrivals := map[string]bool{}
	streams := map[bool]bool{}
	for _, cl := range wl.Spec.Clients {
		streams[cl.Streaming] = true
		if cl.Concurrency > 0 {
			c.Users += cl.Concurrency
			think[cl.ThinkTimeUs] = true
			continue
		}
		arrivals[cl.Arrival.Process] = true
	}
	if len(think) == 1 {
		for t := range think {
			c.ThinkTimeUs = t
		}
	}
	switch len(arrivals) {
	case 0:
	case 1:
		for a := range arrivals {
			c.Arrival = a
		}
		c.RateRPS = wl.Spec.AggregateRate
	default:
		c.Arrival, c.RateRPS = "mixed", wl.Spec.AggregateRate
	}
	c.SessionMode = SessionFixed
	if wl.HasFollowUps() {
		c.SessionMode = SessionClosedLoop
	}
	switch {
	case streams[true] && streams[false]:
		c.Streaming = "mixed"
	case streams[true]:
		c.Streaming = "all"
	case streams[false]:
		c.Streaming = "none"
	}
	return c
}

// Session modes of replay and calibrate fit (--session-mode).
const (
	SessionFixed      = "fixed"
	SessionClosedLoop = "closed-loop"
)

// TraceSessionMode is the session mode a trace is simulated in: the one its
// client implies (closed-loop when the header's x_ext.client says its loop
// was closed, or the mode a replay recorded), else fixed; --session-mode
// overrides it, with a warning when it contradicts the trace. With
// --ignore-trace-deployment it is --session-mode alone.
func TraceSessionMode(c *ucli.Context, name string, h *tracev2.Header, warn func(string)) (string, error) {
	mode := c.String("session-mode")
	if mode != SessionFixed && mode != SessionClosedLoop {
		return "", Usagef("--session-mode %q: want fixed or closed-loop", mode)
	}
	traced := traceSessionMode(h)
	switch {
	case c.Bool("ignore-trace-deployment") || traced == "":
		return mode, nil
	case !c.IsSet("session-mode"):
		return traced, nil
	case mode != traced:
		warn(fmt.Sprintf("%s: the trace's client says session mode %s, --session-mode says %s; simulating %s (--ignore-trace-deployment to simulate on the flags alone, silently)",
			name, traced, mode, mode))
	}
	return mode, nil
}

// traceSessionMode is the session mode a header's client implies, "" when
// the header has no client (a trace from before clients were recorded
// replays as it always did).
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

// TraceClient is the client a trace is simulated with: the flags' (with a
// warning for each value that contradicts the client the trace's header
// states), else the header's (stated; nil when the header has none or
// --ignore-trace-deployment), else the one detect finds in the rows when
// --detect-client allows it. detect returns the client found, whether it
// is capped, and a sentence saying what it saw; it may be nil.
func TraceClient(c *ucli.Context, name string, stated *tracev2.Client, detect func() (sim.Client, bool, string, error),
	warn, debug func(string)) (sim.Client, error) {
	client, given, err := ClientFromFlags(c)
	if err != nil {
		return client, err
	}
	gapGiven := c.IsSet("client-send-gap")
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
		client = sim.Client{MaxConcurrency: stated.MaxConcurrency, SendGapUs: stated.SendGapUs}
		if gapGiven {
			client.SendGapUs = gap
		}
	case detect != nil && c.Bool("detect-client"):
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
