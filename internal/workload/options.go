package workload

import (
	"math"
	"sort"
	"strings"
	"time"
)

// Options are the workload flags of observe and run (docs/workload.md §11–§12).
// A nil pointer means "not given on the command line": defaults apply, and
// only given flags conflict with a spec or override it. The CLI maps its
// flags one to one (--think-time-ms N becomes ThinkTime = N ms).
type Options struct {
	SpecPath string // --workload-spec; names the spec in errors and in the trace header
	SpecData []byte // the spec's content when the CLI already read it (stdin); nil = read SpecPath
	Preset   string // --workload NAME

	Seed        *int64         // --seed (42); may override a spec
	NumRequests *int64         // --num-requests (100); may override a spec; 0 = unlimited
	Horizon     *time.Duration // --horizon (none); may override a spec
	Rate        *float64       // --rate (1.0) requests/s
	Arrival     *string        // --arrival (constant)
	Concurrency *int           // --concurrency (0): closed-loop users instead of a rate
	ThinkTime   *time.Duration // --think-time (0) of concurrency users

	PromptTokens      *int // --prompt-tokens (512)
	PromptTokensStdev *int // --prompt-tokens-stdev (256)
	PromptTokensMin   *int // --prompt-tokens-min (2)
	PromptTokensMax   *int // --prompt-tokens-max (7000)
	OutputTokens      *int // --output-tokens (512)
	OutputTokensStdev *int // --output-tokens-stdev (256)
	OutputTokensMin   *int // --output-tokens-min (2)
	OutputTokensMax   *int // --output-tokens-max (7000)
	PrefixTokens      *int // --prefix-tokens (0): shared prefix of group "shared"

	Timeout   *time.Duration // --timeout (300s); negative disables; 0 is a usage error
	Streaming *bool          // whether requests stream (false)
	SLOClass  *string        // --slo-class (none: standard) of every request
	Tenant    *string        // --tenant (none) of every request

	// --ramp-up-strategy, --ramp-up-start-rps, --ramp-up-end-rps (vllm
	// bench serve's): the total rate ramps over --num-requests instead of
	// --rate; over a spec they replace its aggregate_rate.
	RampStrategy             *string
	RampStartRPS, RampEndRPS *float64
}

// ramp is the rate ramp the flags ask for, nil when none.
func (o *Options) ramp() (*RateRamp, *Error) {
	if o.RampStrategy == nil && o.RampStartRPS == nil && o.RampEndRPS == nil {
		return nil, nil
	}
	if o.RampStrategy == nil || o.RampStartRPS == nil || o.RampEndRPS == nil {
		return nil, flagError("--ramp-up-strategy", "needs --ramp-up-start-rps and --ramp-up-end-rps (and they need it)")
	}
	if o.Rate != nil {
		return nil, flagError("--rate", "cannot be combined with --ramp-up-strategy (the ramp sets the rate)")
	}
	r := &RateRamp{Strategy: *o.RampStrategy, StartRPS: *o.RampStartRPS, EndRPS: *o.RampEndRPS}
	if err := checkRamp(r, "ramp"); err != nil {
		flag := map[string]string{"ramp.start_rps": "--ramp-up-start-rps", "ramp.end_rps": "--ramp-up-end-rps"}[err.Path]
		if flag == "" {
			flag = "--ramp-up-strategy"
		}
		return nil, flagError(flag, "%s", err.Msg)
	}
	return r, nil
}

// Synthesis defaults (docs/workload.md §12).
const (
	DefaultRate        = 1.0
	DefaultArrival     = ProcessConstant
	DefaultNumRequests = 100
	DefaultTimeout     = 300 * time.Second
	SynthClientID      = "distribution"
	SynthPrefixGroup   = "shared"
)

// Preset is a named workload shape (docs/workload.md §11): token counts as
// mean / stdev / min / max.
type Preset struct {
	Name                               string
	PrefixTokens                       int
	PromptMean, PromptStdev, PromptMin int
	PromptMax                          int
	OutputMean, OutputStdev, OutputMin int
	OutputMax                          int
}

// Presets lists the named presets in name order.
func Presets() []Preset {
	ps := []Preset{
		{"chatbot", 0, 256, 100, 2, 800, 256, 100, 1, 1024},
		{"contentgen", 0, 1024, 150, 10, 2048, 1024, 200, 10, 2048},
		{"distribution", 0, 512, 256, 2, 7000, 512, 256, 2, 7000},
		{"multidoc", 0, 10240, 1200, 500, 20480, 1536, 300, 50, 4096},
		{"summarization", 0, 4096, 500, 100, 8192, 512, 150, 10, 2048},
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

func presetNames() string {
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// Resolve builds the workload the options describe: the spec file (with
// --seed, --horizon, --num-requests overrides), a preset, or the flags.
// Usage errors name the flag; all errors are *Error (exit code 2) except a
// failure to read the spec file, which wraps the I/O error in an *Error too.
func Resolve(o Options) (*Workload, error) {
	if err := checkCommon(&o); err != nil {
		return nil, err
	}
	if o.SpecPath != "" || o.SpecData != nil {
		return resolveSpec(&o)
	}
	return resolveFlags(&o)
}

// checkCommon validates the flags that apply to every source.
func checkCommon(o *Options) *Error {
	if o.NumRequests != nil && *o.NumRequests < 0 {
		return flagError("--num-requests", "%d must be >= 0", *o.NumRequests)
	}
	if o.Horizon != nil && *o.Horizon <= 0 {
		return flagError("--horizon", "%s must be > 0", *o.Horizon)
	}
	if o.Horizon != nil && o.Horizon.Microseconds() == 0 {
		return flagError("--horizon", "%s is below 1µs", *o.Horizon)
	}
	return nil
}

func resolveSpec(o *Options) (*Workload, error) {
	if o.Preset != "" {
		return nil, flagError("--workload", "cannot be combined with --workload-spec")
	}
	if o.Rate != nil {
		return nil, flagError("--rate", "cannot be combined with --workload-spec (the spec sets aggregate_rate)")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--arrival", o.Arrival != nil}, {"--concurrency", o.Concurrency != nil},
		{"--think-time", o.ThinkTime != nil}, {"--prompt-tokens", o.PromptTokens != nil},
		{"--prompt-tokens-stdev", o.PromptTokensStdev != nil}, {"--prompt-tokens-min", o.PromptTokensMin != nil},
		{"--prompt-tokens-max", o.PromptTokensMax != nil}, {"--output-tokens", o.OutputTokens != nil},
		{"--output-tokens-stdev", o.OutputTokensStdev != nil}, {"--output-tokens-min", o.OutputTokensMin != nil},
		{"--output-tokens-max", o.OutputTokensMax != nil}, {"--prefix-tokens", o.PrefixTokens != nil},
		{"--timeout", o.Timeout != nil}, {"--streaming", o.Streaming != nil},
		{"--slo-class", o.SLOClass != nil}, {"--tenant", o.Tenant != nil},
	} {
		if f.set {
			return nil, flagError(f.name, "cannot be combined with --workload-spec (set it in the spec)")
		}
	}
	var (
		spec *Spec
		warn []string
		err  error
	)
	if o.SpecData != nil {
		spec, warn, err = Decode(o.SpecPath, o.SpecData, baseDirOf(o.SpecPath))
	} else {
		spec, warn, err = Load(o.SpecPath)
	}
	if err != nil {
		return nil, err
	}
	if o.Seed != nil {
		spec.Seed = *o.Seed
	}
	if o.NumRequests != nil {
		spec.NumRequests = *o.NumRequests
	}
	if o.Horizon != nil {
		spec.HorizonUs = o.Horizon.Microseconds()
	}
	if r, rerr := o.ramp(); rerr != nil {
		return nil, rerr
	} else if r != nil {
		spec.RateRamp, spec.AggregateRate = r, r.StartRPS
	}
	w, err := New(*spec)
	if err != nil {
		return nil, err
	}
	w.Name = o.SpecPath
	w.Warnings = warn
	return w, nil
}

func baseDirOf(path string) string {
	if path == "" || path == "-" {
		return "."
	}
	i := strings.LastIndexAny(path, `/\`)
	if i < 0 {
		return "."
	}
	return path[:i+1]
}

// resolveFlags is the workload the flags describe: a preset's shape (or
// the distribution preset's), the load, and the flags given over them.
func resolveFlags(o *Options) (*Workload, error) {
	p, name, perr := flagPreset(o)
	if perr != nil {
		return nil, perr
	}
	l, lerr := o.load()
	if lerr != nil {
		return nil, lerr
	}
	timeoutUs, terr := o.timeoutUs()
	if terr != nil {
		return nil, terr
	}
	in, ferr := gaussianFlags("--prompt-tokens", p.PromptMean, p.PromptStdev, p.PromptMin, p.PromptMax,
		o.PromptTokens, o.PromptTokensStdev, o.PromptTokensMin, o.PromptTokensMax)
	if ferr != nil {
		return nil, ferr
	}
	out, ferr := gaussianFlags("--output-tokens", p.OutputMean, p.OutputStdev, p.OutputMin, p.OutputMax,
		o.OutputTokens, o.OutputTokensStdev, o.OutputTokensMin, o.OutputTokensMax)
	if ferr != nil {
		return nil, ferr
	}
	spec := Spec{Version: "2", Seed: DefaultSeed, NumRequests: DefaultNumRequests}
	if o.Seed != nil {
		spec.Seed = *o.Seed
	}
	if o.NumRequests != nil {
		spec.NumRequests = *o.NumRequests
	}
	if o.Horizon != nil {
		spec.HorizonUs = o.Horizon.Microseconds()
	}
	if spec.NumRequests == 0 && spec.HorizonUs == 0 {
		return nil, flagError("--num-requests", "0 (unlimited) needs --horizon")
	}
	c := Client{ID: SynthClientID, Input: in, Output: out, TimeoutUs: timeoutUs}
	if o.Streaming != nil {
		c.Streaming = *o.Streaming
	}
	if o.SLOClass != nil {
		if !validSLOClass(*o.SLOClass) {
			return nil, flagError("--slo-class", "unknown SLO class %q (valid: critical, standard, sheddable, batch, background)", *o.SLOClass)
		}
		c.SLOClass = *o.SLOClass
	}
	if o.Tenant != nil {
		c.TenantID = *o.Tenant
	}
	if l.concurrency > 0 {
		c.Concurrency, c.ThinkTimeUs = l.concurrency, l.thinkUs
	} else {
		spec.AggregateRate = l.rate
		c.RateFraction = 1
		c.Arrival = Arrival{Process: l.arrival}
		if l.ramp != nil {
			spec.RateRamp, spec.AggregateRate = l.ramp, l.ramp.StartRPS
		}
	}
	prefix := p.PrefixTokens
	if o.PrefixTokens != nil {
		prefix = *o.PrefixTokens
		if prefix < 0 || prefix > MaxSampleTokens {
			return nil, flagError("--prefix-tokens", "%d out of range [0, %d]", prefix, MaxSampleTokens)
		}
	}
	if prefix > 0 {
		c.PrefixGroup, c.PrefixLength = SynthPrefixGroup, prefix
	}
	spec.Clients = []Client{c}
	w, err := New(spec)
	if err != nil {
		return nil, err
	}
	w.Name = name
	return w, nil
}

// flagPreset is the --workload preset (the distribution preset when none
// is given) and the workload's name.
func flagPreset(o *Options) (Preset, string, *Error) {
	p, _ := LookupPreset("distribution")
	name := ""
	if o.Preset != "" {
		var ok bool
		if p, ok = LookupPreset(o.Preset); !ok {
			return p, "", flagError("--workload", "unknown preset %q (valid: %s)", o.Preset, presetNames())
		}
		if o.Rate == nil && o.RampStrategy == nil {
			return p, "", flagError("--workload", "preset %q needs --rate (or --ramp-up-strategy)", o.Preset)
		}
		name = "preset:" + o.Preset
	}
	return p, name, nil
}

// flagLoad is the load the flags give: closed-loop users, or a rate, an
// arrival process and a ramp.
type flagLoad struct {
	concurrency int
	thinkUs     int64
	rate        float64
	arrival     string
	ramp        *RateRamp
}

// load reads the load flags, refusing the ones that exclude each other.
func (o *Options) load() (flagLoad, *Error) {
	l := flagLoad{rate: DefaultRate, arrival: DefaultArrival}
	if o.Concurrency != nil {
		l.concurrency = *o.Concurrency
		if l.concurrency < 0 || l.concurrency > MaxConcurrency {
			return l, flagError("--concurrency", "%d out of range [0, %d]", l.concurrency, MaxConcurrency)
		}
	}
	if o.Rate != nil && l.concurrency > 0 {
		return l, flagError("--rate", "cannot be combined with --concurrency")
	}
	var rerr *Error
	if l.ramp, rerr = o.ramp(); rerr != nil {
		return l, rerr
	}
	if l.ramp != nil && l.concurrency > 0 {
		return l, flagError("--ramp-up-strategy", "cannot be combined with --concurrency")
	}
	if o.Rate != nil {
		l.rate = *o.Rate
		if !(l.rate > 0) || math.IsInf(l.rate, 0) {
			return l, flagError("--rate", "%g must be > 0", l.rate)
		}
	}
	if o.Arrival != nil {
		l.arrival = *o.Arrival
		switch l.arrival {
		case ProcessPoisson, ProcessConstant, ProcessGamma, ProcessWeibull:
		default:
			return l, flagError("--arrival", "unknown arrival process %q (valid: constant, gamma, poisson, weibull)", l.arrival)
		}
		if l.concurrency > 0 {
			return l, flagError("--arrival", "cannot be combined with --concurrency")
		}
	}
	if o.ThinkTime != nil {
		if l.concurrency == 0 {
			return l, flagError("--think-time", "only used with --concurrency")
		}
		if *o.ThinkTime < 0 {
			return l, flagError("--think-time", "%s must be >= 0", *o.ThinkTime)
		}
		l.thinkUs = o.ThinkTime.Microseconds()
	}
	return l, nil
}

// timeoutUs is --timeout in µs (0: none), DefaultTimeout when not given.
func (o *Options) timeoutUs() (int64, *Error) {
	timeoutUs := DefaultTimeout.Microseconds()
	if o.Timeout != nil {
		switch t := *o.Timeout; {
		case t == 0:
			return 0, flagError("--timeout", "0 is not allowed (a negative value disables the timeout)")
		case t < 0:
			timeoutUs = 0
		case t.Microseconds() == 0:
			return 0, flagError("--timeout", "%s is below 1µs", t)
		default:
			timeoutUs = t.Microseconds()
		}
	}
	return timeoutUs, nil
}

// gaussianFlags builds a gaussian distribution from the four token flags
// (flag, flag-stdev, flag-min, flag-max), given ones replacing the defaults.
func gaussianFlags(flag string, mean, stdev, lo, hi int, pMean, pStdev, pMin, pMax *int) (Distribution, *Error) {
	pick := func(def int, p *int) int {
		if p != nil {
			return *p
		}
		return def
	}
	mean, stdev, lo, hi = pick(mean, pMean), pick(stdev, pStdev), pick(lo, pMin), pick(hi, pMax)
	switch {
	case mean < 1:
		return Distribution{}, flagError(flag, "%d must be >= 1", mean)
	case stdev < 0:
		return Distribution{}, flagError(flag+"-stdev", "%d must be >= 0", stdev)
	case lo < 0:
		return Distribution{}, flagError(flag+"-min", "%d must be >= 0", lo)
	case lo > hi:
		return Distribution{}, flagError(flag+"-min", "%d exceeds %s-max %d", lo, flag, hi)
	case hi > MaxSampleTokens:
		return Distribution{}, flagError(flag+"-max", "%d exceeds %d", hi, MaxSampleTokens)
	}
	return Distribution{Type: DistGaussian, Params: map[string]float64{
		"mean": float64(mean), "std_dev": float64(stdev), "min": float64(lo), "max": float64(hi),
	}}, nil
}
