package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
)

// DeploymentFlags are the deployment flags of run and replay. Defaults are
// deploy.Default(); a YAML file (--deployment) sets any field, and a flag
// given explicitly overrides the file.
func DeploymentFlags() []ucli.Flag {
	d := deploy.Default()
	return append([]ucli.Flag{
		&ucli.StringFlag{Name: "deployment", Usage: "deployment YAML (keys: the flag names below with underscores, or their other names)"},
		&ucli.StringFlag{Name: "model", Usage: "model: an embedded name (see --list-models), a HuggingFace id, or a config.json path", Value: d.Model},
		&ucli.StringFlag{Name: "gpu", Usage: "GPU: H100, A100-SXM (A100-80), L40S, or a name in --hardware-file", Value: d.GPU},
		&ucli.StringFlag{Name: "hardware-file", Usage: "GPU specs JSON (hardware_config.json format)"},
		&ucli.IntFlag{Name: "tensor-parallel", Usage: "tensor-parallel degree", Value: d.TP},
		&ucli.IntFlag{Name: "data-parallel", Usage: "data-parallel ranks stepping in lockstep as one instance (with a mixture of experts: expert parallelism); physics model only", Value: d.DataParallel},
		&ucli.IntFlag{Name: "num-instances", Usage: "instances (replicas)", Value: d.Instances},
		&ucli.IntFlag{Name: "total-kv-blocks", Usage: "KV cache blocks per instance; 0 = from GPU memory"},
		&ucli.Float64Flag{Name: "gpu-memory-utilization", Usage: "share of GPU memory vLLM may use", Value: d.GPUMemoryUtilization},
		&ucli.IntFlag{Name: "block-size", Usage: "tokens per KV block", Value: d.BlockSize},
		&ucli.IntFlag{Name: "max-model-len", Usage: "max prompt + output tokens; 0 = from the model config, capped at the KV capacity"},
		&ucli.IntFlag{Name: "max-num-seqs", Usage: "max requests in a batch", Value: d.MaxNumSeqs},
		&ucli.IntFlag{Name: "max-num-batched-tokens", Usage: "token budget of a step", Value: d.MaxNumBatchedTokens,
			DefaultText: fmt.Sprintf("%d; without chunked prefill, max-model-len", d.MaxNumBatchedTokens)},
		&ucli.IntFlag{Name: "long-prefill-token-threshold", Usage: "max prefill tokens per request per step; 0 = off"},
		&ucli.BoolFlag{Name: "enable-prefix-caching", Usage: "vLLM's automatic prefix caching: requests reuse the KV blocks of a prompt prefix already computed", Value: d.EnablePrefixCaching},
		&ucli.BoolFlag{Name: "no-enable-prefix-caching", Usage: "turn prefix caching off, as vLLM's flag does: every prompt is computed whole"},
		&ucli.BoolFlag{Name: "enable-chunked-prefill", Usage: "vLLM's chunked prefill: a prompt may be split over steps to fit the token budget", Value: d.EnableChunkedPrefill},
		&ucli.BoolFlag{Name: "no-enable-chunked-prefill", Usage: "turn chunked prefill off, as vLLM's flag does: a prompt is scheduled whole or waits (max-num-batched-tokens must reach max-model-len)"},
		&ucli.StringFlag{Name: "latency-model", Usage: "physics (a roofline with a knee whose coefficients are shares of the GPU's peaks), trained-physics (BLIS's), roofline (BLIS's analytic) or blackbox (linear)", Value: d.LatencyModel},
		&ucli.StringFlag{Name: "vllm-version", Usage: "the vLLM release the deployment models; decides asynchronous scheduling",
			DefaultText: deploy.DefaultVLLMVersion + ", or " + deploy.BLISVLLMVersion + " with BLIS's latency models"},
		&ucli.BoolFlag{Name: "async-scheduling", Usage: "vLLM's asynchronous scheduling: a step's batch is formed while the step before runs (--async-scheduling=false turns it off)",
			DefaultText: "on from vLLM " + deploy.AsyncSchedulingSince},
		&ucli.StringFlag{Name: "alpha-coeffs", Usage: "comma-separated α coefficients (with --beta-coeffs)"},
		&ucli.StringFlag{Name: "beta-coeffs", Usage: "comma-separated β coefficients (with --alpha-coeffs)"},
		&ucli.StringFlag{Name: "scheduler", Usage: "wait-queue order: fcfs, priority-fcfs, sjf", Value: d.Scheduler},
		&ucli.StringFlag{Name: "preemption-policy", Usage: "victim: fcfs (tail of the batch) or priority", Value: d.PreemptionPolicy},
		&ucli.StringFlag{Name: "preempt-mode", Usage: "recompute (vLLM) or reset (BLIS)", Value: d.PreemptMode},
		&ucli.StringFlag{Name: "priority-policy", Usage: "slo-class, constant or slo-aging", Value: d.PriorityPolicy},
		&ucli.Float64Flag{Name: "priority-age-weight", Usage: "slo-aging weight per second of age", Value: d.PriorityAgeWeight},
		&ucli.IntFlag{Name: "kv-cpu-blocks", Usage: "CPU KV tier capacity in blocks; 0 = off"},
		&ucli.Float64Flag{Name: "kv-cpu-bandwidth", Usage: "CPU tier reload bandwidth, tokens/µs", DefaultText: "100"},
		&ucli.Int64Flag{Name: "kv-cpu-base-latency-us", Usage: "CPU tier reload latency per block, µs"},
		&ucli.StringFlag{Name: "batching", Usage: "batch formation: vllm, vllm-v0, sarathi, orca, faster-transformer or lightllm", Value: d.Batching},
		&ucli.IntFlag{Name: "chunk-size", Usage: "sarathi: chunk budget in tokens per step", Value: d.ChunkSize},
		&ucli.IntFlag{Name: "pipeline-parallel", Usage: "pipeline stages per instance (micro-batches in flight)", Value: d.PipelineParallel},
		&ucli.Float64Flag{Name: "pp-interconnect-bandwidth", Usage: "pipeline parallelism: activation bandwidth between stages, GB/s", Value: d.PPInterconnectBandwidth},
		&ucli.StringFlag{Name: "admission-policy", Usage: "cluster admission: always-admit, token-bucket or reject-all", Value: d.AdmissionPolicy},
		&ucli.Float64Flag{Name: "token-bucket-capacity", Usage: "token-bucket admission: capacity in prompt tokens", Value: d.TokenBucketCapacity},
		&ucli.Float64Flag{Name: "token-bucket-refill", Usage: "token-bucket admission: refill in prompt tokens per second", Value: d.TokenBucketRefill},
		&ucli.DurationFlag{Name: "admission-latency", Usage: "delay from arrival to the admission decision, e.g. 200us"},
		&ucli.DurationFlag{Name: "routing-latency", Usage: "delay from the routing decision to the instance"},
		&ucli.StringFlag{Name: "routing-policy", Usage: "round-robin, random, least-loaded, least-outstanding, always-busiest or weighted", Value: d.RoutingPolicy},
		&ucli.StringFlag{Name: "routing-scorers", Usage: "weighted routing: name:weight,... of prefix-affinity, precise-prefix-cache, queue-depth, kv-utilization, load-balance", Value: d.RoutingScorers},
		&ucli.DurationFlag{Name: "snapshot-refresh-interval", Usage: "age after which routing re-reads queue depth, batch size and KV use (0 = live)", Value: d.SnapshotRefreshInterval},
		&ucli.DurationFlag{Name: "cache-signal-delay", Usage: "refresh interval of the instances' prefix indexes seen by precise-prefix-cache (0 = live)", Value: d.CacheSignalDelay},
		&ucli.IntFlag{Name: "prefill-instances", Usage: "P/D: instances in the prefill pool (the first ones)"},
		&ucli.IntFlag{Name: "decode-instances", Usage: "P/D: instances in the decode pool"},
		&ucli.StringFlag{Name: "pd-decider", Usage: "P/D: which requests disaggregate: never, always or prefix-threshold", Value: d.PDDecider},
		&ucli.IntFlag{Name: "pd-prefix-threshold", Usage: "P/D prefix-threshold: disaggregate when uncached prompt tokens exceed this", Value: d.PDPrefixThreshold},
		&ucli.Float64Flag{Name: "pd-transfer-bandwidth", Usage: "P/D: KV transfer bandwidth, GB/s", Value: d.PDTransferBandwidth},
		&ucli.DurationFlag{Name: "pd-transfer-base-latency", Usage: "P/D: fixed latency of a KV transfer", Value: d.PDTransferBaseLatency},
		&ucli.BoolFlag{Name: "pd-transfer-contention", Usage: "P/D: concurrent KV transfers share the bandwidth"},
	}, ListFlags()...)
}

// DecisionFlags are run's and replay's flags for the routing-decision log.
func DecisionFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "trace-level", Value: "none", Usage: "none, or decisions: write every routing decision with its scores (needs --decisions-out)"},
		&ucli.StringFlag{Name: "decisions-out", Usage: "file for --trace-level decisions (JSON lines)"},
	}
}

// OpenDecisions opens the --decisions-out file when --trace-level
// decisions asks for it (nil when not), after checking the two flags agree.
func OpenDecisions(c *ucli.Context) (*Output, error) {
	level, path := c.String("trace-level"), c.String("decisions-out")
	switch level {
	case "none":
		if path != "" {
			return nil, Usagef("--decisions-out needs --trace-level decisions")
		}
		return nil, nil
	case "decisions":
	default:
		return nil, Usagef("--trace-level %q: want none or decisions", level)
	}
	if path == "" || path == "-" {
		return nil, Usagef("--trace-level decisions needs --decisions-out FILE (stdout carries the results)")
	}
	return CreateOutput(path, nil)
}

// ResolvedDeployment is Deployment, resolved (deploy.Resolve): what the
// commands that simulate (run, replay) hand to the simulator.
func ResolvedDeployment(c *ucli.Context) (*deploy.Resolved, error) {
	cfg, err := Deployment(c)
	if err != nil {
		return nil, err
	}
	return deploy.Resolve(cfg)
}

// Deployment reads --deployment, then applies the explicitly given flags.
func Deployment(c *ucli.Context) (deploy.Config, error) {
	return DeploymentOn(c, deploy.Default())
}

// DeploymentOn is Deployment on top of base instead of the defaults (a
// trace's deployment, see TraceDeployment).
func DeploymentOn(c *ucli.Context, base deploy.Config) (deploy.Config, error) {
	cfg := base
	given := newFlagsSet(c)
	if p := c.String("deployment"); p != "" {
		var err error
		if cfg, err = deploy.Load(p, cfg); err != nil {
			return cfg, err
		}
	}
	str := func(name string, dst *string) {
		if given.isSet(name) {
			*dst = c.String(name)
		}
	}
	num := func(name string, dst *int) {
		if given.isSet(name) {
			*dst = c.Int(name)
		}
	}
	flt := func(name string, dst *float64) {
		if given.isSet(name) {
			*dst = c.Float64(name)
		}
	}
	str("model", &cfg.Model)
	str("gpu", &cfg.GPU)
	str("hardware-file", &cfg.HardwareFile)
	num("tensor-parallel", &cfg.TP)
	num("data-parallel", &cfg.DataParallel)
	num("num-instances", &cfg.Instances)
	num("total-kv-blocks", &cfg.TotalKVBlocks)
	flt("gpu-memory-utilization", &cfg.GPUMemoryUtilization)
	num("block-size", &cfg.BlockSize)
	num("max-model-len", &cfg.MaxModelLen)
	num("max-num-seqs", &cfg.MaxNumSeqs)
	num("max-num-batched-tokens", &cfg.MaxNumBatchedTokens)
	num("long-prefill-token-threshold", &cfg.LongPrefillTokenThreshold)
	for _, s := range []struct {
		name string
		dst  *bool
	}{{"prefix-caching", &cfg.EnablePrefixCaching}, {"chunked-prefill", &cfg.EnableChunkedPrefill}} {
		on, off := "enable-"+s.name, "no-enable-"+s.name
		if given.isSet(on) && given.isSet(off) && c.Bool(on) == c.Bool(off) {
			return cfg, Usagef("--%s and --%s contradict each other: give one", on, off)
		}
		if given.isSet(on) {
			*s.dst = c.Bool(on)
		}
		if given.isSet(off) {
			*s.dst = !c.Bool(off)
		}
	}
	str("latency-model", &cfg.LatencyModel)
	str("vllm-version", &cfg.VLLMVersion)
	if given.isSet("async-scheduling") {
		v := c.Bool("async-scheduling")
		cfg.AsyncScheduling = &v
	}
	str("scheduler", &cfg.Scheduler)
	str("preemption-policy", &cfg.PreemptionPolicy)
	str("preempt-mode", &cfg.PreemptMode)
	str("priority-policy", &cfg.PriorityPolicy)
	flt("priority-age-weight", &cfg.PriorityAgeWeight)
	num("kv-cpu-blocks", &cfg.KVCPUBlocks)
	flt("kv-cpu-bandwidth", &cfg.KVCPUBandwidth)
	if given.isSet("kv-cpu-base-latency-us") {
		cfg.KVCPUBaseLatencyUs = c.Int64("kv-cpu-base-latency-us")
	}
	dur := func(name string, dst *time.Duration) {
		if given.isSet(name) {
			*dst = c.Duration(name)
		}
	}
	str("batching", &cfg.Batching)
	num("chunk-size", &cfg.ChunkSize)
	num("pipeline-parallel", &cfg.PipelineParallel)
	flt("pp-interconnect-bandwidth", &cfg.PPInterconnectBandwidth)
	str("admission-policy", &cfg.AdmissionPolicy)
	flt("token-bucket-capacity", &cfg.TokenBucketCapacity)
	flt("token-bucket-refill", &cfg.TokenBucketRefill)
	dur("admission-latency", &cfg.AdmissionLatency)
	dur("routing-latency", &cfg.RoutingLatency)
	str("routing-policy", &cfg.RoutingPolicy)
	str("routing-scorers", &cfg.RoutingScorers)
	dur("snapshot-refresh-interval", &cfg.SnapshotRefreshInterval)
	dur("cache-signal-delay", &cfg.CacheSignalDelay)
	num("prefill-instances", &cfg.PrefillInstances)
	num("decode-instances", &cfg.DecodeInstances)
	str("pd-decider", &cfg.PDDecider)
	num("pd-prefix-threshold", &cfg.PDPrefixThreshold)
	flt("pd-transfer-bandwidth", &cfg.PDTransferBandwidth)
	dur("pd-transfer-base-latency", &cfg.PDTransferBaseLatency)
	if given.isSet("pd-transfer-contention") {
		cfg.PDTransferContention = c.Bool("pd-transfer-contention")
	}
	for _, f := range []struct {
		name string
		dst  *[]float64
	}{{"alpha-coeffs", &cfg.AlphaCoeffs}, {"beta-coeffs", &cfg.BetaCoeffs}} {
		if !given.isSet(f.name) {
			continue
		}
		v, err := parseFloats(c.String(f.name))
		if err != nil {
			return cfg, Usagef("--%s: %v", f.name, err)
		}
		*f.dst = v
	}
	return cfg, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for i, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return nil, fmt.Errorf("value %d %q is not a number", i+1, part)
		}
		out = append(out, v)
	}
	return out, nil
}
