package fit

import (
	"log/slog"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// Resolver decides how each trace of a fit is replayed, as replay would
// decide it from the same command line: the layering of the defaults, the
// trace's header, --deployment and the flags lives with the command line,
// which implements this.
type Resolver interface {
	// Check validates the deployment the flags and --deployment give,
	// before any trace is read.
	Check() error
	// Deployment is the deployment the trace named name is replayed on.
	Deployment(name string, h *tracev2.Header, warn func(string)) (deploy.Config, error)
	// ClosedLoop is whether the trace's later session rounds follow the
	// simulated completions.
	ClosedLoop(name string, h *tracev2.Header, warn func(string)) (bool, error)
	// Client is the client the replay models: stated by the trace's header
	// (nil when it states none or is ignored), else found by detect.
	Client(name string, stated *tracev2.Client, detect func() (replay.Client, bool, string, error), warn, debug func(string)) (replay.Client, error)
}

// Settings are the checked settings shared by every trace of a fit.
type Settings struct {
	WarmupRequests int64 // -1: each header's warm_up_requests
	NetworkRTTUs   int64 // -1: each header's network.measured_rtt_ms
	// ThinkTimeUs is the closed-loop think time when neither the row nor
	// the trace gives one; ThinkTimeSet says it was given, so that it
	// overrides the trace's stated client.
	ThinkTimeUs  int64
	ThinkTimeSet bool
	// IgnoreTraceClient leaves the client the header states unread.
	IgnoreTraceClient bool
}

// Prepared is one trace ready for FitAll, and what the caller needs of it.
type Prepared struct {
	Trace  Trace
	Deploy deploy.Config // the trace's deployment, with a blackbox start
	Seed   *int64        // the header's workload seed, if it states one
}

// PrepareTrace sets up the replay of one read trace: its own deployment,
// session mode, client, warm-up and round trip (each from its header unless
// the settings say), as replay would.
func PrepareTrace(tr *tracev2.Trace, itl []tracev2.ITLRow, set Settings, res Resolver, log *slog.Logger) (Prepared, error) {
	var p Prepared
	warn := func(m string) { log.Warn(m) }
	dcfg, err := res.Deployment(tr.Name, tr.Header, warn)
	if err != nil {
		return p, err
	}
	closed, err := res.ClosedLoop(tr.Name, tr.Header, warn)
	if err != nil {
		return p, err
	}
	opts := replay.TraceOptions{ClosedLoop: closed, ThinkTimeUs: set.ThinkTimeUs}
	var stated *tracev2.Client
	if h := tr.Header; h != nil && h.XExt != nil && h.XExt.Client != nil && !set.IgnoreTraceClient {
		stated = h.XExt.Client
		if !set.ThinkTimeSet && stated.ThinkTimeUs > 0 {
			opts.ThinkTimeUs = stated.ThinkTimeUs
		}
	}
	detect := func() (replay.Client, bool, string, error) {
		f, err := replay.DetectClient(replay.RecordRows(tr.Records))
		return f.Client, f.Capped, tr.Name + ": " + f.String(), err
	}
	client, err := res.Client(tr.Name, stated, detect, warn, func(m string) { log.Debug(m) })
	if err != nil {
		return p, err
	}
	if client.Capped() {
		opts.InjectAtArrival = true // the cap decides the sends
	}
	dcfg = blackboxStart(dcfg, log)
	dep, err := deploy.Resolve(dcfg)
	if err != nil {
		return p, err
	}
	p.Deploy = dcfg
	p.Trace = Trace{Name: tr.Name, Deploy: dep, Replay: opts, Client: client, RTTUs: set.NetworkRTTUs,
		WarmupRequests: set.WarmupRequests, Input: Input{Records: tr.Records, ITL: itl}}
	p.fromHeader(tr.Header, log)
	return p, nil
}

// fromHeader takes the warm-up, round trip, context growth and workload
// seed the header states where the settings leave them.
func (p *Prepared) fromHeader(h *tracev2.Header, log *slog.Logger) {
	ft := &p.Trace
	if h != nil {
		ft.ContextGrowth = h.SessionContextGrowth
		if ft.WarmupRequests < 0 {
			ft.WarmupRequests = int64(h.WarmUpRequests)
		}
		if ft.RTTUs < 0 && h.Network != nil {
			ft.RTTUs = int64(h.Network.MeasuredRTTMs * 1000)
		}
		if m := h.Mode; m != "" && m != tracev2.ModeReal {
			log.Warn("the trace is not a measured one; fit reproduces a real run", "trace", ft.Name, "mode", m)
		}
		p.Seed = h.WorkloadSeed
	}
	ft.WarmupRequests, ft.RTTUs = max(ft.WarmupRequests, 0), max(ft.RTTUs, 0)
}

// StartOf is where a fit on deployment d starts: its coefficients when it
// has both (a blackbox one always has, after PrepareTrace); FitAll supplies
// the other models' defaults.
func StartOf(d deploy.Config) (alpha, beta []float64) {
	if d.AlphaCoeffs != nil && d.BetaCoeffs != nil {
		return d.AlphaCoeffs, d.BetaCoeffs
	}
	return nil, nil
}

// blackboxStart gives a blackbox deployment without coefficients a start:
// the built-in entry, else 10 ms per step (fit converges from any positive
// start).
func blackboxStart(d deploy.Config, log *slog.Logger) deploy.Config {
	if k, _ := latency.ParseKind(d.LatencyModel); k != latency.KindBlackbox || d.AlphaCoeffs != nil {
		return d
	}
	if a, b, err := latency.BlackboxCoefficients(d.Model, d.GPU, max(d.TP, 1)); err == nil {
		d.AlphaCoeffs, d.BetaCoeffs = a, b
	} else {
		d.AlphaCoeffs, d.BetaCoeffs = []float64{0, 0, 0}, []float64{10000, 20, 100}
		log.Info("no built-in blackbox coefficients for this deployment; starting from 10 ms per step", "model", d.Model, "gpu", d.GPU)
	}
	return d
}
