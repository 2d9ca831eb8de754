package tracev2

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Where a fact of x_ext.deployment, x_ext.client or x_ext.server_info came
// from (x_ext.sources). A fact the sources do not list is declared.
const (
	// SourceMeasured: read from the server (its endpoints) or from the run.
	SourceMeasured = "measured"
	// SourceDeclared: told by the user (flags, --server-config) or the
	// configuration of a simulation.
	SourceDeclared = "declared"
	// SourceDerived: computed by the simulator from other keys (KV blocks
	// from GPU memory, max_model_len from the model); a replay that
	// overrides any other key derives it again.
	SourceDerived = "derived"
	// SourceAbsent: nobody said; the replay takes its default.
	SourceAbsent = "absent"
)

// CoreDeploymentKeys are the deployment keys a replay of a trace depends
// on most: observe marks each absent when nobody said it, and reports show
// them whatever the trace says.
func CoreDeploymentKeys() []string {
	return []string{"model", "gpu", "tensor_parallel", "num_instances", "max_num_seqs", "max_num_batched_tokens",
		"block_size", "total_kv_blocks", "gpu_memory_utilization", "max_model_len", "latency_model"}
}

// Client is the load generator a trace was made with: the one observe ran,
// or the one run and replay simulated. Durations are in µs. The JSON names
// (run's and replay's summary) are the YAML ones.
type Client struct {
	// MaxConcurrency caps the requests in flight; a request held back keeps
	// its intended arrival time and is sent when a slot frees. 0 = no cap.
	MaxConcurrency int `yaml:"max_concurrency" json:"max_concurrency"`
	// SendGapUs is the delay between a slot freeing and the next send of a
	// capped client.
	SendGapUs int64 `yaml:"send_gap_us,omitempty" json:"send_gap_us,omitempty"`
	// Users is the number of closed-loop users (each sends, waits for the
	// answer, thinks, sends again); 0 = none.
	Users int `yaml:"users,omitempty" json:"users,omitempty"`
	// ThinkTimeUs is the closed-loop users' think time when they all share one.
	ThinkTimeUs int64 `yaml:"think_time_us,omitempty" json:"think_time_us,omitempty"`
	// Arrival is the arrival process of the open-loop clients (poisson,
	// gamma, weibull, constant), "mixed" when they differ, "trace" when the
	// requests were played from a trace.
	Arrival string `yaml:"arrival,omitempty" json:"arrival,omitempty"`
	// RateRPS is the intended aggregate request rate of the open-loop clients.
	RateRPS float64 `yaml:"rate_rps,omitempty" json:"rate_rps,omitempty"`
	// Streaming is "all", "none" or "mixed".
	Streaming string `yaml:"streaming,omitempty" json:"streaming,omitempty"`
	// PrewarmConnections were opened before t0.
	PrewarmConnections int `yaml:"prewarm_connections,omitempty" json:"prewarm_connections,omitempty"`
	// RequestTimeoutUs bounds one request from its send; 0 = none.
	RequestTimeoutUs int64 `yaml:"request_timeout_us,omitempty" json:"request_timeout_us,omitempty"`
	// SweepLevel names the sweep level this run was (e.g. "rate=8"); empty
	// for a run that was not part of a sweep.
	SweepLevel string `yaml:"sweep_level,omitempty" json:"sweep_level,omitempty"`
	// Repeat is this run's number, from 1, among the Repeats runs of the
	// same traffic against the same server (observe --repeat); 0 for a run
	// that was not repeated.
	Repeat  int `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	Repeats int `yaml:"repeats,omitempty" json:"repeats,omitempty"`
	// Server names which of two servers measured in turn this run measured
	// ("a" or "b", observe --url-b); empty when only one was.
	Server string `yaml:"server,omitempty" json:"server,omitempty"`
	// SessionMode is how later session rounds (and closed-loop users' next
	// requests) were sent: "closed-loop" after the previous answer plus
	// think time, "fixed" at their own recorded time (a replay's
	// --session-mode fixed, or a workload without follow-ups).
	SessionMode string `yaml:"session_mode,omitempty" json:"session_mode,omitempty"`
	// PeakInFlight is the most requests the client had in flight (measured).
	PeakInFlight int `yaml:"peak_in_flight,omitempty" json:"peak_in_flight,omitempty"`
}

// ServerInfo is what observe read from the server's own endpoints, verbatim
// where the server gives text.
type ServerInfo struct {
	// VLLMVersion is GET /version's "version".
	VLLMVersion string `yaml:"vllm_version,omitempty"`
	// CacheConfig holds the labels of vllm:cache_config_info on /metrics
	// (block_size, num_gpu_blocks, gpu_memory_utilization,
	// enable_prefix_caching, cache_dtype, ...), as the server wrote them.
	CacheConfig map[string]string `yaml:"cache_config,omitempty"`
	// Scheduler holds what /metrics showed of the scheduler while the run
	// lasted (observe --scrape-metrics).
	Scheduler *SchedulerInfo `yaml:"scheduler,omitempty"`
	// URL is the server's base URL, credentials removed, when observe
	// measured two servers in turn (observe --url-b), so each trace says
	// which it measured.
	URL string `yaml:"url,omitempty"`
	// ServeArgs are the `vllm serve` arguments the user said the server was
	// started with (observe --vllm-args), as given.
	ServeArgs string `yaml:"serve_args,omitempty"`
}

// SchedulerInfo is what the scrapes of /metrics saw of the scheduler.
type SchedulerInfo struct {
	PeakRunning int   `yaml:"peak_running"` // most vllm:num_requests_running seen; ≤ max_num_seqs
	PeakWaiting int   `yaml:"peak_waiting"` // most vllm:num_requests_waiting seen
	Preemptions int64 `yaml:"preemptions"`  // vllm:num_preemptions_total over the run
	Scrapes     int   `yaml:"scrapes"`      // scrapes the figures come from
}

// Deployment returns the deployment the header states, as deployment-YAML
// keys (run --deployment): x_ext.deployment when the trace has one, else
// BLIS's server keys (model, tensor_parallel, max_num_seqs, block_size,
// gpu_memory_utilization, max_model_len), of which a zero is absent. The
// map is a copy; nil when the header states nothing.
func (h *Header) Deployment() map[string]any {
	if h == nil {
		return nil
	}
	if h.XExt != nil && len(h.XExt.Deployment) > 0 {
		return cloneMap(h.XExt.Deployment)
	}
	s := h.Server
	if s == nil {
		return nil
	}
	out := map[string]any{}
	put := func(key string, v any, set bool) {
		if set {
			out[key] = v
		}
	}
	put("model", s.Model, s.Model != "")
	put("tensor_parallel", s.TensorParallel, s.TensorParallel > 0)
	put("max_num_seqs", s.MaxNumSeqs, s.MaxNumSeqs > 0)
	put("block_size", s.BlockSize, s.BlockSize > 0)
	put("gpu_memory_utilization", s.GPUMemoryUtilization, s.GPUMemoryUtilization > 0)
	put("max_model_len", int(s.MaxModelLen), s.MaxModelLen > 0)
	if len(out) == 0 {
		return nil
	}
	return out
}

// SetDeployment records a deployment in the header: every key in
// x_ext.deployment, and BLIS's server keys (which BLIS reads) from the same
// values, so the two never disagree. sources marks the facts that are not
// declared (keys without the "deployment." prefix); nil = all declared.
// Values must be what a YAML decoder gives (int, float64, string, bool,
// []any, map[string]any).
func (h *Header) SetDeployment(dep map[string]any, sources map[string]string) {
	if h.XExt == nil {
		h.XExt = &Ext{}
	}
	h.XExt.Deployment = cloneMap(dep)
	for k, v := range sources {
		if h.XExt.Sources == nil {
			h.XExt.Sources = map[string]string{}
		}
		h.XExt.Sources["deployment."+k] = v
	}
	if h.Server == nil {
		h.Server = &Server{Type: "vllm"}
	}
	s := h.Server
	if m, ok := dep["model"].(string); ok && m != "" {
		s.Model = m
	}
	s.TensorParallel = intOr(dep["tensor_parallel"], s.TensorParallel)
	s.MaxNumSeqs = intOr(dep["max_num_seqs"], s.MaxNumSeqs)
	s.BlockSize = intOr(dep["block_size"], s.BlockSize)
	if f, ok := yamlNumber(dep["gpu_memory_utilization"]); ok && f > 0 {
		s.GPUMemoryUtilization = f
	}
	if f, ok := yamlNumber(dep["max_model_len"]); ok && f > 0 {
		s.MaxModelLen = int64(f)
	}
}

// Source is where the fact at path ("deployment.max_num_seqs",
// "client.max_concurrency") came from: x_ext.sources, else declared when the
// value is present and absent when not.
func (h *Header) Source(path string, present bool) string {
	if h != nil && h.XExt != nil {
		if s, ok := h.XExt.Sources[path]; ok {
			return s
		}
	}
	if present {
		return SourceDeclared
	}
	return SourceAbsent
}

func intOr(v any, def int) int {
	if f, ok := yamlNumber(v); ok && f > 0 && f == math.Trunc(f) {
		return int(f)
	}
	return def
}

// yamlNumber is v as a float64 when it is a YAML number.
func yamlNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// plainValue puts a decoded free-form YAML value in the one form it has
// after any number of encodings and decodings: a whole float is an int (YAML
// writes 8.0 as 8, read back as an int), a map's keys are strings, a
// timestamp is its text.
func plainValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = plainValue(e)
		}
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = plainValue(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = plainValue(e)
		}
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return v
}

// cloneMap deep-copies a map of YAML values.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

func (x *Ext) clone() *Ext {
	if x == nil {
		return nil
	}
	v := *x
	v.Interrupted = clonePtr(v.Interrupted)
	v.SelfTest = clonePtr(v.SelfTest)
	v.Deployment = cloneMap(v.Deployment)
	v.Client = clonePtr(v.Client)
	if v.Sources != nil {
		v.Sources = maps.Clone(v.Sources)
	}
	if s := v.ServerInfo; s != nil {
		c := *s
		c.CacheConfig = maps.Clone(s.CacheConfig)
		c.Scheduler = clonePtr(s.Scheduler)
		v.ServerInfo = &c
	}
	return &v
}

// checkExt validates x_ext's facts as readers see them: sources name one of
// the four origins, client figures are not negative. It returns the key path
// and message of the first problem.
func checkExt(x *Ext) (path, msg string, warn bool) {
	if x == nil {
		return "", "", false
	}
	if x.Shard != "" {
		if _, _, err := ParseShard(x.Shard); err != nil {
			return "x_ext.shard", err.Error(), false
		}
	}
	for _, k := range slices.Sorted(maps.Keys(x.Sources)) {
		switch x.Sources[k] {
		case SourceMeasured, SourceDeclared, SourceDerived, SourceAbsent:
		default:
			return "x_ext.sources." + k, fmt.Sprintf("%q is not measured, declared, derived or absent", x.Sources[k]), true
		}
	}
	if c := x.Client; c != nil {
		for _, f := range []struct {
			key string
			v   int64
		}{{"max_concurrency", int64(c.MaxConcurrency)}, {"send_gap_us", c.SendGapUs}, {"users", int64(c.Users)},
			{"think_time_us", c.ThinkTimeUs}, {"prewarm_connections", int64(c.PrewarmConnections)},
			{"request_timeout_us", c.RequestTimeoutUs}, {"peak_in_flight", int64(c.PeakInFlight)},
			{"repeat", int64(c.Repeat)}, {"repeats", int64(c.Repeats)}} {
			if f.v < 0 {
				return "x_ext.client." + f.key, fmt.Sprintf("%d is negative", f.v), false
			}
		}
		if c.RateRPS < 0 {
			return "x_ext.client.rate_rps", fmt.Sprintf("%v is negative", c.RateRPS), false
		}
	}
	for _, k := range slices.Sorted(maps.Keys(x.Deployment)) {
		if p := nonFinite(reflect.ValueOf(x.Deployment[k]), "x_ext.deployment."+k); p != "" {
			return p, "is not a finite number", false
		}
		if strings.TrimSpace(k) == "" {
			return "x_ext.deployment", "a key is empty", false
		}
	}
	return "", "", false
}

// serverConflict names the first of BLIS's server keys (server.model,
// server.tensor_parallel, ...) whose value differs from the same key of
// x_ext.deployment, both being stated: such a header describes two
// servers, and readers would take one or the other. "" when none differs.
func (h *Header) serverConflict() (path, msg string) {
	if h == nil || h.Server == nil || h.XExt == nil || len(h.XExt.Deployment) == 0 {
		return "", ""
	}
	s, dep := h.Server, h.XExt.Deployment
	for _, f := range []struct {
		key string
		v   any
		set bool
	}{{"model", s.Model, s.Model != ""}, {"tensor_parallel", s.TensorParallel, s.TensorParallel > 0},
		{"max_num_seqs", s.MaxNumSeqs, s.MaxNumSeqs > 0}, {"block_size", s.BlockSize, s.BlockSize > 0},
		{"gpu_memory_utilization", s.GPUMemoryUtilization, s.GPUMemoryUtilization > 0},
		{"max_model_len", s.MaxModelLen, s.MaxModelLen > 0}} {
		if v, ok := dep[f.key]; ok && f.set && !SameValue(f.v, v) {
			return "x_ext.deployment." + f.key, fmt.Sprintf("%v differs from server.%s %v: the header describes two servers", v, f.key, f.v)
		}
	}
	return "", ""
}

// SameValue reports whether two header values are equal as YAML values:
// numbers by value whatever their Go type (a typed server key against a
// decoded x_ext value), strings exactly, lists and maps element by element.
// A nil and an empty list or map are equal.
func SameValue(a, b any) bool {
	if x, ok := yamlNumber(a); ok {
		y, ok := yamlNumber(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok && b != nil {
			return false
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !SameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok && b != nil {
			return false
		}
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !SameValue(v, w) {
				return false
			}
		}
		return true
	case nil:
		switch y := b.(type) {
		case []any:
			return len(y) == 0
		case map[string]any:
			return len(y) == 0
		}
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

// FormatValue renders a header value for people: numbers in full (no
// exponent), lists and maps inline, "-" for nil.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = FormatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+": "+FormatValue(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
