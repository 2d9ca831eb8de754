package sim

import (
	"errors"
	"fmt"
	"io"

	"servesim/internal/des"
	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
)

// Source yields requests in non-decreasing ArrivalUs order; it returns
// io.EOF after the last one. Each request must be new (never submitted).
type Source interface {
	Next() (*instance.Request, error)
}

// Sink receives every request's result exactly once: terminal results as
// they happen, live ones at the end of the run. res is only valid during the
// call; r may be kept (it is no longer referenced by the simulator).
type Sink interface {
	Record(res *instance.Result, r *instance.Request)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(res *instance.Result, r *instance.Request)

// Record implements Sink.
func (f SinkFunc) Record(res *instance.Result, r *instance.Request) { f(res, r) }

// Config configures a run. Instance.OnDone must be nil (use OnDone here).
type Config struct {
	Instance  instance.Config
	HorizonUs int64 // 0 = run until every event is processed
	// Client is the load generator's cap on requests in flight (the zero
	// value: an open loop, every request sent at its arrival).
	Client Client

	// OnDone is called after the sink for every request that becomes
	// terminal during the run (completed, dropped, timed out): a session
	// manager injects the next round from here with Simulator.Inject.
	OnDone func(res *instance.Result, r *instance.Request)
}

// Simulator is one run. Use New, then Run once.
type Simulator struct {
	cfg      Config
	eng      *des.Engine
	inst     *instance.Instance
	src      Source
	sink     Sink
	horizon  int64
	injected int64
	err      error
	ran      bool
	arrive   des.Action
	pull     des.Action
	gate     *Gate // nil for an open-loop client
}

// New validates cfg and prepares a run.
func New(cfg Config, src Source, sink Sink) (*Simulator, error) {
	if src == nil || sink == nil {
		return nil, errors.New("sim: nil source or sink")
	}
	if cfg.Instance.OnDone != nil {
		return nil, errors.New("sim: set Config.OnDone, not Config.Instance.OnDone")
	}
	if cfg.HorizonUs < 0 {
		return nil, fmt.Errorf("sim: horizon %d µs is negative", cfg.HorizonUs)
	}
	s := &Simulator{cfg: cfg, eng: des.New(), src: src, sink: sink, horizon: des.NoHorizon}
	if cfg.HorizonUs > 0 {
		s.horizon = cfg.HorizonUs
	}
	ic := cfg.Instance
	ic.OnDone = s.done
	if cfg.HorizonUs > 0 {
		// Steps run inline by fast-forward must respect the horizon like
		// engine events do (an event at t runs iff t ≤ horizon).
		user, eng, h := ic.FastForwardBound, s.eng, cfg.HorizonUs+1
		ic.FastForwardBound = func() int64 {
			b := eng.PeekTime()
			if user != nil {
				b = user()
			}
			return min(b, h)
		}
	}
	in, err := instance.New(s.eng, ic)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s.inst = in
	s.arrive, s.pull = s.onArrival, s.onSourceArrival
	if cfg.Client.Capped() {
		s.gate, err = NewGate(cfg.Client, s.submit, func(at int64, act des.Action, r *instance.Request) {
			s.eng.Schedule(at, des.PrioArrival, act, r)
		}, nil)
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	} else if err := cfg.Client.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return s, nil
}

// Engine exposes the engine (for observers in tests).
func (s *Simulator) Engine() *des.Engine { return s.eng }

// Instance exposes the instance.
func (s *Simulator) Instance() *instance.Instance { return s.inst }

// Now is the simulated time.
func (s *Simulator) Now() int64 { return s.eng.Now() }

func (s *Simulator) done(res *instance.Result, r *instance.Request) {
	s.sink.Record(res, r)
	if s.gate != nil {
		s.gate.Done(res, r)
	}
	if s.cfg.OnDone != nil {
		s.cfg.OnDone(res, r)
	}
}

// Inject schedules an extra request (a session's next round) to arrive at
// r.ArrivalUs, which must not lie before the current time. Requests past the
// horizon are refused with ErrPastHorizon and never counted.
func (s *Simulator) Inject(r *instance.Request) error {
	if err := CheckInject(r, s.eng.Now(), s.horizon, "sim"); err != nil {
		return err
	}
	s.eng.Schedule(r.ArrivalUs, des.PrioArrival, s.arrive, r)
	return nil
}

// ErrPastHorizon refuses an injection that would arrive after the horizon.
var ErrPastHorizon = errors.New("sim: arrival after the horizon")

// onArrival is the Arrival event. With one instance, always-admit and zero
// admission/routing latency, Admission, Routing and InstanceArrival all
// happen at the arrival tick, so the request goes straight to the instance.
func (s *Simulator) onArrival(now int64, data any) {
	r := data.(*instance.Request)
	s.injected++
	if s.gate != nil {
		s.gate.Arrive(now, r)
		return
	}
	s.submit(now, r)
}

// submit sends r to the instance (for a capped client: when it has a slot).
func (s *Simulator) submit(_ int64, r *instance.Request) {
	if err := s.inst.Submit(r); err != nil && s.err == nil {
		s.err = err
	}
}

// onSourceArrival handles a request from the source, then pulls the next.
func (s *Simulator) onSourceArrival(now int64, data any) {
	s.onArrival(now, data)
	s.next()
}

// next pulls one request from the source and schedules its arrival.
func (s *Simulator) next() {
	if s.err != nil {
		return
	}
	r, err := Pull(s.src, s.eng.Now(), s.horizon, "sim")
	if err != nil {
		s.err = err
	}
	if r != nil {
		s.eng.Schedule(r.ArrivalUs, des.PrioArrival, s.pull, r)
	}
}

// CheckInject refuses a request injected into a run of pkg ("sim",
// "cluster") at now with horizon: before the clock (an error), or past
// the horizon (ErrPastHorizon: never counted).
func CheckInject(r *instance.Request, now, horizon int64, pkg string) error {
	if r.ArrivalUs < now {
		return fmt.Errorf("%s: request %d injected at %d µs, before the clock %d µs", pkg, r.ID, r.ArrivalUs, now)
	}
	if r.ArrivalUs > horizon {
		return ErrPastHorizon
	}
	return nil
}

// Pull takes the next request from src for a run of pkg at now with
// horizon: nil when the source has run out or its next request lies past
// the horizon (nothing past it is injected, so pulling stops), or with an
// error when the source fails, hands out nil, or goes back in time.
func Pull(src Source, now, horizon int64, pkg string) (*instance.Request, error) {
	r, err := src.Next()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: source: %w", pkg, err)
	}
	if r == nil {
		return nil, fmt.Errorf("%s: source returned a nil request", pkg)
	}
	if r.ArrivalUs < now {
		return nil, fmt.Errorf("%s: source: request %d arrives at %d µs, before the previous one (%d µs)", pkg, r.ID, r.ArrivalUs, now)
	}
	if r.ArrivalUs > horizon {
		return nil, nil
	}
	return r, nil
}

// Outcome is what a run returns besides the streamed results.
type Outcome struct {
	EndUs    int64 // run end: min(horizon, max(last event or step, last completion))
	Injected int64 // requests that arrived
	Counters instance.Counters
	Info     metrics.RunInfo
}

// Run executes the simulation, streams all results to the sink (live
// requests last, with their live status) and returns the totals.
func (s *Simulator) Run() (Outcome, error) {
	if s.ran {
		return Outcome{}, errors.New("sim: Run called twice")
	}
	s.ran = true
	s.next()
	for s.err == nil && s.eng.Step(s.horizon) {
	}
	if s.err != nil {
		return Outcome{}, s.err
	}
	end := max(s.eng.Now(), s.inst.LastStepUs(), s.inst.LastLeftUs())
	end = min(end, s.horizon)
	s.inst.Unfinished(func(res *instance.Result, r *instance.Request) { s.sink.Record(res, r) })
	if s.gate != nil {
		s.gate.Unsent(func(res *instance.Result, r *instance.Request) { s.sink.Record(res, r) })
	}
	out := Outcome{EndUs: end, Injected: s.injected, Counters: s.inst.Counters(), Info: Collect(end, s.inst)}
	return out, nil
}

// SliceSource serves requests from a slice (tests, small runs).
type SliceSource struct {
	Reqs []*instance.Request
	i    int
}

// Next implements Source.
func (s *SliceSource) Next() (*instance.Request, error) {
	if s.i >= len(s.Reqs) {
		return nil, io.EOF
	}
	s.i++
	return s.Reqs[s.i-1], nil
}

// Collect sums the run-level totals of instances (a cluster passes all of
// its instances) for metrics.Aggregator.Summary. Call it after the run, once
// the live requests have been handed out.
func Collect(endUs int64, insts ...*instance.Instance) metrics.RunInfo {
	info := metrics.RunInfo{DurationUs: endUs}
	var hists [][]instance.ValueCount
	for _, in := range insts {
		c := in.Counters()
		kv := in.KV()
		st := kv.Stats()
		info.Preemptions += c.Preemptions
		info.KVUsedBlockUs += c.KVUsedBlockUs
		info.KVCapacityBlockUs += int64(kv.TotalBlocks()) * c.BusyUs
		info.KVPeak = max(info.KVPeak, float64(c.KVPeakBlocks)/float64(kv.TotalBlocks()))
		info.CacheHits += st.Hits
		info.CacheMisses += st.Misses
		info.AllocFailures += st.AllocFailures
		info.CPUOffloads += st.CPUMirrored
		info.CPUReloads += st.CPUReloads
		info.CPUThrashing += st.CPUThrashing
		info.CPUReloadUs += st.CPUReloadUs
		hists = append(hists, in.ITLHistogram())
	}
	info.ITL = metrics.MergeHistograms(hists...)
	return info
}
