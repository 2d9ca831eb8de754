package workload

// kind is the expected YAML shape of a key's value.
type kind int

const (
	kString kind = iota
	kInt
	kFloat
	kBool
	kObject  // a mapping with the schema named by field.obj
	kList    // a sequence of kObject
	kParams  // a mapping of names to numbers (distribution params)
	kTargets // a mapping of SLO class to a kObject
)

type field struct {
	kind kind
	obj  string
}

// schemaOf lists the keys each mapping of the spec accepts (docs/workload.md):
// the spec itself, a client (and a cohort, which is shaped like one), the
// mappings that shape load over time, and those that shape a request.
func schemaOf(obj string) map[string]field {
	switch obj {
	case "spec":
		return specSchema()
	case "client":
		return clientSchema()
	case "cohort":
		return cohortSchema()
	}
	if m := timeSchema(obj); m != nil {
		return m
	}
	return requestSchema(obj)
}

// specSchema is the top of a spec.
func specSchema() map[string]field {
	return map[string]field{
		"version":             {kind: kString},
		"seed":                {kind: kInt},
		"category":            {kind: kString},
		"aggregate_rate":      {kind: kFloat},
		"num_requests":        {kind: kInt},
		"horizon":             {kind: kInt},
		"clients":             {kind: kList, obj: "client"},
		"cohorts":             {kind: kList, obj: "cohort"},
		"inference_perf":      {kind: kObject, obj: "inference_perf"},
		"rate_ramp":           {kind: kObject, obj: "ramp"},
		"goodput_slo_targets": {kind: kTargets, obj: "target"},
	}
}

// clientSchema is one client of clients:.
func clientSchema() map[string]field {
	return map[string]field{
		"id":                  {kind: kString},
		"tenant_id":           {kind: kString},
		"slo_class":           {kind: kString},
		"model":               {kind: kString},
		"rate_fraction":       {kind: kFloat},
		"concurrency":         {kind: kInt},
		"think_time_us":       {kind: kInt},
		"arrival":             {kind: kObject, obj: "arrival"},
		"input_distribution":  {kind: kObject, obj: "dist"},
		"output_distribution": {kind: kObject, obj: "dist"},
		"prefix_group":        {kind: kString},
		"prefix_length":       {kind: kInt},
		"streaming":           {kind: kBool},
		"reasoning":           {kind: kObject, obj: "reasoning"},
		"closed_loop":         {kind: kBool},
		"timeout":             {kind: kInt},
		"slo_target_us":       {kind: kInt},
		"network":             {kind: kObject, obj: "network"},
		"lifecycle":           {kind: kObject, obj: "lifecycle"},
		"multimodal":          {kind: kObject, obj: "multimodal"},
	}
}

// cohortSchema is a client's keys, but for its id-less members' per-client
// ones (concurrency users, lifecycle windows, which its patterns make),
// plus its own.
func cohortSchema() map[string]field {
	m := clientSchema()
	for _, k := range []string{"concurrency", "think_time_us", "lifecycle"} {
		delete(m, k)
	}
	m["population"] = field{kind: kInt}
	m["prefix_sharing"] = field{kind: kString}
	m["diurnal"] = field{kind: kObject, obj: "diurnal"}
	m["spike"] = field{kind: kObject, obj: "spike"}
	m["drain"] = field{kind: kObject, obj: "drain"}
	return m
}

// timeSchema are the mappings that shape load over time: lifecycle
// windows, diurnal patterns, spikes, drains, ramps, arrival processes and
// inference-perf stages; nil for another obj.
func timeSchema(obj string) map[string]field {
	switch obj {
	case "lifecycle":
		return map[string]field{"windows": {kind: kList, obj: "window"}}
	case "window":
		return map[string]field{
			"start_us":            {kind: kInt},
			"end_us":              {kind: kInt},
			"trace_rate":          {kind: kFloat},
			"arrival":             {kind: kObject, obj: "arrival"},
			"input_distribution":  {kind: kObject, obj: "dist"},
			"output_distribution": {kind: kObject, obj: "dist"},
		}
	case "diurnal":
		return map[string]field{"peak_hour": {kind: kInt}, "peak_to_trough_ratio": {kind: kFloat}}
	case "spike":
		return map[string]field{"start_time_us": {kind: kInt}, "duration_us": {kind: kInt}, "trace_rate": {kind: kFloat}}
	case "drain":
		return map[string]field{"start_time_us": {kind: kInt}, "ramp_duration_us": {kind: kInt}}
	case "inference_perf":
		return map[string]field{"stages": {kind: kList, obj: "stage"}, "shared_prefix": {kind: kObject, obj: "shared_prefix"}}
	case "stage":
		return map[string]field{"rate": {kind: kFloat}, "duration": {kind: kInt}}
	case "shared_prefix":
		return map[string]field{
			"num_unique_system_prompts":   {kind: kInt},
			"num_users_per_system_prompt": {kind: kInt},
			"system_prompt_len":           {kind: kInt},
			"question_len":                {kind: kInt},
			"output_len":                  {kind: kInt},
			"enable_multi_turn_chat":      {kind: kBool},
		}
	case "ramp":
		return map[string]field{"strategy": {kind: kString}, "start_rps": {kind: kFloat}, "end_rps": {kind: kFloat}}
	case "arrival":
		return map[string]field{
			"process": {kind: kString},
			"cv":      {kind: kFloat},
			"shape":   {kind: kFloat},
			"scale":   {kind: kFloat},
		}
	}
	return nil
}

// requestSchema are the mappings that shape a request: distributions,
// multimodal parts, reasoning and multi-turn, network, SLO targets; nil for
// another obj.
func requestSchema(obj string) map[string]field {
	switch obj {
	case "multimodal":
		m := map[string]field{}
		for _, k := range []string{"text", "image", "image_count", "audio", "audio_count", "video", "video_count"} {
			m[k+"_distribution"] = field{kind: kObject, obj: "dist"}
		}
		return m
	case "dist":
		return map[string]field{
			"type":   {kind: kString},
			"params": {kind: kParams},
			"file":   {kind: kString},
		}
	case "reasoning":
		return map[string]field{
			"reason_ratio_distribution": {kind: kObject, obj: "dist"},
			"multi_turn":                {kind: kObject, obj: "multi_turn"},
		}
	case "multi_turn":
		return map[string]field{
			"max_rounds":     {kind: kInt},
			"think_time_us":  {kind: kInt},
			"context_growth": {kind: kString},
			"single_session": {kind: kBool},
		}
	case "network":
		return map[string]field{
			"rtt_ms":         {kind: kFloat},
			"bandwidth_mbps": {kind: kFloat},
		}
	case "target":
		return map[string]field{
			"ttft_ms": {kind: kFloat},
			"itl_ms":  {kind: kFloat},
			"e2e_ms":  {kind: kFloat},
		}
	}
	return nil
}

// unimplementedKey reports BLIS keys we recognise but do not implement
// (docs/workload.md §1): they are an error, never silently ignored.
func unimplementedKey(obj, key string) bool {
	if obj != "spec" && obj != "client" {
		return false
	}
	switch key {
	case "servegen_data", "adapter":
		return true
	}
	return false
}

// Raw decode targets: pointers tell "absent" from zero.
type rawSpec struct {
	Version       *string              `yaml:"version"`
	Seed          *int64               `yaml:"seed"`
	Category      string               `yaml:"category"`
	AggregateRate *float64             `yaml:"aggregate_rate"`
	NumRequests   *int64               `yaml:"num_requests"`
	Horizon       *int64               `yaml:"horizon"`
	Clients       []rawClient          `yaml:"clients"`
	Cohorts       []rawCohort          `yaml:"cohorts"`
	InferencePerf *rawInferencePerf    `yaml:"inference_perf"`
	RateRamp      *rawRamp             `yaml:"rate_ramp"`
	Goodput       map[string]rawTarget `yaml:"goodput_slo_targets"`
}

type rawClient struct {
	ID           string         `yaml:"id"`
	TenantID     string         `yaml:"tenant_id"`
	SLOClass     string         `yaml:"slo_class"`
	Model        string         `yaml:"model"`
	RateFraction *float64       `yaml:"rate_fraction"`
	Concurrency  *int64         `yaml:"concurrency"`
	ThinkTimeUs  *int64         `yaml:"think_time_us"`
	Arrival      *rawArrival    `yaml:"arrival"`
	InputDist    *rawDist       `yaml:"input_distribution"`
	OutputDist   *rawDist       `yaml:"output_distribution"`
	PrefixGroup  string         `yaml:"prefix_group"`
	PrefixLength *int64         `yaml:"prefix_length"`
	Streaming    bool           `yaml:"streaming"`
	Reasoning    *rawReasoning  `yaml:"reasoning"`
	ClosedLoop   *bool          `yaml:"closed_loop"`
	Timeout      *int64         `yaml:"timeout"`
	SLOTargetUs  *int64         `yaml:"slo_target_us"`
	Network      *rawNetwork    `yaml:"network"`
	Lifecycle    *rawLifecycle  `yaml:"lifecycle"`
	Multimodal   *rawMultimodal `yaml:"multimodal"`
}

type rawArrival struct {
	Process string   `yaml:"process"`
	CV      *float64 `yaml:"cv"`
	Shape   *float64 `yaml:"shape"`
	Scale   *float64 `yaml:"scale"`
}

type rawDist struct {
	Type   string             `yaml:"type"`
	Params map[string]float64 `yaml:"params"`
	File   string             `yaml:"file"`
}

type rawReasoning struct {
	ReasonRatio *rawDist      `yaml:"reason_ratio_distribution"`
	MultiTurn   *rawMultiTurn `yaml:"multi_turn"`
}

type rawMultiTurn struct {
	MaxRounds     *int64 `yaml:"max_rounds"`
	ThinkTimeUs   *int64 `yaml:"think_time_us"`
	ContextGrowth string `yaml:"context_growth"`
	SingleSession bool   `yaml:"single_session"`
}

type rawNetwork struct {
	RTTMs         *float64 `yaml:"rtt_ms"`
	BandwidthMbps *float64 `yaml:"bandwidth_mbps"`
}

type rawTarget struct {
	TTFTMs *float64 `yaml:"ttft_ms"`
	ITLMs  *float64 `yaml:"itl_ms"`
	E2EMs  *float64 `yaml:"e2e_ms"`
}
