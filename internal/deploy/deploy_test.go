package deploy

import (
	"strings"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

func TestResolveDefault(t *testing.T) {
	r, err := Resolve(Default())
	if err != nil {
		t.Fatal(err)
	}
	// docs/simulator.md §8.5: qwen3-14b on one H100 at 0.9 utilisation.
	if r.TotalKVBlocks != 15909 {
		t.Errorf("TotalKVBlocks = %d, want 15909", r.TotalKVBlocks)
	}
	// qwen3-14b has max_position_embeddings 40960 < 15909·16.
	if r.MaxModelLen != 40960 {
		t.Errorf("MaxModelLen = %d, want 40960", r.MaxModelLen)
	}
	if r.Instance.Latency == nil || r.Instance.KV.Blocks != 15909 || r.Instance.MaxNumSeqs != 1024 || r.Instance.MaxNumBatchedTokens != 8192 {
		t.Errorf("instance config not filled: %+v", r.Instance)
	}
}

func TestResolveCapsMaxModelLenAtCapacity(t *testing.T) {
	c := Default()
	c.TotalKVBlocks = 100
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxModelLen != 1600 {
		t.Errorf("MaxModelLen = %d, want 100·16 = 1600", r.MaxModelLen)
	}
	c.MaxModelLen = 1601
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "max-model-len 1601 needs 101 KV blocks") {
		t.Errorf("err = %v, want max-model-len too large", err)
	}
}

func TestDecodeStrict(t *testing.T) {
	tests := []struct {
		yaml, want string
	}{
		{"model: llama-3.1-8b-instruct\nmax_num_seqs: 64\n", ""},
		{"model: x\nmax_num_sequences: 3\n", `dep.yaml:2:1: unknown key "max_num_sequences"`},
		{"model: x\n\nmax_num_sqs: 3\n", `dep.yaml:3:1: unknown key "max_num_sqs" (did you mean "max_num_seqs"?)`},
		{"max_num_seqs: many\n", `dep.yaml:1:15: key max_num_seqs: "many" is not an integer`},
		{"model: x\nmax_num_seqs: -1\n", `dep.yaml:2:15: key max_num_seqs: -1 must not be negative`},
		{"max_num_seqs: 4\nmax_num_seqs: 8\n", `dep.yaml:2:1: key "max_num_seqs" is given twice (first on line 1)`},
		{"priority_age_weight: .inf\n", `dep.yaml:1:22: key priority_age_weight: +Inf must be a finite number`},
		{"routing_latency: soon\n", `dep.yaml:1:18: key routing_latency: "soon" is not a duration (e.g. 50ms)`},
		{"scheduler: lifo\n", `dep.yaml:1:12: key scheduler: "lifo": want fcfs, priority-fcfs or sjf`},
		{"gpu_memory_utilization: 1.5\n", `dep.yaml:1:25: key gpu_memory_utilization: 1.5 must be in (0, 1]`},
		{"- model: x\n", `dep.yaml:1:1: want a mapping of deployment keys, got a list`},
		{"model: [x\n", `dep.yaml:1: yaml syntax: did not find expected ',' or ']'`},
	}
	for _, tt := range tests {
		got, err := Decode("dep.yaml", []byte(tt.yaml), Default())
		if tt.want == "" {
			if err != nil || got.Model != "llama-3.1-8b-instruct" || got.MaxNumSeqs != 64 || got.GPU != "H100" {
				t.Errorf("Decode(%q) = %+v, %v", tt.yaml, got, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%q) error = %v, want %q", tt.yaml, err, tt.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.MaxNumSeqs = -1 }, "max-num-seqs -1 must not be negative"},
		{func(c *Config) { c.GPUMemoryUtilization = 1.5 }, "gpu-memory-utilization 1.5 must be in (0, 1]"},
		{func(c *Config) { c.Model = "gpt-9" }, "gpt-9"},
		{func(c *Config) { c.GPU = "TPU" }, "TPU"},
		{func(c *Config) { c.AlphaCoeffs = []float64{1, 2, 3} }, "must be given together"},
	}
	for _, tt := range tests {
		c := Default()
		tt.mod(&c)
		_, err := Resolve(c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want it to mention %q", err, tt.want)
			continue
		}
		if ec, ok := err.(interface{ ExitCode() int }); !ok || ec.ExitCode() != 2 {
			t.Errorf("%v: want an input error with exit code 2", err)
		}
	}
}

// TestClusterYAML: every cluster key decodes from YAML with
// its snake_case name and lands in the resolved cluster configuration.
func TestClusterYAML(t *testing.T) {
	y := `num_instances: 4
prefill_instances: 1
decode_instances: 3
pd_decider: prefix-threshold
pd_prefix_threshold: 32
pd_transfer_bandwidth: 50
pd_transfer_base_latency: 20us
pd_transfer_contention: true
admission_policy: token-bucket
token_bucket_capacity: 500
token_bucket_refill: 100
admission_latency: 1ms
routing_latency: 2ms
routing_policy: weighted
routing_scorers: queue-depth:1,load-balance:3
snapshot_refresh_interval: 0s
cache_signal_delay: 10ms
batching: sarathi
chunk_size: 256
`
	c, err := Decode("dep.yaml", []byte(y), Default())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	cc := r.ClusterConfig
	if len(cc.Instances) != 4 || cc.PD.PrefillInstances != 1 || cc.PD.Decider != "prefix-threshold" || cc.PD.PrefixThreshold != 32 ||
		cc.PD.BandwidthBytesPerUs != 50000 || cc.PD.BaseLatencyUs != 20 || !cc.PD.Contention || cc.PD.KVBytesPerToken <= 0 ||
		cc.Admission != "token-bucket" || cc.BucketCapacity != 500 || cc.BucketRefillPerSec != 100 ||
		cc.AdmissionLatencyUs != 1000 || cc.RoutingLatencyUs != 2000 || cc.Routing != "weighted" || len(cc.Scorers) != 2 ||
		cc.SnapshotRefreshUs != 0 || cc.CacheSignalDelayUs != 10000 || !r.IsCluster() {
		t.Errorf("cluster config %+v", cc)
	}
	if in := cc.Instances[3]; in.ID != 3 || in.Batching != "sarathi" || in.ChunkSize != 256 {
		t.Errorf("instance 3: %+v", in)
	}
	if d, _ := Resolve(Default()); d.IsCluster() || len(d.ClusterConfig.Instances) != 1 {
		t.Errorf("the default deployment is a cluster: %+v", d.ClusterConfig)
	}
}

func TestClusterErrors(t *testing.T) {
	tests := []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.AdmissionPolicy = "vip" }, `admission-policy "vip"`},
		{func(c *Config) { c.RoutingPolicy = "nearest" }, `routing-policy "nearest"`},
		{func(c *Config) { c.RoutingPolicy, c.RoutingScorers = "weighted", "queue-depth" }, "routing-scorers"},
		{func(c *Config) { c.PrefillInstances = 2 }, "P/D needs both pools"},
		{func(c *Config) { c.Instances, c.PrefillInstances, c.DecodeInstances = 5, 1, 2 }, "must equal prefill-instances + decode-instances = 3"},
		{func(c *Config) { c.PDDecider = "always" }, "needs prefill-instances"},
		{func(c *Config) { c.Batching = "tgi" }, `batching "tgi"`},
		{func(c *Config) { c.ChunkSize = 0 }, "chunk-size 0 must be positive"},
		{func(c *Config) { c.RoutingLatency = -1 }, "routing-latency"},
		{func(c *Config) { c.PDTransferBandwidth = 0 }, "pd-transfer-bandwidth"},
	}
	for _, tt := range tests {
		c := Default()
		tt.mod(&c)
		_, err := Resolve(c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want it to mention %q", err, tt.want)
			continue
		}
		if ec, ok := err.(interface{ ExitCode() int }); !ok || ec.ExitCode() != 2 {
			t.Errorf("%v: want exit code 2", err)
		}
	}
	// LightLLM manages KV per token: T·b blocks of one token.
	c := Default()
	c.Batching, c.TotalKVBlocks = "lightllm", 100
	r, err := Resolve(c)
	if err != nil || r.Instance.KV.Blocks != 1600 || r.Instance.KV.BlockSize != 1 {
		t.Errorf("lightllm KV %+v, %v", r.Instance.KV, err)
	}
}

// TestPipelineStageModel: with --pp 2 the stage model has half the layers
// (a stage step is faster than the whole model's), and activations cross
// at H · 2 bytes per token over 25 GB/s.
func TestPipelineStageModel(t *testing.T) {
	c := Default()
	c.PipelineParallel = 2
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	in := r.Instance
	if in.PipelineStages != 2 || in.StageLatency == nil {
		t.Fatalf("pipeline fields %+v", in)
	}
	// qwen3-14b: hidden 5120, bf16 → 10240 bytes per token at 25000 bytes/µs.
	if want := 10240.0 / 25000; in.StageSendUsPerToken != want {
		t.Errorf("send %g µs/token, want %g", in.StageSendUsPerToken, want)
	}
	st := &latency.Step{Prefill: []latency.PrefillWork{{NewTokens: 512, Target: 512}}, DecodeCount: 32, DecodeContextSum: 32 * 1000}
	whole, stage := in.Latency.StepTime(st), in.StageLatency.StepTime(st)
	if !(stage < whole && stage > whole/4) {
		t.Errorf("stage step %d µs, whole %d µs: want between a quarter and all of it", stage, whole)
	}
	c.Batching = "orca"
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "batching vllm only") {
		t.Errorf("pp with orca: %v", err)
	}
}

// TestScaleStepTimes: a scaled deployment's every latency model (the
// instance's, each cluster instance's, a pipeline stage's) takes the
// factor × the step time of the deployment's, which keeps its own.
func TestScaleStepTimes(t *testing.T) {
	cfg := Default()
	cfg.Instances, cfg.PipelineParallel = 2, 2
	res, err := Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := &latency.Step{DecodeCount: 100, DecodeContextSum: 100_000}
	base := res.Instance.Latency.StepTime(st)
	stage := res.Instance.StageLatency.StepTime(st)
	up, err := res.ScaleStepTimes(1.25)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(float64(base) * 1.25)
	for i, ic := range append([]instance.Config{up.Instance}, up.ClusterConfig.Instances...) {
		if got := ic.Latency.StepTime(st); got != want {
			t.Errorf("instance %d: step %d µs, want %d", i, got, want)
		}
		if got, want := ic.StageLatency.StepTime(st), int64(float64(stage)*1.25); got != want {
			t.Errorf("instance %d: stage step %d µs, want %d", i, got, want)
		}
	}
	if got := res.ClusterConfig.Instances[1].Latency.StepTime(st); got != base {
		t.Errorf("the original deployment changed: %d µs, want %d", got, base)
	}
	if res.Sigma() != latency.DefaultStepTimeSigma {
		t.Errorf("σ %v, want the physics default", res.Sigma())
	}
	if _, err := res.ScaleStepTimes(0); err == nil {
		t.Errorf("scale 0: no error")
	}
}
