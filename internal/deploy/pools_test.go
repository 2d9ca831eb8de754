package deploy

import (
	"reflect"
	"strings"
	"testing"

	"servesim/internal/des/cluster"
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
	"servesim/internal/des/sim"
	"servesim/internal/exitcode"
)

func pdBase() Config {
	c := Default()
	c.PrefillInstances, c.DecodeInstances, c.PDDecider = 1, 2, "always"
	return c
}

// TestPoolOverrideZeroIsNoOp (INV-P2-1): a deployment whose pool overrides
// are empty resolves every instance as the base, and an override over a
// base gives the base back.
func TestPoolOverrideZeroIsNoOp(t *testing.T) {
	base := pdBase()
	if got := (PoolOverride{}).Over(base); !reflect.DeepEqual(got, base) {
		t.Fatalf("empty override changed the base:\n got %+v\nwant %+v", got, base)
	}
	res, err := Resolve(base)
	if err != nil {
		t.Fatal(err)
	}
	for i, ic := range res.ClusterConfig.Instances {
		want := res.Instance
		want.ID = i
		if !reflect.DeepEqual(ic.KV, want.KV) || ic.MaxNumSeqs != want.MaxNumSeqs || ic.MaxNumBatchedTokens != want.MaxNumBatchedTokens {
			t.Errorf("instance %d: %+v, want the base's %+v", i, ic.KV, want.KV)
		}
	}
}

// TestPoolOverridesPerField (INV-P2-1): each pool takes its own GPU, TP,
// batching limits, KV blocks and latency model; the fields it does not
// override stay the base's; the base deployment (given and resolved) is
// never changed; the instances of a cluster built from it hold each its
// pool's KV capacity.
func TestPoolOverridesPerField(t *testing.T) {
	given := pdBase()
	given.PrefillGPU, given.PrefillMaxNumSeqs = "A100-80", 32
	given.DecodeTP, given.DecodeTotalKVBlocks, given.DecodeLatencyModel = 2, 7000, "roofline"
	before := given
	res, err := Resolve(given)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(given, before) {
		t.Fatal("Resolve changed the deployment it was given")
	}
	plain, err := Resolve(Default())
	if err != nil {
		t.Fatal(err)
	}
	if res.GPU != "H100" || res.TP != 1 || res.TotalKVBlocks != plain.TotalKVBlocks || res.MaxNumSeqs != plain.MaxNumSeqs {
		t.Errorf("base resolved as %s TP %d, %d blocks, %d seqs; want the plain deployment's H100 TP 1, %d blocks, %d seqs",
			res.GPU, res.TP, res.TotalKVBlocks, res.MaxNumSeqs, plain.TotalKVBlocks, plain.MaxNumSeqs)
	}
	a100 := Default()
	a100.GPU = "A100-80"
	onA100, err := Resolve(a100)
	if err != nil {
		t.Fatal(err)
	}
	pre, dec := res.PoolConfig("prefill"), res.PoolConfig("decode")
	if pre.GPU != "A100-80" || pre.TP != 1 || pre.MaxNumSeqs != 32 || pre.TotalKVBlocks != onA100.TotalKVBlocks || pre.LatencyModel != "physics" {
		t.Errorf("prefill pool %s TP %d, %d seqs, %d blocks, %s; want A100-80 TP 1, 32 seqs, %d blocks, physics",
			pre.GPU, pre.TP, pre.MaxNumSeqs, pre.TotalKVBlocks, pre.LatencyModel, onA100.TotalKVBlocks)
	}
	// The decode pool's default batch limit is its own latency model's
	// (BLIS's models: vLLM's base default).
	if dec.GPU != "H100" || dec.TP != 2 || dec.TotalKVBlocks != 7000 || dec.LatencyModel != "roofline" || dec.MaxNumSeqs != baseSeqs {
		t.Errorf("decode pool %s TP %d, %d blocks, %s, %d seqs; want H100 TP 2, 7000 blocks, roofline, %d seqs",
			dec.GPU, dec.TP, dec.TotalKVBlocks, dec.LatencyModel, dec.MaxNumSeqs, baseSeqs)
	}
	cc := res.ClusterConfig
	wantBlocks := []int{onA100.TotalKVBlocks, 7000, 7000}
	wantSeqs := []int{32, baseSeqs, baseSeqs}
	for i, ic := range cc.Instances {
		if ic.ID != i || ic.KV.Blocks != wantBlocks[i] || ic.MaxNumSeqs != wantSeqs[i] {
			t.Errorf("instance %d: id %d, %d blocks, %d seqs; want %d blocks, %d seqs", i, ic.ID, ic.KV.Blocks, ic.MaxNumSeqs, wantBlocks[i], wantSeqs[i])
		}
	}
	cc.Seed = 1
	c, err := cluster.New(cc, &sim.SliceSource{}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range c.Instances() {
		if got := in.KV().FreeBlocks(); got != wantBlocks[i] {
			t.Errorf("instance %d has %d free KV blocks before the run, want %d", i, got, wantBlocks[i])
		}
	}
	if d := res.Describe(); !strings.Contains(d, "prefill pool: 1 × A100-80 (TP 1)") || !strings.Contains(d, "decode pool: 2 × H100 (TP 2), 7000 KV blocks") {
		t.Errorf("Describe: %s", d)
	}
}

// TestPoolOverrideFile: a deployment file sets pool overrides by key; an
// invalid value, and an override without the P/D split, are refused at
// their place in the file with exit code 2.
func TestPoolOverrideFile(t *testing.T) {
	cfg, err := Decode("dep.yaml", []byte("prefill_instances: 1\ndecode_instances: 1\nprefill_gpu: A100-80\ndecode_max_num_seqs: 64\n"), Default())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PrefillGPU != "A100-80" || cfg.DecodeMaxNumSeqs != 64 || cfg.GPU != "H100" {
		t.Errorf("decoded %+v (gpu %s)", cfg.Pools, cfg.GPU)
	}
	for _, tc := range []struct{ doc, want string }{
		{"prefill_instances: 1\ndecode_instances: 1\ndecode_tensor_parallel: -2\n", "dep.yaml:3:25: key decode_tensor_parallel: -2 must not be negative"},
		{"prefill_instances: 1\ndecode_instances: 1\nprefill_latency_model: fast\n", "dep.yaml:3:24: key prefill_latency_model: \"fast\""},
		{"decode_gpu: A100-80\n", "dep.yaml:1:13: decode pool overrides (gpu A100-80) need prefill-instances and decode-instances"},
	} {
		_, err := Decode("dep.yaml", []byte(tc.doc), Default())
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%q: got %v (exit %d), want %q…", tc.doc, err, exitcode.Of(err), tc.want)
		}
	}
	bad := pdBase()
	bad.DecodeGPU = "Z80"
	if _, err := Resolve(bad); err == nil || !strings.Contains(err.Error(), "decode pool (gpu Z80)") || exitcode.Of(err) != exitcode.Usage {
		t.Errorf("unknown pool GPU: %v", err)
	}
}

// TestPoolsMemoryBound: the memory a deployment of pools needs counts each
// pool's own KV size, and one that fits no machine is refused (exit 2).
func TestPoolsMemoryBound(t *testing.T) {
	c := pdBase()
	c.TotalKVBlocks, c.PrefillTotalKVBlocks, c.DecodeTotalKVBlocks = 1000, 3000, 5000
	res, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Footprint(), footprint(1, 3000)+footprint(2, 5000); got != want {
		t.Errorf("footprint %g, want %g", got, want)
	}
	avail := uint64(res.Footprint() / memoryShare * 0.9)
	if err := res.checkPoolsMemory(avail, true); err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "prefill and decode pools need") {
		t.Errorf("over the machine: %v", err)
	}
	if err := res.checkPoolsMemory(avail*2, true); err != nil {
		t.Errorf("within the machine: %v", err)
	}
}

// TestEncodePoolGPU: the encoders run on their own GPU when given one (a
// pass of 1,000 media tokens is slower on an A100-80 than on the base
// H100), count in the deployment's GPUs, and need an encode pool.
func TestEncodePoolGPU(t *testing.T) {
	c := Default()
	c.Instances, c.EncodeInstances = 2, 2
	base, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	c.EncodeGPU = "A100-80"
	own, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	step := &latency.Step{Prefill: []latency.PrefillWork{{NewTokens: 1000}}}
	onH100, onA100 := base.ClusterConfig.Encode.Latency.StepTime(step), own.ClusterConfig.Encode.Latency.StepTime(step)
	if !(onA100 > onH100) || own.Instance.Latency.StepTime(step) != onH100 {
		t.Errorf("a 1000-token pass: %d µs on the A100-80 encoders, %d on H100; the instances' %d", onA100, onH100, own.Instance.Latency.StepTime(step))
	}
	if g := c.GPUs(); g != 4 || !strings.Contains(own.Describe(), "2 encode instances on 1 × A100-80") {
		t.Errorf("%d GPUs, want 4; %s", g, own.Describe())
	}
	c.EncodeInstances = 0
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "encode-gpu and encode-tensor-parallel need encode-instances") {
		t.Errorf("encode GPU without encoders: %v", err)
	}
}
