package replay

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"servesim/internal/deploy"
	"servesim/internal/des/metrics"
	"servesim/internal/exitcode"
	"servesim/internal/steady"
	"servesim/internal/suggest"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// Sweeper runs the cases of a sweep through the simulator (its RunFunc is
// Run): each case is the base deployment with the case's deployment keys
// applied, fed the base workload (`run sweep`) or trace (`replay sweep`)
// at the case's load. A case is exactly the run or replay of the same
// flags: the same Config, the same requests, the same summary.
type Sweeper struct {
	Deploy   deploy.Config
	Grid     *sweep.Grid
	SLO      sweep.SLO
	Workload *workload.Options // run: the base workload; nil for a trace
	Trace    *SweepTrace       // replay: the trace; nil for a workload
	// Searching says a max-rate search sets the rate of every run (the
	// base workload need not have one).
	Searching bool
	// Client is the load generator of a workload's runs (run
	// --client-max-concurrency); a trace's is in Trace.Config.
	Client Client
	// WorkloadFacts, if set, describes a workload's client as run's summary
	// records it (workload.Workload.Client with the cap and send gap).
	WorkloadFacts func(*workload.Workload) tracev2.Client
	// Summary, if set, is handed every run (its case, and the rate a
	// max-rate search asked for, 0 for a grid case) with a function that
	// writes its summary JSON with the resolved deployment and the client:
	// the bytes run --format json prints for it, or replay --metrics-out
	// writes. It is called from several goroutines at once.
	Summary sweep.SummaryFunc

	infeasible map[int]string // case → why its deployment cannot be built
}

// SweepTrace is the trace a replay sweep feeds every case.
type SweepTrace struct {
	Rows    Rows
	Options TraceOptions
	// Config is the replay's configuration but for the deployment: seed,
	// context growth, horizon, goodput targets, hash block tokens.
	Config Config
	// Facts is the client as replay --metrics-out records it beside the
	// summary (session mode, cap, send gap).
	Facts tracev2.Client
	// BaseRate, if positive, is the rate every case replays the trace at
	// unless the grid or a search sets one (replay --rate).
	BaseRate float64
	// RateRPS is the trace's own rate (Trace.RateRPS), set by Check.
	RateRPS float64
}

// workloadKeys are the load keys of `run sweep`: the workload flags with
// underscores, each with how it sets workload.Options.
var workloadKeys = map[string]func(o *workload.Options, v sweep.Value) error{
	"rate":                func(o *workload.Options, v sweep.Value) error { return setValue(&o.Rate, v) },
	"arrival":             func(o *workload.Options, v sweep.Value) error { return setValue(&o.Arrival, v) },
	"num_requests":        func(o *workload.Options, v sweep.Value) error { return setValue(&o.NumRequests, v) },
	"horizon":             func(o *workload.Options, v sweep.Value) error { return setValue(&o.Horizon, v) },
	"concurrency":         func(o *workload.Options, v sweep.Value) error { return setValue(&o.Concurrency, v) },
	"think_time":          func(o *workload.Options, v sweep.Value) error { return setValue(&o.ThinkTime, v) },
	"prompt_tokens":       func(o *workload.Options, v sweep.Value) error { return setValue(&o.PromptTokens, v) },
	"prompt_tokens_stdev": func(o *workload.Options, v sweep.Value) error { return setValue(&o.PromptTokensStdev, v) },
	"prompt_tokens_min":   func(o *workload.Options, v sweep.Value) error { return setValue(&o.PromptTokensMin, v) },
	"prompt_tokens_max":   func(o *workload.Options, v sweep.Value) error { return setValue(&o.PromptTokensMax, v) },
	"output_tokens":       func(o *workload.Options, v sweep.Value) error { return setValue(&o.OutputTokens, v) },
	"output_tokens_stdev": func(o *workload.Options, v sweep.Value) error { return setValue(&o.OutputTokensStdev, v) },
	"output_tokens_min":   func(o *workload.Options, v sweep.Value) error { return setValue(&o.OutputTokensMin, v) },
	"output_tokens_max":   func(o *workload.Options, v sweep.Value) error { return setValue(&o.OutputTokensMax, v) },
	"prefix_tokens":       func(o *workload.Options, v sweep.Value) error { return setValue(&o.PrefixTokens, v) },
	"timeout":             func(o *workload.Options, v sweep.Value) error { return setValue(&o.Timeout, v) },
	"streaming":           func(o *workload.Options, v sweep.Value) error { return setValue(&o.Streaming, v) },
	"seed":                func(o *workload.Options, v sweep.Value) error { return setValue(&o.Seed, v) },
}

// RateKey is the load key a max-rate search varies.
const RateKey = "rate"

// LoadKeys are the swept keys that set the load rather than the
// deployment, in grid order.
func (s *Sweeper) LoadKeys() []string {
	var out []string
	for _, k := range s.Grid.Keys() {
		if s.isLoadKey(k) {
			out = append(out, k)
		}
	}
	return out
}

func (s *Sweeper) isLoadKey(k string) bool {
	if s.Trace != nil {
		return k == RateKey
	}
	_, ok := workloadKeys[k]
	return ok
}

// Check validates every case before any runs: keys it does not know and
// values of the wrong type are errors located in the sweep file or flag;
// a case whose deployment cannot be built (a model that does not fit, a
// P/D split that does not add up) is infeasible: it gets a row saying why,
// unless every case is, which is an error.
func (s *Sweeper) Check() error {
	if (s.Workload == nil) == (s.Trace == nil) {
		return fmt.Errorf("sweep: give a workload or a trace")
	}
	for _, ax := range s.Grid.Axes {
		if isFleetKey(ax.Key) {
			if err := s.checkFleetAxis(ax); err != nil {
				return err
			}
			continue
		}
		if !s.isLoadKey(ax.Key) && !isDeployKey(ax.Key) {
			return &sweep.InputError{Pos: ax.Pos, Field: "grid", Msg: s.unknownKey(ax.Key)}
		}
	}
	if s.Searching && s.Workload != nil && (s.Workload.Concurrency != nil || s.Grid.Axis("concurrency") != nil) {
		return exitcode.Usagef("--find max-rate searches the rate of an open loop; a closed-loop workload (--concurrency) has none: sweep its users with --grid concurrency=... instead")
	}
	if s.Trace != nil {
		if err := s.checkTraceRates(); err != nil {
			return err
		}
	}
	s.infeasible = map[int]string{}
	depErr, loadErr := map[string]error{}, map[string]error{}
	var first error
	for k := 0; k < s.Grid.Len(); k++ {
		c := s.Grid.Case(k)
		dsig, lsig := s.signatures(c)
		err, seen := depErr[dsig]
		if !seen {
			var cfg deploy.Config
			if cfg, err = s.deployment(c); err != nil {
				return err // a value of the wrong type: located
			}
			err = resolveCase(cfg, s.fleetSettings(c))
			depErr[dsig] = err
		}
		if err != nil {
			s.infeasible[k] = err.Error()
			first = cmpOr(first, fmt.Errorf("every case is infeasible; case %d (%s): %w", k, sweep.ParamText(s.Grid.Params(c)), err))
		}
		if _, seen := loadErr[lsig]; !seen && s.Workload != nil {
			rate := 0.0
			if s.Searching {
				rate = 1 // any rate: the search sets it
			}
			wl, err := s.workload(c, rate)
			loadErr[lsig] = err
			if err != nil {
				return err // load values are never a matter of fit: located
			}
			if s.Searching && wl.Spec.NumRequests == 0 {
				return exitcode.Usagef("--find max-rate needs a workload bounded by its number of requests (--num-requests or num_requests): bound by a horizon, it would generate rate × horizon requests at every rate tried")
			}
		}
	}
	if len(s.infeasible) == s.Grid.Len() {
		return first
	}
	return nil
}

// checkTraceRates checks the rates a replay sweep plays its trace at: the
// trace must have a rate to scale, and each rate of the grid must be one
// the trace can be played at (Trace.SetRate), located at its value.
func (s *Sweeper) checkTraceRates() error {
	tr, err := NewTrace(s.Trace.Rows, s.Trace.Options)
	if err != nil {
		return err
	}
	defer tr.Close()
	s.Trace.RateRPS = tr.RateRPS()
	ax := s.Grid.Axis(RateKey)
	if ax != nil {
		for _, v := range ax.Values {
			if f, ok := v.Float(); !ok || !(f > 0) {
				return &sweep.InputError{Pos: v.Pos, Field: "grid.rate", Msg: fmt.Sprintf("%q: want a positive number of requests per second", v.Text)}
			}
		}
	}
	if (ax != nil || s.Searching || s.Trace.BaseRate > 0) && s.Trace.RateRPS == 0 {
		return exitcode.Usagef("every request of the trace is injected at once: it has no rate to scale")
	}
	if ax == nil {
		return nil
	}
	for _, v := range ax.Values {
		f, _ := v.Float()
		if err := tr.SetRate(f); err != nil {
			return &sweep.InputError{Pos: v.Pos, Field: "grid.rate", Msg: err.Error()}
		}
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (s *Sweeper) unknownKey(k string) string {
	load := []string{RateKey}
	if s.Trace == nil {
		load = sortedKeys(workloadKeys)
	}
	// A deployment key's other names (tp, tensor_parallel_size) are not
	// grid keys, but they lead to the key they stand for.
	names, aliasOf := append(deployKeys(), load...), map[string]string{}
	for key, aliases := range deploy.KeyAliases() {
		for _, a := range aliases {
			aliasOf[a] = key
			names = append(names, a)
		}
	}
	near := aliasOf[k]
	if near == "" && strings.Trim(k, "_") != "" {
		near = suggest.Closest(k, names)
		if key, ok := aliasOf[near]; ok {
			near = key
		}
	}
	hint := ""
	if near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return fmt.Sprintf("unknown key %s%s: want a deployment key (%s) or a load key (%s)", k, hint,
		strings.Join(deployKeys(), ", "), strings.Join(load, ", "))
}

// signatures split a case into its deployment and its load parameters.
func (s *Sweeper) signatures(c sweep.Case) (dep, load string) {
	var d, l strings.Builder
	for i, v := range c.Values {
		b := &d
		if s.isLoadKey(s.Grid.Axes[i].Key) {
			b = &l
		}
		fmt.Fprintf(b, "%d=%s;", i, v.Text)
	}
	return d.String(), l.String()
}

// deployment is the base deployment with the case's deployment keys.
func (s *Sweeper) deployment(c sweep.Case) (deploy.Config, error) {
	cfg := s.Deploy
	for i, v := range c.Values {
		key := s.Grid.Axes[i].Key
		if s.isLoadKey(key) || isFleetKey(key) {
			continue
		}
		var err error
		if cfg, err = applyDeployKey(cfg, key, v); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// workload is the base workload with the case's load keys, at rate when
// positive (a max-rate search).
func (s *Sweeper) workload(c sweep.Case, rate float64) (*workload.Workload, error) {
	o := *s.Workload
	var ratePos *sweep.Value
	for i, v := range c.Values {
		key := s.Grid.Axes[i].Key
		set, ok := workloadKeys[key]
		if !ok {
			continue
		}
		if key == RateKey {
			ratePos = &c.Values[i]
			f, ok := v.Float()
			if !ok || !(f > 0) {
				return nil, &sweep.InputError{Pos: v.Pos, Field: "grid.rate", Msg: fmt.Sprintf("%q: want a positive number of requests per second", v.Text)}
			}
			rate = f
			continue
		}
		if err := set(&o, v); err != nil {
			return nil, &sweep.InputError{Pos: v.Pos, Field: "grid." + key, Msg: err.Error()}
		}
	}
	spec := o.SpecPath != "" || o.SpecData != nil
	if rate != 0 && !spec {
		o.Rate = &rate
	}
	wl, err := workload.Resolve(o)
	if err == nil && rate != 0 && spec {
		wl, err = withRate(wl, rate)
	}
	if err != nil && ratePos != nil {
		return nil, &sweep.InputError{Pos: ratePos.Pos, Field: "grid", Msg: err.Error()}
	}
	if err != nil && len(c.Values) > 0 {
		for i, v := range c.Values {
			if s.isLoadKey(s.Grid.Axes[i].Key) {
				return nil, &sweep.InputError{Pos: v.Pos, Field: "grid", Msg: err.Error()}
			}
		}
	}
	return wl, err
}

// withRate sets the aggregate rate of a spec's rate-based clients.
func withRate(wl *workload.Workload, rate float64) (*workload.Workload, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, exitcode.Usagef("rate %g must be > 0", rate)
	}
	open := false
	for _, c := range wl.Spec.Clients {
		open = open || c.Concurrency == 0
	}
	if !open {
		return nil, exitcode.Usagef("rate: the workload spec has only closed-loop (concurrency) clients; there is no rate to set")
	}
	spec := wl.Spec
	spec.AggregateRate = rate
	out, err := workload.New(spec)
	if err != nil {
		return nil, err
	}
	out.Name, out.Warnings = wl.Name, wl.Warnings
	return out, nil
}

// Run simulates case c (at rate when positive) and returns its row.
func (s *Sweeper) Run(ctx context.Context, c sweep.Case, rate float64) (sweep.Row, error) {
	return s.run(ctx, c, rate, nil)
}

// Vary simulates case c (as Run) under a variant of its interval: every
// step time × 1 + v.Side·z·σ, σ the case's deployment's (Resolved.Sigma),
// and the seed + v.Seed (the workload's, or the replay's for a trace).
// A variant's run writes no summary.
func (s *Sweeper) Vary(ctx context.Context, c sweep.Case, rate float64, v sweep.Variant) (sweep.Row, error) {
	return s.run(ctx, c, rate, &v)
}

func (s *Sweeper) run(ctx context.Context, c sweep.Case, rate float64, v *sweep.Variant) (sweep.Row, error) {
	cfg, err := s.deployment(c)
	if err != nil {
		return sweep.Row{}, err
	}
	if why, ok := s.infeasible[c.Index]; ok {
		row := sweep.Row{Status: sweep.StatusInfeasible, Reason: why, RateRPS: rate, GPU: cfg.GPU, GPUs: cfg.GPUs(), Variant: v}
		withMix(&row, cfg)
		return row, nil
	}
	dep, err := deploy.Resolve(cfg)
	if err == nil && len(s.fleetSettings(c)) > 0 {
		err = dep.SetFleet(s.fleetSettings(c))
	}
	if err != nil {
		return sweep.Row{}, err
	}
	seed := 0
	if v != nil {
		if v.Sigma, v.Scale = 0, 1; v.Side != 0 {
			v.Sigma = dep.Sigma()
			v.Scale = deploy.IntervalScale(v.Sigma, v.Side)
		}
		if dep, err = dep.ScaleStepTimes(v.Scale); err != nil {
			return sweep.Row{}, err
		}
		seed = v.Seed
	}
	st := newCaseStats(s.SLO)
	var out Outcome
	var facts tracev2.Client // the client, as the summary records it
	offered := rate
	if s.Trace != nil {
		out, offered, err = s.replayCase(ctx, c, rate, dep, st, int64(seed))
		facts = s.Trace.Facts
	} else {
		var wl *workload.Workload
		if wl, err = s.workload(c, rate); err == nil && seed != 0 {
			wl, err = withSeed(wl, int64(seed))
		}
		if err != nil {
			return sweep.Row{}, err
		}
		offered = wl.Spec.AggregateRate
		cfg := WorkloadConfig(wl, dep)
		cfg.Client = s.Client
		out, err = SimulateWorkload(ctx, cfg, wl, st.sink)
		if s.WorkloadFacts != nil {
			facts = s.WorkloadFacts(wl)
		}
	}
	if err != nil {
		return sweep.Row{}, err
	}
	if s.Summary != nil && v == nil {
		keys, err := dep.Config.Keys()
		if err != nil {
			return sweep.Row{}, err
		}
		setup := &Setup{Deployment: keys, Client: facts}
		write := func(w io.Writer) error { return WriteSummarySetup(w, &out.Summary, setup) }
		if err := s.Summary(c, rate, write); err != nil {
			return sweep.Row{}, err
		}
	}
	row := st.row(&out.Summary, offered, cfg.GPU, cfg.GPUs())
	row.Fleet = fleetRow(out.Summary.Fleet, dep.ClusterConfig.Fleet != nil && dep.ClusterConfig.Fleet.Autoscaler != nil)
	row.Variant = v
	withMix(&row, cfg)
	return row, nil
}

// withMix names every GPU type of a deployment whose pools run on
// different ones, and counts each, for the row's cost.
func withMix(row *sweep.Row, cfg deploy.Config) {
	gpus, counts := cfg.GPUMix()
	if gpus == nil {
		return
	}
	row.GPU = strings.Join(gpus, "+")
	for i, g := range gpus {
		row.GPUMix = append(row.GPUMix, sweep.GPUCount{GPU: g, GPUs: counts[i]})
	}
}

// withSeed is the workload with its seed moved by delta: the same spec,
// other draws.
func withSeed(wl *workload.Workload, delta int64) (*workload.Workload, error) {
	spec := wl.Spec
	spec.Seed += delta
	out, err := workload.New(spec)
	if err != nil {
		return nil, err
	}
	out.Name, out.Warnings = wl.Name, wl.Warnings
	return out, nil
}

// replayCase replays the trace on dep, sped up to rate (or to the case's
// rate key), with the replay's seed + seed.
func (s *Sweeper) replayCase(ctx context.Context, c sweep.Case, rate float64, dep *deploy.Resolved, st *caseStats, seed int64) (Outcome, float64, error) {
	if ax := s.Grid.Axis(RateKey); ax != nil && rate == 0 {
		for i := range s.Grid.Axes {
			if s.Grid.Axes[i].Key == RateKey {
				rate, _ = c.Values[i].Float()
			}
		}
	}
	if rate == 0 {
		rate = s.Trace.BaseRate
	}
	tr, err := NewTrace(s.Trace.Rows, s.Trace.Options)
	if err != nil {
		return Outcome{}, 0, err
	}
	defer tr.Close()
	offered := tr.RateRPS()
	if rate > 0 {
		if err := tr.SetRate(rate); err != nil {
			return Outcome{}, 0, err
		}
		offered = rate
	}
	cfg := s.Trace.Config
	cfg.Deploy = dep
	cfg.Seed += seed
	out, err := Simulate(ctx, cfg, tr, tr.FollowUps(), st.sink)
	if err == nil {
		err = tr.Close()
	}
	return out, offered, err
}

// caseStats gathers, per request, what the steady-state test and the
// SLO's goodput need.
type caseStats struct {
	arrival, start []int64
	good           int64
	ttft, itl, e2e float64 // per-request bounds, ms (0 = none)
}

func newCaseStats(slo sweep.SLO) *caseStats {
	st := &caseStats{}
	st.ttft, st.itl, st.e2e = slo.RequestTargets()
	return st
}

func (st *caseStats) sink(rec *tracev2.Record, res *tracev2.SimResult) error {
	st.arrival = append(st.arrival, rec.ArrivalTimeUs)
	switch {
	case res != nil:
		st.start = append(st.start, res.ArrivalUs+int64(res.SchedulingDelayUs))
		if (st.ttft == 0 || res.TTFTUs/1e3 <= st.ttft) && (st.itl == 0 || res.ITLMeanUs/1e3 <= st.itl) &&
			(st.e2e == 0 || res.E2EUs/1e3 <= st.e2e) {
			st.good++
		}
	case rec.Status == "timeout" || rec.ErrorMessage == "horizon":
		st.start = append(st.start, -1) // load the deployment never served
	default:
		st.start = append(st.start, rec.ArrivalTimeUs) // refused or unservable: not load
	}
	return nil
}

// row turns a run's summary into its sweep row.
func (st *caseStats) row(s *metrics.Summary, rate float64, gpu string, gpus int) sweep.Row {
	steady := steady.Check(st.arrival, st.start)
	r := sweep.Row{
		RateRPS: rate, Status: sweep.StatusOK, Injected: s.InjectedRequests, Completed: s.CompletedRequests,
		Failed: s.InjectedRequests - s.CompletedRequests, Rejected: s.RejectedRequests + s.GatewayQueueShed + s.GatewayExpired + s.GatewayEvicted, QueueGrowth: steady.Growth, DurationS: s.VLLMEstimatedDurationS,
		ThroughputRPS: s.ResponsesPerSec, TokensPerSec: s.TokensPerSec,
		KVUtilizationMean: s.KVUtilizationMean, KVUtilizationPeak: s.KVUtilizationPeak, Preemptions: s.PreemptionCount,
		GPU: gpu, GPUs: gpus,
	}
	if s.VLLMEstimatedDurationS > 0 {
		r.GoodputRPS = float64(st.good) / s.VLLMEstimatedDurationS
	}
	if s.InjectedRequests > 0 {
		r.SLOAttainment = float64(st.good) / float64(s.InjectedRequests)
	}
	if sweep.Judge(&r, "", steady, s.CompletedRequests, "no steady state: the queue grew by %.1f%% of the arrivals over the second half of the run") {
		r.TTFT = &sweep.Latency{Mean: s.TTFTMeanMs, P50: s.TTFTP50Ms, P90: s.TTFTP90Ms, P95: s.TTFTP95Ms, P99: s.TTFTP99Ms}
		r.TPOT = &sweep.Latency{Mean: s.TPOTMeanMs, P50: s.TPOTP50Ms, P90: s.TPOTP90Ms, P95: s.TPOTP95Ms, P99: s.TPOTP99Ms}
		r.ITL = &sweep.Latency{Mean: s.ITLMeanMs, P50: s.ITLP50Ms, P90: s.ITLP90Ms, P95: s.ITLP95Ms, P99: s.ITLP99Ms}
		r.E2E = &sweep.Latency{Mean: s.E2EMeanMs, P50: s.E2EP50Ms, P90: s.E2EP90Ms, P95: s.E2EP95Ms, P99: s.E2EP99Ms}
		r.PerClass = classRows(s.PerClass)
	}
	return r
}

// classRows are the row's SLO classes, when the workload names some (a
// workload whose requests all share the unnamed or default class has
// none).
func classRows(per map[string]metrics.ClassSummary) map[string]sweep.ClassRow {
	named := len(per) > 1
	for k := range per {
		named = named || (k != "" && k != "default")
	}
	if !named {
		return nil
	}
	out := make(map[string]sweep.ClassRow, len(per))
	for k, c := range per {
		out[k] = sweep.ClassRow{Count: c.Count, Completed: c.Completed, TTFTP99: c.TTFTP99Ms, ITLMean: c.ITLMeanMs, E2EP99: c.E2EP99Ms,
			LetGo: c.Rejected + c.Shed + c.Expired + c.Evicted}
	}
	return out
}

// Base describes the main deployment keys the sweep does not vary.
func (s *Sweeper) Base() []sweep.Param {
	d := s.Deploy
	var ps []sweep.Param
	for _, kv := range [][2]string{{"model", d.Model}, {"gpu", d.GPU}, {"tensor_parallel", strconv.Itoa(d.TP)},
		{"num_instances", strconv.Itoa(d.Instances)}, {"latency_model", d.LatencyModel}} {
		if s.Grid.Axis(kv[0]) == nil {
			ps = append(ps, sweep.Param{Key: kv[0], Value: kv[1]})
		}
	}
	if d.FleetFile != "" && s.Grid.Axis("fleet_file") == nil {
		ps = append(ps, sweep.Param{Key: "fleet_file", Value: d.FleetFile})
	}
	return ps
}
