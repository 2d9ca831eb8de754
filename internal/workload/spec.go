package workload

// Spec is a workload: BLIS WorkloadSpec v2 (docs/workload.md §2) with the defaults
// of docs/workload.md §3 resolved. Decode builds one from YAML; tests and programs may build
// one directly and pass it to New, which validates it.
type Spec struct {
	Version       string   // "2" after decoding ("1" is upgraded)
	Seed          int64    // workload seed (42 when neither the spec nor --seed sets it)
	Category      string   // "", language, multimodal, reasoning (informational)
	AggregateRate float64  // requests/s over all rate-based clients
	NumRequests   int64    // cap on generated requests, follow-ups included; 0 = none
	HorizonUs     int64    // no arrival after it; 0 = none
	Clients       []Client // cohorts and inference_perf stages are expanded into clients
	// RateRamp (Ours), when set, ramps the total rate over num_requests
	// requests instead of a fixed aggregate_rate.
	RateRamp *RateRamp

	// GoodputSLOTargets maps an SLO class to its targets; nil when none.
	GoodputSLOTargets map[string]SLOTarget

	// BaseDir is where relative empirical `file:` paths are resolved
	// (the spec file's directory). Not a YAML key.
	BaseDir string

	pos *positions // key positions when decoded from a file; nil otherwise
}

// Client is one client of a Spec (docs/workload.md §3), defaults resolved.
type Client struct {
	ID           string
	TenantID     string
	SLOClass     string
	Model        string
	RateFraction float64 // share of AggregateRate; 0 for concurrency clients
	Concurrency  int     // closed-loop virtual users (docs/workload.md §8); 0 = rate-based
	ThinkTimeUs  int64   // think time of concurrency users
	Arrival      Arrival // rate-based clients only
	Input        Distribution
	Output       Distribution
	PrefixGroup  string
	PrefixLength int // resolved: the group's length (50 by default); 0 without a group
	Streaming    bool
	ReasonRatio  *Distribution // sample/100 clamped to [0, 1]; nil = reason_ratio 0
	MultiTurn    *MultiTurn    // nil = single-turn
	ClosedLoop   bool          // resolved: true by default for multi-turn clients
	TimeoutUs    int64         // resolved per-request timeout; 0 = none
	SLOTargetUs  int64         // per-request TTFT target; 0 = none
	// Lifecycle restricts the client to activity windows, with optional
	// per-window rates, arrival processes and lengths; nil = always on.
	// Cohort members share one.
	Lifecycle  *Lifecycle
	Multimodal *Multimodal // input = text + images, audio, video; nil = text only

	// src is where the client comes from in the spec file when it is not
	// clients[i] (a cohort member: "cohorts[k]"), for error positions;
	// lead is 1 + the index of the client whose compiled samplers and
	// windows this one shares (cohort members), 0 = none.
	src  string
	lead int
}

// Arrival is an inter-arrival process (docs/workload.md §4). Zero CV, Shape and
// Scale mean "not given".
type Arrival struct {
	Process string  // poisson, constant, gamma, weibull
	CV      float64 // gamma, weibull; default 1
	Shape   float64 // gamma, weibull: with Scale, replaces cv and ignores the rate
	Scale   float64 // µs
}

// Distribution is a length distribution (docs/workload.md §5).
type Distribution struct {
	Type   string             // gaussian, exponential, lognormal, pareto_lognormal, constant, empirical, uniform
	Params map[string]float64 // parameters; for empirical, "<token count>": weight
	File   string             // empirical only: a PMF or a list of observed lengths (see doc.go)
}

// MultiTurn makes every arrival of a client start a session (docs/workload.md §7).
type MultiTurn struct {
	MaxRounds     int
	ThinkTimeUs   int64
	ContextGrowth string // "" or "accumulate"
	SingleSession bool
}

// SLOTarget holds the goodput targets of one SLO class, in ms; 0 = not gated.
type SLOTarget struct {
	TTFTMs float64
	ITLMs  float64 // mean per-request ITL (TPOT convention)
	E2EMs  float64
}

// Context growth values.
const ContextAccumulate = "accumulate"

// Defaults of docs/workload.md §2, §3, §6.
const (
	DefaultSeed         = 42
	DefaultPrefixLength = 50
	DefaultTimeoutUs    = 300_000_000
)

// isConcurrency reports whether c is a closed-loop concurrency client.
func (c *Client) isConcurrency() bool { return c.Concurrency > 0 }

// endless reports whether c generates an unbounded stream of requests unless
// num_requests or the horizon stops it.
func (c *Client) endless() bool {
	if c.isConcurrency() {
		return true
	}
	if windowedClient(c) {
		return false // its last window ends
	}
	return c.MultiTurn == nil || !c.MultiTurn.SingleSession
}
