package replay

import (
	"strings"
	"time"

	"servesim/internal/des/cluster"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/outfile"
	"servesim/internal/sweep"
)

// The flags of the simulated client and of what a trace's header decides.
const (
	clientCapFlag     = "client-max-concurrency"
	clientGapFlag     = "client-send-gap"
	detectClientFlag  = "detect-client"
	ignoreTraceFlag   = "ignore-trace-deployment"
	traceLevelFlag    = "trace-level"
	decisionsOutFlag  = "decisions-out"
	counterfactualK   = "counterfactual-k"
	decisionsLevel    = "decisions"
	noDecisionsLevel  = "none"
	defaultCapNoTrace = 0  // run: an open loop
	defaultCapTrace   = -1 // replay: the trace's client
)

// ClientFlags describe the flags of the simulated client (docs/simulator.md):
// the load generator's cap on requests in flight. A command that replays a
// trace also reads the cap from it (trace is true: the flags add
// --detect-client, and run's alias --max-concurrency goes).
func ClientFlags(trace bool) []flagspec.Flag {
	capUsage := "the client keeps at most N requests in flight; a request that arrives while N are in flight waits " +
		"in the client's queue and is sent when one ends (as observe --max-concurrency and vllm bench serve --max-concurrency do); 0 = an open loop"
	capFlag := flagspec.Flag{Name: clientCapFlag, Kind: flagspec.Int, Category: flagspec.CatClient, Usage: capUsage,
		Default: defaultCapNoTrace, DefaultText: "0, an open loop", Aliases: []string{"max-concurrency"}}
	gapText := "0"
	if trace {
		capFlag.Default, capFlag.DefaultText, capFlag.Aliases = defaultCapTrace, "the trace's client: its header, else detected from its rows", nil
		gapText = "0, or detected from the trace"
	}
	flags := []flagspec.Flag{capFlag, {Name: clientGapFlag, Kind: flagspec.Duration, Category: flagspec.CatClient,
		Usage: "the capped client's delay from a request's end to the next send", DefaultText: gapText}}
	if trace {
		flags = append(flags, flagspec.Flag{Name: detectClientFlag, Kind: flagspec.Bool, Category: flagspec.CatClient, Default: true,
			Usage: "look for a capped client in the trace (in-flight requests pinned at a peak while late sends follow ends) and replay it; --detect-client=false replays an open loop unless --client-max-concurrency is given"})
	}
	return flags
}

// ClientFromFlags is the client the flags of ClientFlags give, and whether
// they gave a cap at all (false: a replay takes the trace's). The values
// are bounded.
func ClientFromFlags(v flagspec.Values) (Client, bool, error) {
	n, capGiven := v[clientCapFlag].(int)
	gap, _ := v[clientGapFlag].(time.Duration)
	if gap < 0 || gap > time.Duration(sim.MaxSendGapUs)*time.Microsecond {
		return Client{}, false, exitcode.Usagef("--client-send-gap %v is outside [0, %v]", gap, time.Duration(sim.MaxSendGapUs)*time.Microsecond)
	}
	if n < -1 || n > sim.MaxClientConcurrency {
		return Client{}, false, exitcode.Usagef("--client-max-concurrency %d is outside [0, %d]", n, sim.MaxClientConcurrency)
	}
	cl := Client{MaxConcurrency: max(n, 0), SendGapUs: gap.Microseconds()}
	return cl, n >= 0 && capGiven, nil
}

// TraceDeploymentFlags describe the flag of the commands that simulate a
// trace on the deployment its header states (replay, calibrate fit).
func TraceDeploymentFlags() []flagspec.Flag {
	return []flagspec.Flag{{Name: ignoreTraceFlag, Kind: flagspec.Bool, Category: flagspec.CatDeployment,
		Usage: "simulate on the built-in deployment, --deployment and the flags only, not on the deployment and client the trace's header states (and say nothing of the differences)"}}
}

// SLOFlag describes run's and replay's --slo: the goodput bounds of every
// request, in the sweeps' grammar.
func SLOFlag() flagspec.Flag {
	return flagspec.Flag{Name: sweep.FlagSLO, Kind: flagspec.String, Category: flagspec.CatOutput,
		Usage:       "judge every request by this SLO, e.g. 'ttft.p99<500ms,itl.p99<50ms' (the sweeps' grammar; its bounds apply to each request): the summary gives goodput and attainment only with an SLO (this flag, or goodput_slo_targets in the workload spec or trace header, which it replaces)",
		DefaultText: "none: no goodput, no attainment"}
}

// FlagSLOTargets are the targets of --slo: its per-request bounds (sweep.SLO.RequestTargets)
// for every SLO class, and a class bound (critical:ttft.p99<500ms) as a
// per-request bound on that class's requests, beside the others; nil for
// no SLO. Errors name the column (exit 2).
func FlagSLOTargets(text string) (map[string]metrics.SLOTarget, error) {
	slo, err := sweep.ParseSLO(text)
	if err != nil || slo.Empty() {
		return nil, err
	}
	ttft, itl, e2e := slo.RequestTargets()
	out := map[string]metrics.SLOTarget{metrics.AnyClass: {TTFTMs: ttft, ITLMs: itl, E2EMs: e2e}}
	tight := func(cur *float64, v float64) {
		if *cur == 0 || v < *cur {
			*cur = v
		}
	}
	for _, c := range slo.Clauses {
		if c.Class == "" {
			continue
		}
		t, ok := out[c.Class]
		if !ok {
			t = out[metrics.AnyClass] // a class is bound by the unqualified bounds too
		}
		switch c.Metric {
		case "ttft":
			tight(&t.TTFTMs, c.LimitMs)
		case "tpot", "itl":
			tight(&t.ITLMs, c.LimitMs)
		case "e2e":
			tight(&t.E2EMs, c.LimitMs)
		}
		out[c.Class] = t
	}
	return out, nil
}

// fitnessFlag is --fitness-weights.
const fitnessFlag = "fitness-weights"

// FitnessFlag describes --fitness-weights.
func FitnessFlag() flagspec.Flag {
	return flagspec.Flag{Name: fitnessFlag, Kind: flagspec.String, Category: flagspec.CatOutput,
		Usage: "add a fitness score to the summary, one number to compare runs by: metric:weight,... of throughput, tokens_per_sec " +
			"and {mean,p50,p90,p95,p99}_{ttft,e2e,itl,tpot}; Σ weight × normalised metric, latencies as 1/(1 + ms), " +
			"throughputs as x/(x + 100 req/s) and x/(x + 10000 tok/s) (BLIS's), e.g. throughput:0.5,p99_ttft:0.5"}
}

// FlagFitness parses --fitness-weights ("" = none).
func FlagFitness(text string) ([]metrics.FitnessWeight, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	ws, err := metrics.ParseFitnessWeights(text)
	if err != nil {
		return nil, exitcode.Usagef("--%s: %v", fitnessFlag, err)
	}
	return ws, nil
}

// DecisionFlags describe run's and replay's flags for the routing-decision
// log.
func DecisionFlags() []flagspec.Flag {
	return []flagspec.Flag{
		{Name: traceLevelFlag, Kind: flagspec.String, Category: flagspec.CatCluster, Default: noDecisionsLevel,
			Usage: "none, or decisions: write every routing decision with its scores (needs --decisions-out)"},
		{Name: decisionsOutFlag, Kind: flagspec.String, Category: flagspec.CatCluster, Usage: "file for --trace-level decisions (JSON lines)"},
		{Name: counterfactualK, Kind: flagspec.Int, Category: flagspec.CatCluster, Default: 0,
			Usage: "score every routing decision's candidates for its regret (best score − chosen score; round-robin and random by −effective load) " +
				"and summarise it; with --trace-level decisions each line adds the regret and its K best candidates (0 = off)"},
	}
}

// OpenDecisions opens the --decisions-out file when --trace-level
// decisions asks for it (nil when not), after checking that the flags of
// DecisionFlags given agree.
func OpenDecisions(v flagspec.Values) (*outfile.Output, error) {
	level, ok := v[traceLevelFlag].(string)
	if !ok {
		level = noDecisionsLevel
	}
	path, _ := v[decisionsOutFlag].(string)
	if k, _ := v[counterfactualK].(int); k < 0 || k > cluster.MaxCounterfactualK {
		return nil, exitcode.Usagef("--%s %d: want 0..%d", counterfactualK, k, cluster.MaxCounterfactualK)
	}
	switch level {
	case noDecisionsLevel:
		if path != "" {
			return nil, exitcode.Usagef("--decisions-out needs --trace-level decisions")
		}
		return nil, nil
	case decisionsLevel:
	default:
		return nil, exitcode.Usagef("--trace-level %q: want none or decisions", level)
	}
	if path == "" || path == "-" {
		return nil, exitcode.Usagef("--trace-level decisions needs --decisions-out FILE (stdout carries the results)")
	}
	return outfile.Open(path, nil)
}
