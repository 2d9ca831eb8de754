package deploy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"servesim/internal/tracev2"
)

// TestKeysRoundTrip: every key of a deployment travels through the header's
// map and back unchanged, lists, maps and durations included.
func TestKeysRoundTrip(t *testing.T) {
	c := Default()
	c.AlphaCoeffs, c.BetaCoeffs = []float64{1, 2.5, 3}, []float64{4, 5, 6}
	c.ClassPriorities = map[string]int{"critical": 4}
	c.PrefillInstances, c.DecodeInstances, c.PDDecider = 1, 2, "always"
	c.StepTimeSigma, c.KVOffloadThreshold = 0.05, 0.9
	c.EncodeInstances, c.EncodeMaxTokens, c.EncodeGPU, c.EncodeTP = 2, 4096, "L40S", 1
	c.Pools = Pools{PrefillGPU: "H100", PrefillTP: 2, PrefillMaxNumSeqs: 64, PrefillMaxNumBatchedTokens: 4096,
		PrefillTotalKVBlocks: 9000, PrefillLatencyModel: "roofline", DecodeGPU: "A100-80", DecodeTP: 1,
		DecodeMaxNumSeqs: 512, DecodeMaxNumBatchedTokens: 2048, DecodeTotalKVBlocks: 7000, DecodeLatencyModel: "physics"}
	gatewayOff(&c)
	c.FleetFile = "fleet.yaml"
	keys, err := c.Keys()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(keys), len(KeyNames()); got != want {
		t.Errorf("%d keys, want every one of the %d names", got, want)
	}
	if keys["snapshot_refresh_interval"] != "50ms" || keys["pd_transfer_base_latency"] != "50µs" {
		t.Errorf("durations: %v %v", keys["snapshot_refresh_interval"], keys["pd_transfer_base_latency"])
	}
	back, unknown, err := FromKeys("t.yaml: x_ext.deployment", keys, Config{})
	if err != nil || len(unknown) != 0 {
		t.Fatal(err, unknown)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", back, c)
	}
	// An empty list is no list: the latency model takes its own coefficients.
	keys["alpha_coeffs"], keys["beta_coeffs"] = []any{}, []any{}
	delete(keys, "fleet_file") // a file this test does not write
	back, _, _ = FromKeys("t", keys, Default())
	if back.AlphaCoeffs != nil || back.BetaCoeffs != nil {
		t.Errorf("empty lists: %v %v, want nil", back.AlphaCoeffs, back.BetaCoeffs)
	}
	back.InFlightEviction = false // not with P/D
	back.FlowControl = false      // the encode pool does not work with flow control
	if _, err := Resolve(back); err != nil {
		t.Errorf("Resolve after empty coefficient lists: %v", err)
	}
}

func TestFromKeysErrorsAndUnknownKeys(t *testing.T) {
	_, unknown, err := FromKeys("t", map[string]any{"max_num_seqs": 8, "speculative_tokens": 4, "kv_connector": "lmcache"}, Default())
	if err != nil || !reflect.DeepEqual(unknown, []string{"kv_connector", "speculative_tokens"}) {
		t.Errorf("unknown keys: %v, %v", unknown, err)
	}
	_, _, err = FromKeys("cap.yaml: x_ext.deployment", map[string]any{"max_num_seqs": "many"}, Default())
	if err == nil || err.Error() != `cap.yaml: x_ext.deployment.max_num_seqs: "many" is not an integer` {
		t.Errorf("a bad value: %v", err)
	}
}

// TestRecordAndFromTrace: what the simulator derived is marked so; a trace's
// deployment reads back onto the defaults; an unknown model is set aside.
func TestRecordAndFromTrace(t *testing.T) {
	_, res, h := recorded(t)
	for _, k := range []string{"total_kv_blocks", "max_model_len", "vllm_version", "async_scheduling", "max_num_batched_tokens"} {
		if h.XExt.Sources["deployment."+k] != tracev2.SourceDerived {
			t.Errorf("sources %v: %s is not derived", h.XExt.Sources, k)
		}
	}
	if len(h.XExt.Sources) != 5 {
		t.Errorf("sources %v, want the five derived keys", h.XExt.Sources)
	}
	if h.Server.MaxNumSeqs != 32 || h.Server.MaxModelLen != int64(res.MaxModelLen) || h.Server.Model != "qwen3-14b" {
		t.Errorf("server keys %+v", h.Server)
	}
	td, err := FromTrace("t.yaml", h, Default())
	if err != nil {
		t.Fatal(err)
	}
	if td.Config.MaxNumSeqs != 32 || td.Config.TotalKVBlocks != res.TotalKVBlocks || !td.Derived["total_kv_blocks"] || td.Derived["max_num_seqs"] {
		t.Errorf("FromTrace: %+v derived %v", td.Config, td.Derived)
	}

	blis := &tracev2.Header{Server: &tracev2.Server{Model: "acme/chat-8b", TensorParallel: 2, MaxNumSeqs: 8}}
	td, err = FromTrace("b.yaml", blis, Default())
	if err != nil {
		t.Fatal(err)
	}
	if td.UnknownModel != "acme/chat-8b" || td.Config.Model != "qwen3-14b" || td.Config.TP != 2 || td.Config.MaxNumSeqs != 8 {
		t.Errorf("BLIS header: %+v unknown model %q", td.Config, td.UnknownModel)
	}
	if _, ok := td.Keys["model"]; ok {
		t.Error("the unknown model is still among the trace's keys")
	}
	x := &tracev2.Header{XExt: &tracev2.Ext{Deployment: map[string]any{"max_num_seqs": 4, "speculative_tokens": 4, "enable_prefix_caching": false}}}
	td, err = FromTrace("x.yaml", x, Default())
	if err != nil || len(td.Warnings) != 1 || !strings.Contains(td.Warnings[0], "x.yaml: x_ext.deployment.speculative_tokens is not a deployment key this version knows; ignored") {
		t.Errorf("a key from a newer version: %v %v", td.Warnings, err)
	}
	if td.Config.EnablePrefixCaching || td.Config.MaxNumSeqs != 4 {
		t.Errorf("the trace's known keys were not applied: %+v", td.Config)
	}
	if !SameModel("Qwen/Qwen3-14B", "qwen3-14b") || SameModel("qwen3-14b", "llama-3.1-8b-instruct") {
		t.Error("SameModel")
	}
}

// recorded is the default deployment with 32 sequences, resolved, and the
// trace header that records it.
func recorded(t *testing.T) (Config, *Resolved, *tracev2.Header) {
	t.Helper()
	given := Default()
	given.MaxNumSeqs = 32
	res, err := Resolve(given)
	if err != nil {
		t.Fatal(err)
	}
	h := tracev2.DefaultHeader()
	if err := Record(h, given, res); err != nil {
		t.Fatal(err)
	}
	return given, res, h
}

// TestStepTimeSigmaKey: σ is a key like the others when set (a fitted
// file's), left out of the header at zero so that a deployment without it
// records what it always did, and bounded to [0, 0.5] at its place.
func TestStepTimeSigmaKey(t *testing.T) {
	keys, _ := Default().Keys()
	if _, ok := keys["step_time_sigma"]; ok {
		t.Errorf("step_time_sigma at 0 is in the keys: %v", keys["step_time_sigma"])
	}
	c, err := Decode("fitted.yaml", []byte("step_time_sigma: 0.031\n"), Default())
	if err != nil || c.StepTimeSigma != 0.031 {
		t.Fatalf("decode: σ %v, %v", c.StepTimeSigma, err)
	}
	if keys, _ = c.Keys(); keys["step_time_sigma"] != 0.031 {
		t.Errorf("keys: step_time_sigma %v, want 0.031", keys["step_time_sigma"])
	}
	_, err = Decode("fitted.yaml", []byte("model: qwen3-14b\nstep_time_sigma: 0.7\n"), Default())
	if err == nil || !strings.Contains(err.Error(), "fitted.yaml:2:") || !strings.Contains(err.Error(), "outside [0, 0.5]") {
		t.Errorf("σ 0.7: %v, want an error at fitted.yaml:2", err)
	}
}

// gatewayOff sets every gateway key to a value other than its default, so
// that Keys lists them all (they are left out at their defaults).
func gatewayOff(c *Config) {
	g := &c.Cluster
	g.TierShedThreshold, g.TierShedMinPriority, g.QueueDepthThreshold, g.KVCacheUtilThreshold = 2, 0, 7.5, 0.9
	g.TenantBudgets, g.FlowControl, g.SaturationDetector, g.GatewayMaxConcurrency = "a:0.5", true, "concurrency", 32
	g.DispatchOrder, g.FairnessPolicy, g.PerBandCapacity, g.MaxGatewayQueueDepth = "slo-deadline", "round-robin", 10, 20
	g.QueueShedding, g.DispatchTickInterval, g.GatewayTTL, g.InFlightEviction = true, 2*time.Millisecond, time.Second, true
	g.SLOTargets = "critical=100ms"
}
