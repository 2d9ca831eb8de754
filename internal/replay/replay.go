package replay

import (
	"context"
	"errors"
	"fmt"
	"io"

	"servesim/internal/deploy"
	"servesim/internal/des"
	"servesim/internal/des/cluster"
	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

// Source yields trace records in non-decreasing ArrivalTimeUs order, where
// ArrivalTimeUs is the injection time on the simulation's origin (t = 0) and
// DeadlineUs, if any, is on the same origin. It returns io.EOF at the end.
// Simulate copies a record before it calls Next or a FollowUps method
// again, so a source may reuse it.
type Source interface {
	Next() (*tracev2.Record, error)
}

// FollowUps creates requests whose arrival depends on a completion
// (closed-loop sessions). Either method returns the next record, if any; its
// ArrivalTimeUs must not lie before the given time.
type FollowUps interface {
	// OnComplete: rec completed and its last chunk reached the client at
	// doneUs after generating `generated` tokens.
	OnComplete(rec *tracev2.Record, doneUs int64, generated int) (*tracev2.Record, bool)
	// OnFailed: rec ended without completing at atUs (timed out, or
	// dropped as unservable).
	OnFailed(rec *tracev2.Record, atUs int64, timedOut bool) (*tracev2.Record, bool)
}

// refuser is implemented by FollowUps that want to know of a follow-up the
// simulator refused because it would arrive after the horizon.
type refuser interface {
	Refused(rec *tracev2.Record)
}

// Config says how to simulate.
type Config struct {
	Deploy *deploy.Resolved
	Seed   int64 // token synthesis
	// ContextGrowth is the trace header's session_context_growth: with
	// "accumulate", a session round's prompt begins with the previous
	// round's prompt and output.
	ContextGrowth string
	HorizonUs     int64 // 0 = none
	// Client is the load generator the trace records (or `run` simulates):
	// a capped client holds arrivals while its cap is reached and sends
	// them as slots free; their send time becomes their arrival at the
	// server. Rows should then be injected at their intended arrival
	// (TraceOptions.InjectAtArrival). The zero value is an open loop.
	Client     Client
	SLOTargets map[string]metrics.SLOTarget
	// HashBlockTokens is the number of prompt tokens one ext_hash_ids entry
	// stands for (0 = DefaultHashBlockTokens, Mooncake's 512).
	HashBlockTokens int
	// UniqueIDs promises that no two records share a request id (replay
	// checks its traces; a workload numbers its requests). A prompt that
	// is all shared (prefix or hash-id blocks) then owns the tokens it
	// generates, which are declared private.
	UniqueIDs bool
	// Progress, if set, is called now and then with the simulated time and
	// the number of requests finished.
	Progress func(nowUs, done int64)
	// Observer, if set, watches the run from inside (the timeline export).
	// It turns the instances' fast-forward off. Results are unchanged; a
	// cluster may hand them to the sink in another order (without
	// fast-forward, instances do not run steps ahead of each other), so
	// per-request lines and trace rows may come in another order.
	Observer Observer
	// Decisions, if set, receives every routing decision as a JSON line
	// (the run then goes through the cluster simulator, even with one
	// instance).
	Decisions io.Writer
	// Fitness, if set, adds the fitness of these weights to the summary.
	Fitness []metrics.FitnessWeight
	// CounterfactualK, when positive, scores every routing decision for
	// its regret (cluster.Config.CounterfactualK); the run then goes
	// through the cluster simulator, even with one instance.
	CounterfactualK int

	// TimeScale multiplies the arrival times of the source's records
	// (deadlines keep their budget; closed-loop think times stay): 0.5
	// plays the traffic twice as fast (0 = 1).
	TimeScale float64

	hashAll   bool // the reference (tests compare): no prompt private, every block hashed from its ids
	noRecycle bool // allocate every request afresh (tests compare)
}

// simulator is what the driver needs of the one-instance and the cluster
// simulators.
type simulator interface {
	Inject(r *instance.Request) error
	Now() int64
}

// Observer watches a simulation without changing it: each instance's
// observational events (the Tracer it returns) and steps, every engine
// event before it runs, and every request's end. A cluster also needs the
// Observer to be a cluster.Observer: routing, refusals, KV transfers and
// each instance's finished requests (P/D parts included) come through it
// instead of Result.
type Observer interface {
	instance.StepObserver
	// Tracer returns the tracer of instance i (called before Start).
	Tracer(i int) instance.Tracer
	// Start is called once before the run with the instances to watch
	// and their P/D pools ("" without P/D).
	Start(insts []*instance.Instance, pools []string)
	// Event is called before each engine event runs, with its time and
	// priority (des.Prio*).
	Event(atUs int64, prio int)
	// Result is called once per request of a one-instance run, when it
	// becomes terminal or, for requests live at the end, after the run.
	Result(res *instance.Result, r *instance.Request)
	// Finish is called once after the run with its end time.
	Finish(endUs int64) error
}

// Sink receives every request exactly once, when it becomes terminal (live
// requests at the end of the run): its simulated trace row and, if it
// completed, its SimResult (else nil). Both are valid only during the call.
// A returned error stops the simulation and is returned by Simulate.
type Sink func(rec *tracev2.Record, res *tracev2.SimResult) error

// Outcome is what a simulation returns.
type Outcome struct {
	Summary  metrics.Summary
	Warnings []string
	// Interrupted says the context was cancelled: no request was injected
	// after it, the ones already in flight ran to their end, and Summary
	// covers them. Simulate then also returns the context's error.
	Interrupted bool
}

// live is what the driver keeps per request between injection and the end:
// the simulator's request, its row and its token ids. A one-instance run
// without an observer recycles lives, buffers included, once their request
// has ended (the simulator no longer references it), so that a run
// allocates per request in flight, not per request.
type live struct {
	req    instance.Request
	rec    tracev2.Record
	prompt []int32   // req.Prompt: pb.ids' head, or shared blank ids (tokens.prompt)
	pb     promptBuf // the live's own prompt storage, reused
	output []int32
}

// aheadSource is a Source that reads its rows ahead on another goroutine
// and can hash their hash-id prefixes there (Trace; ahead.go).
type aheadSource interface {
	// setHasher is called before the first row is read.
	setHasher(h *hasher)
	// prefix returns what was computed ahead for the record handed out
	// last, or nil.
	prefix(rec *tracev2.Record) *hashedPrefix
	// sharedPrefixes returns the counts of the rows' hash-id prefixes
	// (prefixes.go), or nil.
	sharedPrefixes() *prefixCounts
}

type driver struct {
	ctx        context.Context
	cfg        Config
	src        Source
	fu         FollowUps
	sink       Sink
	tok        *tokens
	long       overlong
	accumulate bool
	lazy       bool // the KV caches honour privacy: a private prompt's own ids are never read
	recycle    bool
	free       []*live
	ahead      aheadSource // nil: nothing is computed ahead
	// dropsUnread: a request the instance drops at its enqueue guard
	// has no token id or block hash read (one instance, no observer).
	dropsUnread bool
	agg         *metrics.Aggregator
	sim         simulator
	obs         Observer
	obsResults  bool // the observer takes the sink's results (one instance)
	done        int64
	err         error
	stopped     bool // the context was cancelled: inject nothing more

	// The sink's row and SimResult, valid during its call only.
	row   tracev2.Record
	res   tracev2.SimResult
	names []string // instance names, by index

	fleetReqs *metrics.FleetRequests // the requests by time bucket, with a fleet
	fleet     *metrics.FleetSummary
}

// Simulate runs every record of src (and every follow-up fu creates) through
// the simulator of cfg.Deploy. fu may be nil. The context is checked between
// arrivals; cancelling it stops injecting: the requests in flight finish,
// and Simulate returns their Outcome (Interrupted) with ctx.Err().
func Simulate(ctx context.Context, cfg Config, src Source, fu FollowUps, sink Sink) (Outcome, error) {
	if cfg.Deploy == nil {
		return Outcome{}, errors.New("replay: no deployment")
	}
	agg, err := metrics.NewAggregator(cfg.SLOTargets)
	if err != nil {
		return Outcome{}, fmt.Errorf("replay: %w", err)
	}
	d := &driver{ctx: ctx, cfg: cfg, src: src, fu: fu, sink: sink, tok: newTokens(cfg.Seed, cfg.HashBlockTokens),
		accumulate: cfg.ContextGrowth == "accumulate", agg: agg, obs: cfg.Observer,
		long: overlong{maxLen: cfg.Deploy.MaxModelLen}, lazy: !cfg.hashAll && honoursPrivacy(cfg.Deploy)}
	d.tok.unique = cfg.UniqueIDs
	cluster := cfg.Deploy.IsCluster() || cfg.Decisions != nil || cfg.CounterfactualK > 0
	d.dropsUnread = !cluster && d.obs == nil && !cfg.hashAll
	if a, ok := src.(aheadSource); ok && d.lazy {
		d.tok.shared = a.sharedPrefixes()
	}
	if b, ok := blockSize(cfg.Deploy); ok && !cfg.hashAll {
		d.tok.chains = newChains(d.tok, b)
		if a, ok := src.(aheadSource); ok && d.tok.chains != nil {
			d.ahead = a
			a.setHasher(&hasher{chains: d.tok.chains, hashTokens: d.tok.hashTokens, skip: d.unread, sessions: d.accumulate,
				shared: d.tok.shared})
		}
	}
	if cluster {
		return d.runCluster()
	}
	// A cluster may refer to a request after its end (P/D, the router's
	// records), an observer keeps requests by address: neither recycles.
	d.recycle = d.obs == nil && !cfg.noRecycle
	icfg := cfg.Deploy.Instance
	if d.obs != nil {
		icfg.Tracer, icfg.Steps = d.obs.Tracer(0), d.obs
		d.obsResults = true
	}
	s, err := sim.New(sim.Config{Instance: icfg, HorizonUs: cfg.HorizonUs, OnDone: d.onDone, Client: cfg.Client},
		(*simSource)(d), sim.SinkFunc(d.record))
	if err != nil {
		return Outcome{}, err
	}
	d.sim = s
	return d.watchAndRun([]*instance.Instance{s.Instance()}, nil, s.Engine(), func() (int64, metrics.RunInfo, error) {
		out, err := s.Run()
		return out.EndUs, out.Info, err
	})
}

// honoursPrivacy reports whether every KV cache of dep leaves the blocks a
// request declares private unhashed (a CPU tier hashes every block).
func honoursPrivacy(dep *deploy.Resolved) bool {
	if dep.Instance.KV.CPUBlocks > 0 {
		return false
	}
	for _, ic := range dep.ClusterConfig.Instances {
		if ic.KV.CPUBlocks > 0 {
			return false
		}
	}
	return true
}

// blockSize is the KV block size of every instance of dep, if they agree.
func blockSize(dep *deploy.Resolved) (int, bool) {
	b := dep.Instance.KV.BlockSize
	for _, ic := range dep.ClusterConfig.Instances {
		if ic.KV.BlockSize != b {
			return 0, false
		}
	}
	return b, b > 0
}

// watchAndRun starts the observer (if any) on the simulation's instances
// and engine, runs it, lets the observer finish, and summarises the run.
func (d *driver) watchAndRun(insts []*instance.Instance, pools []string, eng *des.Engine, run func() (endUs int64, info metrics.RunInfo, err error)) (Outcome, error) {
	if d.obs != nil {
		d.obs.Start(insts, pools)
		eng.SetObserver(d.obs.Event)
	}
	endUs, info, err := run()
	if d.err != nil {
		return Outcome{}, d.err
	}
	if err != nil {
		return Outcome{}, err
	}
	if d.obs != nil {
		if err := d.obs.Finish(endUs); err != nil {
			return Outcome{}, err
		}
	}
	warnings := d.tok.warnings
	if w := d.long.warning(); w != "" {
		warnings = append(warnings, w)
	}
	sum := d.agg.Summary(info)
	sum.Fleet = d.fleet
	sum.Deployment = d.cfg.Deploy.Describe()
	if len(d.cfg.Fitness) > 0 {
		sum.Fitness = metrics.ComputeFitness(&sum, d.cfg.Fitness)
	}
	out := Outcome{Summary: sum, Warnings: warnings, Interrupted: d.stopped}
	if d.stopped {
		return out, d.ctx.Err()
	}
	return out, nil
}

// runCluster simulates a deployment of several instances or with cluster
// policies.
func (d *driver) runCluster() (Outcome, error) {
	cfg := d.cfg
	cc := cfg.Deploy.ClusterConfig
	cc.Instances = append([]instance.Config(nil), cc.Instances...)
	cc.Seed, cc.HorizonUs, cc.OnDone, cc.Decisions = cfg.Seed, cfg.HorizonUs, d.onDone, cfg.Decisions
	cc.Client = cfg.Client
	cc.CounterfactualK = cfg.CounterfactualK
	cc.MayInject = d.fu != nil
	if d.obs != nil {
		co, ok := d.obs.(cluster.Observer)
		if !ok {
			return Outcome{}, exitcode.Usagef("replay: this observer cannot follow a cluster")
		}
		cc.Observer = co
		for i := range cc.Instances {
			cc.Instances[i].Tracer, cc.Instances[i].Steps = d.obs.Tracer(i), d.obs
		}
	}
	c, err := cluster.New(cc, (*simSource)(d), sim.SinkFunc(d.record))
	if err != nil {
		return Outcome{}, fmt.Errorf("replay: %w", err)
	}
	d.sim = c
	if cc.Fleet != nil {
		d.fleetReqs = newFleetRequests(cc.Fleet, d.agg)
	}
	return d.watchAndRun(c.Instances(), c.Pools(), c.Engine(), func() (int64, metrics.RunInfo, error) {
		out, err := c.Run()
		if err == nil && cc.Fleet != nil {
			d.fleet = fleetSummary(c.Fleet(), d.fleetReqs)
		}
		return out.EndUs, out.Info, err
	})
}

// unread reports whether rec's prompt ids and block hashes are never read:
// with dropsUnread, a request that one instance's enqueue guard drops as
// unservable (instance.enqueue: an empty prompt, one that reaches
// max_model_len or leaves no room for the output, or more blocks than the
// cache holds), unless an accumulating session will resend its ids. Such
// rows (Mooncake's overlong conversations) are hundreds of blocks whose
// hashes nobody needs. It is called from the reading goroutine too.
func (d *driver) unread(rec *tracev2.Record) bool {
	if !d.dropsUnread || (d.accumulate && rec.SessionID != "") {
		return false
	}
	ic := &d.cfg.Deploy.Instance
	return instance.Unservable(rec.ResendPromptTokens(), rec.OutputTokens, ic.MaxModelLen, ic.KV.BlockSize, ic.KV.Blocks)
}

// request turns a record into a simulator request.
func (d *driver) request(rec *tracev2.Record) *instance.Request {
	d.long.check(rec)
	var pre *hashedPrefix
	if d.ahead != nil {
		pre = d.ahead.prefix(rec)
	}
	var l *live
	if k := len(d.free); k > 0 {
		l = d.free[k-1]
		d.free = d.free[:k-1]
	} else {
		l = &live{}
	}
	l.rec = *rec
	rec = &l.rec
	prompt, own, known := d.tok.prompt(&l.pb, rec, d.accumulate, d.lazy, pre, d.unread(rec))
	l.prompt, l.output = prompt, d.tok.output(rec, d.accumulate)
	if d.accumulate && rec.SessionID != "" {
		// The context the next round will resend, as the trace says it
		// will be (all OutputTokens ids). A replayed trace builds round
		// k + 1 when its row is pulled, which may be before round k
		// completes; onDone corrects it with what was actually generated.
		d.tok.remember(rec.SessionID, rec.RoundIndex, l.prompt, l.output, rec.OutputTokens, known)
	}
	r := &l.req
	r.Reset() // not a composite literal: it would reset the stale-reference counter
	r.ID, r.ArrivalUs, r.Prompt, r.Output, r.KnownHashes = rec.RequestID, rec.ArrivalTimeUs, l.prompt, l.output, known
	r.OutputLen, r.MaxOutputLen = rec.OutputTokens, rec.OutputTokens
	r.SLOClass, r.Tenant, r.DeadlineUs, r.SLOTargetUs = rec.SLOClass, rec.TenantID, rec.DeadlineUs, rec.SLOTargetUs
	r.SessionID, r.Round = rec.SessionID, rec.RoundIndex
	r.MediaTokens = rec.ImageTokens + rec.AudioTokens + rec.VideoTokens
	r.Private, r.PrivateFrom = own >= 0 && !d.cfg.hashAll, max(own, 0)
	r.Tag = l
	return r
}

// release takes back the live of a request that has ended.
func (d *driver) release(l *live) {
	if d.recycle {
		d.free = append(d.free, l)
	}
}

// simSource adapts the record source to the simulator's request source.
type simSource driver

func (s *simSource) Next() (*instance.Request, error) {
	d := (*driver)(s)
	if d.ctx.Err() != nil {
		// Interrupted: the requests in flight finish, so that the summary
		// and the outputs describe every request that was injected.
		d.stopped = true
		return nil, io.EOF
	}
	rec, err := d.src.Next()
	if err != nil {
		return nil, err // io.EOF included
	}
	if s := d.cfg.TimeScale; s != 0 && s != 1 {
		rec = d.stretch(rec, s)
	}
	return d.request(rec), nil
}

// record is the simulator's sink: every request exactly once.
func (d *driver) record(res *instance.Result, r *instance.Request) {
	d.agg.Add(res)
	if d.fleetReqs != nil {
		d.fleetReqs.Add(res)
	}
	if d.obsResults {
		d.obs.Result(res, r)
	}
	d.done++
	if d.cfg.Progress != nil && d.done%1024 == 0 {
		d.cfg.Progress(d.sim.Now(), d.done)
	}
	if d.err != nil {
		return
	}
	if d.sink == nil {
		return
	}
	l := r.Tag.(*live)
	d.simulatedRecord(&d.row, &l.rec, res)
	var sr *tracev2.SimResult
	if res.Status == instance.StatusCompleted {
		d.simResult(&d.res, &l.rec, res)
		sr = &d.res
	}
	if err := d.sink(&d.row, sr); err != nil {
		d.err = err
	}
}

// onDone runs after the sink for requests that end during the run: it keeps
// accumulating sessions' context and injects closed-loop follow-ups.
func (d *driver) onDone(res *instance.Result, r *instance.Request) {
	l := r.Tag.(*live)
	defer d.release(l)
	if res.Status == instance.StatusCompleted && d.accumulate && l.rec.SessionID != "" {
		d.tok.remember(l.rec.SessionID, l.rec.RoundIndex, l.prompt, l.output, res.OutputTokens, r.KnownHashes)
	}
	if d.fu == nil || d.err != nil || d.stopped {
		return
	}
	var next *tracev2.Record
	var ok bool
	if res.Status == instance.StatusCompleted {
		next, ok = d.fu.OnComplete(&l.rec, res.ArrivalUs+res.E2EUs, res.OutputTokens)
	} else {
		next, ok = d.fu.OnFailed(&l.rec, res.DoneUs, res.Status == instance.StatusTimedOut)
	}
	if !ok {
		return
	}
	nr := d.request(next)
	err := d.sim.Inject(nr)
	switch {
	case errors.Is(err, sim.ErrPastHorizon):
		d.release(nr.Tag.(*live))
		if r, ok := d.fu.(refuser); ok {
			r.Refused(next)
		}
	case err != nil:
		d.err = err
	}
}

// SliceSource serves records from a slice, for tests and small inputs.
type SliceSource struct {
	Records []tracev2.Record
	i       int
}

// Next implements Source.
func (s *SliceSource) Next() (*tracev2.Record, error) {
	if s.i >= len(s.Records) {
		return nil, io.EOF
	}
	s.i++
	return &s.Records[s.i-1], nil
}

// SLOTargets converts a trace header's goodput targets into the simulator's.
func SLOTargets(in map[string]tracev2.SLOTargets) map[string]metrics.SLOTarget {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]metrics.SLOTarget, len(in))
	for k, t := range in {
		out[k] = metrics.SLOTarget{TTFTMs: t.TTFTMs, ITLMs: t.ITLMs, E2EMs: t.E2EMs}
	}
	return out
}
