package tracev2

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// Trace versions and header values (docs/tracev2.md §3).
const (
	// TraceVersion is the version our writers emit.
	TraceVersion = 3
	// MinTraceVersion is the oldest version readers accept.
	MinTraceVersion = 2

	// TimeUnitUs is the time unit our writers emit. Readers also accept
	// "µs" and "microseconds" (written by BLIS run/replay).
	TimeUnitUs = "us"

	ModeReal      = "real"      // written by observe
	ModeGenerated = "generated" // written by run
	ModeReplayed  = "replayed"  // written by replay

	// SessionAccumulate is the only non-empty session_context_growth value.
	SessionAccumulate = "accumulate"

	OriginRelative = "relative" // x_ext.time_origin: offsets from t0
	OriginEpoch    = "epoch"    // x_ext.time_origin: BLIS-style absolute times
)

// Header is the trace header YAML (docs/tracev2.md §3). Field order is the order our
// writers emit. Optional maps are pointers (nil = absent); kv_offload keeps
// pointer leaves so that it round-trips unchanged, explicit zeros included.
type Header struct {
	TraceVersion         int                   `yaml:"trace_version"`
	TimeUnit             string                `yaml:"time_unit"`
	CreatedAt            string                `yaml:"created_at,omitempty"` // RFC 3339 UTC instant of t0 (mode real)
	Mode                 string                `yaml:"mode"`
	WarmUpRequests       int                   `yaml:"warm_up_requests"`
	WorkloadSeed         *int64                `yaml:"workload_seed,omitempty"`
	WorkloadSpec         string                `yaml:"workload_spec,omitempty"`          // file name as given, or "preset:<name>"
	SessionContextGrowth string                `yaml:"session_context_growth,omitempty"` // "" or "accumulate"
	Server               *Server               `yaml:"server,omitempty"`
	Network              *Network              `yaml:"network,omitempty"` // BLIS writes "network: {}" for RTT 0: non-nil, zero
	GoodputSLOTargets    map[string]SLOTargets `yaml:"goodput_slo_targets,omitempty"`
	KVOffload            *KVOffload            `yaml:"kv_offload,omitempty"`
	ObservedKVMetrics    *ObservedKVMetrics    `yaml:"observed_kv_metrics,omitempty"`
	// XExt is ours. BLIS's strict loader rejects it, so a header written for
	// BLIS (--blis-compatible-header) keeps it in a sidecar file instead
	// (ExtSidecarPath); every other header carries it (see doc.go).
	XExt *Ext `yaml:"x_ext,omitempty"`
}

// Server describes the server that was measured (mode real).
type Server struct {
	Type                 string  `yaml:"type,omitempty"` // default "vllm" when empty
	Model                string  `yaml:"model,omitempty"`
	TensorParallel       int     `yaml:"tensor_parallel,omitempty"`
	MaxNumSeqs           int     `yaml:"max_num_seqs,omitempty"`
	BlockSize            int     `yaml:"block_size,omitempty"`
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization,omitempty"`
	MaxModelLen          int64   `yaml:"max_model_len,omitempty"`
}

// TypeOrDefault is the server type, "vllm" when unset.
func (s *Server) TypeOrDefault() string {
	if s == nil || s.Type == "" {
		return "vllm"
	}
	return s.Type
}

// Network holds the measured client-server round trip.
type Network struct {
	MeasuredRTTMs float64 `yaml:"measured_rtt_ms,omitempty"`
}

// SLOTargets gates goodput for one SLO class; values in ms, 0 = not gated.
// ITLMs is the mean per-request ITL (TPOT convention).
type SLOTargets struct {
	TTFTMs float64 `yaml:"ttft_ms,omitempty"`
	ITLMs  float64 `yaml:"itl_ms,omitempty"`
	E2EMs  float64 `yaml:"e2e_ms,omitempty"`
}

// KVOffload is the resolved KV offload configuration. Nil leaves are absent keys.
type KVOffload struct {
	CPUBytesToUse          *int64        `yaml:"cpu_bytes_to_use,omitempty"`
	PerBlockBytes          *int64        `yaml:"per_block_bytes,omitempty"`
	BlockSize              *int64        `yaml:"block_size,omitempty"`
	BlocksPerChunk         *int64        `yaml:"blocks_per_chunk,omitempty"`
	TokensPerHash          *int64        `yaml:"tokens_per_hash,omitempty"`
	EvictionPolicy         *string       `yaml:"eviction_policy,omitempty"`
	OffloadPromptOnly      *bool         `yaml:"offload_prompt_only,omitempty"`
	SelfDescribingKVEvents *bool         `yaml:"self_describing_kv_events,omitempty"`
	SecondaryTiers         []OffloadTier `yaml:"secondary_tiers,omitempty"`
}

// OffloadTier is one secondary KV offload tier. Bandwidths in bytes/µs,
// BaseLatency in µs.
type OffloadTier struct {
	Type                   *string  `yaml:"type,omitempty"`
	RootDir                *string  `yaml:"root_dir,omitempty"`
	NReadThreads           *int64   `yaml:"n_read_threads,omitempty"`
	NWriteThreads          *int64   `yaml:"n_write_threads,omitempty"`
	Locality               *string  `yaml:"locality,omitempty"`
	EnableKVEvents         *bool    `yaml:"enable_kv_events,omitempty"`
	DirectIO               *bool    `yaml:"direct_io,omitempty"`
	DeviceClass            *string  `yaml:"device_class,omitempty"`
	ReadBandwidth          *float64 `yaml:"read_bandwidth,omitempty"`
	WriteBandwidth         *float64 `yaml:"write_bandwidth,omitempty"`
	BaseLatency            *float64 `yaml:"base_latency,omitempty"`
	SaturationQueueDepth   *int64   `yaml:"saturation_queue_depth,omitempty"`
	SingleTransferFraction *float64 `yaml:"single_transfer_fraction,omitempty"`
	LatencyJitterStddev    *float64 `yaml:"latency_jitter_stddev,omitempty"`
}

// ObservedKVMetrics are KV cache counters scraped from the server over the run
// window (observe --scrape-kv-metrics). replay copies them verbatim.
type ObservedKVMetrics struct {
	Source         string   `yaml:"source"` // "tiered" or "gpu-prefix-cache-fallback"
	HitRate        float64  `yaml:"hit_rate"`
	BlockHits      int64    `yaml:"block_hits"`
	BlockQueries   int64    `yaml:"block_queries"`
	ReadTimeTotal  *float64 `yaml:"read_time_total,omitempty"`  // s
	WriteTimeTotal *float64 `yaml:"write_time_total,omitempty"` // s
	VLLMCommit     string   `yaml:"vllm_commit,omitempty"`
}

// Ext is our extension block, x_ext.
type Ext struct {
	Tool        string `yaml:"tool,omitempty"`
	ToolVersion string `yaml:"tool_version,omitempty"`
	T0UnixUs    int64  `yaml:"t0_unix_us,omitempty"`  // wall-clock Unix µs of t0
	TimeOrigin  string `yaml:"time_origin,omitempty"` // "relative" or "epoch"
	Interrupted *bool  `yaml:"interrupted,omitempty"` // set at the end of the run (trailer)
	Loop        string `yaml:"loop,omitempty"`        // "open" or "closed"
	// Shard is "I/N" when the trace is worker I's slice of a run fanned
	// out over N client processes (observe --shard); merging the N traces
	// by time gives the whole run.
	Shard string `yaml:"shard,omitempty"`
	// SelfTest is the measuring client's own error, found by observe against
	// an in-process server of known timing just before the run.
	SelfTest *SelfTest `yaml:"self_test,omitempty"`
	// Deployment is the deployment the trace was made on, as the keys of a
	// deployment YAML (run --deployment): run and replay write the resolved
	// deployment they simulated, observe what it measured or was told.
	// Values are plain YAML values (numbers, strings, booleans, lists, maps).
	Deployment map[string]any `yaml:"deployment,omitempty"`
	// Client is the load generator that sent the requests (observe), or the
	// one the simulation modelled (run, replay).
	Client *Client `yaml:"client,omitempty"`
	// ServerInfo is what observe read from the server's own endpoints.
	ServerInfo *ServerInfo `yaml:"server_info,omitempty"`
	// Sources says where a fact came from, keyed by its path in x_ext
	// ("deployment.max_num_seqs", "client.max_concurrency"): measured,
	// declared, derived or absent. A fact not listed is declared.
	Sources map[string]string `yaml:"sources,omitempty"`
}

// SelfTest is what observe's self-test measured: the client's error against
// a loopback server with known TTFT and ITL, at the run's concurrency. Errors
// are measured minus true values, in µs; they include the loopback server's
// own lateness on the same machine, so they bound the client's error from
// above.
type SelfTest struct {
	Streams          int   `yaml:"streams"`             // concurrent streams
	TTFTUs           int64 `yaml:"ttft_us"`             // configured TTFT of the loopback server
	ITLUs            int64 `yaml:"itl_us"`              // configured ITL
	TTFTBiasUs       int64 `yaml:"ttft_bias_us"`        // median TTFT error
	TTFTErrorP99Us   int64 `yaml:"ttft_error_p99_us"`   // 99th percentile TTFT error
	ITLJitterP50Us   int64 `yaml:"itl_jitter_p50_us"`   // median |ITL error|
	ITLJitterP99Us   int64 `yaml:"itl_jitter_p99_us"`   // 99th percentile |ITL error|
	DispatchLagP50Us int64 `yaml:"dispatch_lag_p50_us"` // median send − intended
	DispatchLagP99Us int64 `yaml:"dispatch_lag_p99_us"` // 99th percentile send − intended
}

// DefaultHeader is the header assumed for a data CSV that has none:
// trace_version 3, time_unit us, warm_up_requests 0.
func DefaultHeader() *Header {
	return &Header{TraceVersion: TraceVersion, TimeUnit: TimeUnitUs}
}

// FormatCreatedAt renders t0's wall-clock instant as our writers do:
// RFC 3339 UTC with microseconds, "2026-03-01T10:00:00.000000Z".
func FormatCreatedAt(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// OffsetsOnly reports whether the header promises that every time in the data
// is an offset from t0 (x_ext.time_origin: relative), so a consumer may stream
// the data without a normalisation pass (section 5). Readers still reject any
// epoch value that appears.
func (h *Header) OffsetsOnly() bool {
	return h != nil && h.XExt != nil && h.XExt.TimeOrigin == OriginRelative
}

// Clone returns a deep copy.
func (h *Header) Clone() *Header {
	if h == nil {
		return nil
	}
	c := *h
	if h.WorkloadSeed != nil {
		v := *h.WorkloadSeed
		c.WorkloadSeed = &v
	}
	if h.Server != nil {
		v := *h.Server
		c.Server = &v
	}
	if h.Network != nil {
		v := *h.Network
		c.Network = &v
	}
	if h.GoodputSLOTargets != nil {
		c.GoodputSLOTargets = make(map[string]SLOTargets, len(h.GoodputSLOTargets))
		for k, v := range h.GoodputSLOTargets {
			c.GoodputSLOTargets[k] = v
		}
	}
	if h.KVOffload != nil {
		v := *h.KVOffload
		v.CPUBytesToUse = clonePtr(v.CPUBytesToUse)
		v.PerBlockBytes = clonePtr(v.PerBlockBytes)
		v.BlockSize = clonePtr(v.BlockSize)
		v.BlocksPerChunk = clonePtr(v.BlocksPerChunk)
		v.TokensPerHash = clonePtr(v.TokensPerHash)
		v.EvictionPolicy = clonePtr(v.EvictionPolicy)
		v.OffloadPromptOnly = clonePtr(v.OffloadPromptOnly)
		v.SelfDescribingKVEvents = clonePtr(v.SelfDescribingKVEvents)
		if v.SecondaryTiers != nil {
			tiers := make([]OffloadTier, len(v.SecondaryTiers))
			for i, t := range v.SecondaryTiers {
				tiers[i] = t.clone()
			}
			v.SecondaryTiers = tiers
		}
		c.KVOffload = &v
	}
	if h.ObservedKVMetrics != nil {
		v := *h.ObservedKVMetrics
		v.ReadTimeTotal = clonePtr(v.ReadTimeTotal)
		v.WriteTimeTotal = clonePtr(v.WriteTimeTotal)
		c.ObservedKVMetrics = &v
	}
	c.XExt = h.XExt.clone()
	return &c
}

func (t OffloadTier) clone() OffloadTier {
	return OffloadTier{
		Type: clonePtr(t.Type), RootDir: clonePtr(t.RootDir),
		NReadThreads: clonePtr(t.NReadThreads), NWriteThreads: clonePtr(t.NWriteThreads),
		Locality: clonePtr(t.Locality), EnableKVEvents: clonePtr(t.EnableKVEvents),
		DirectIO: clonePtr(t.DirectIO), DeviceClass: clonePtr(t.DeviceClass),
		ReadBandwidth: clonePtr(t.ReadBandwidth), WriteBandwidth: clonePtr(t.WriteBandwidth),
		BaseLatency: clonePtr(t.BaseLatency), SaturationQueueDepth: clonePtr(t.SaturationQueueDepth),
		SingleTransferFraction: clonePtr(t.SingleTransferFraction),
		LatencyJitterStddev:    clonePtr(t.LatencyJitterStddev),
	}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ValidTimeUnit reports whether readers accept u as time_unit.
func ValidTimeUnit(u string) bool {
	return u == TimeUnitUs || u == "µs" || u == "microseconds"
}

// Validate checks what writers must never emit: an unsupported version or
// time unit, a negative warm-up count, an unknown session_context_growth, a
// non-finite or negative SLO target. Readers run the same checks with
// file:line:column positions.
func (h *Header) Validate() error {
	if h == nil {
		return errors.New("trace header is nil")
	}
	var errs []error
	if h.TraceVersion < MinTraceVersion {
		errs = append(errs, fmt.Errorf("trace_version %d is below %d", h.TraceVersion, MinTraceVersion))
	}
	if !ValidTimeUnit(h.TimeUnit) {
		errs = append(errs, fmt.Errorf("time_unit %q is not us, µs or microseconds", h.TimeUnit))
	}
	if h.WarmUpRequests < 0 {
		errs = append(errs, fmt.Errorf("warm_up_requests %d is negative", h.WarmUpRequests))
	}
	if h.SessionContextGrowth != "" && h.SessionContextGrowth != SessionAccumulate {
		errs = append(errs, fmt.Errorf("session_context_growth %q is not empty or accumulate", h.SessionContextGrowth))
	}
	for _, c := range slices.Sorted(maps.Keys(h.GoodputSLOTargets)) {
		t := h.GoodputSLOTargets[c]
		for _, v := range []float64{t.TTFTMs, t.ITLMs, t.E2EMs} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				errs = append(errs, fmt.Errorf("goodput_slo_targets.%s: %v is not a finite value >= 0", c, v))
				break
			}
		}
	}
	if path := nonFinite(reflect.ValueOf(h).Elem(), ""); path != "" {
		errs = append(errs, fmt.Errorf("%s is not a finite number", path))
	} else if path, msg, _ := checkExt(h.XExt); path != "" {
		errs = append(errs, fmt.Errorf("%s: %s", path, msg))
	} else if path, msg := h.serverConflict(); path != "" {
		errs = append(errs, fmt.Errorf("%s: %s", path, msg))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trace header: %w", err)
	}
	return nil
}

// nonFinite returns the key path of the first NaN or infinite float in v
// (readers reject them), "" if there is none.
func nonFinite(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return path
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nonFinite(v.Elem(), path)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			if p := nonFinite(v.Field(i), joinPath(path, tag)); p != "" {
				return p
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if p := nonFinite(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(a, b int) bool { return keys[a].String() < keys[b].String() })
		for _, k := range keys {
			if p := nonFinite(v.MapIndex(k), joinPath(path, k.String())); p != "" {
				return p
			}
		}
	}
	return ""
}
