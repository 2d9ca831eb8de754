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

const mixedFleet = `node_pools:
  - {name: h100, gpu_type: H100, gpus_per_node: 1, initial_nodes: 1, max_nodes: 2, cost_per_hour: 4}
  - {name: a100, gpu_type: A100-80, gpus_per_node: 2, tensor_parallel: 2, initial_nodes: 1, max_nodes: 2, cost_per_hour: 3}
hw_config_by_gpu:
  A100-80: {max_num_seqs: 64}
`

// firstTTFT runs one 512-token request on each instance of cc (round
// robin) and returns the time to first token of each, by instance.
func firstTTFT(t *testing.T, cc cluster.Config) map[int]int64 {
	t.Helper()
	var reqs []*instance.Request
	for i := range len(cc.Instances) {
		p := make([]int32, 512)
		for k := range p {
			p[k] = int32(1000*i + k)
		}
		reqs = append(reqs, &instance.Request{ID: int64(i + 1), Prompt: p, OutputLen: 8})
	}
	cc.Routing = cluster.RoundRobin
	got := map[int]int64{}
	c, err := cluster.New(cc, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) {
		got[res.Instance] = res.FirstTokenUs - res.ArrivalUs
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFleetPoolHardware: each pool's replicas run on the pool's own GPU
// and tensor parallelism, with the per-GPU limits of hw_config_by_gpu,
// resolved as the P/D pools' overrides are: KV blocks, batch limits and
// step times are those of a deployment of that GPU alone, and the base
// deployment is not changed.
func TestFleetPoolHardware(t *testing.T) {
	base := Default()
	base.Instances = 2
	plain, err := Resolve(base)
	if err != nil {
		t.Fatal(err)
	}
	c := base
	c.FleetFile = fleetFile(t, mixedFleet)
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	a100 := Default()
	a100.GPU, a100.TP, a100.MaxNumSeqs = "A100-80", 2, 64
	want, err := Resolve(a100)
	if err != nil {
		t.Fatal(err)
	}
	f := r.ClusterConfig.Fleet
	if f.Pools[0].Instance != nil || f.Pools[0].TP != 1 {
		t.Fatalf("the H100 pool is the base deployment: instance %v TP %d", f.Pools[0].Instance, f.Pools[0].TP)
	}
	p := f.Pools[1]
	if p.Instance == nil || p.TP != 2 {
		t.Fatalf("the A100-80 pool: instance %v TP %d, want its own at TP 2", p.Instance, p.TP)
	}
	if p.Instance.KV != want.Instance.KV || p.Instance.MaxNumSeqs != 64 || p.Instance.MaxNumBatchedTokens != want.MaxNumBatchedTokens ||
		p.Instance.MaxModelLen != want.MaxModelLen {
		t.Fatalf("A100-80 pool: KV %+v seqs %d tokens %d len %d, want KV %+v seqs 64 tokens %d len %d", p.Instance.KV, p.Instance.MaxNumSeqs,
			p.Instance.MaxNumBatchedTokens, p.Instance.MaxModelLen, want.Instance.KV, want.MaxNumBatchedTokens, want.MaxModelLen)
	}
	if p.Instance.KV.Blocks == plain.Instance.KV.Blocks {
		t.Fatalf("A100-80 at TP 2 and H100 at TP 1 both hold %d blocks", p.Instance.KV.Blocks)
	}
	if r.GPU != "H100" || r.TP != 1 || r.Instance.KV != plain.Instance.KV || r.MaxNumSeqs != plain.MaxNumSeqs ||
		!reflect.DeepEqual(r.ClusterConfig.Instances[1].KV, plain.ClusterConfig.Instances[1].KV) {
		t.Fatalf("the base deployment changed: %s TP %d KV %+v seqs %d", r.GPU, r.TP, r.Instance.KV, r.MaxNumSeqs)
	}

	// Run: instance 0 is on the H100 node, instance 1 on the A100 node;
	// each serves its request as a deployment of its GPU alone would.
	got := firstTTFT(t, r.ClusterConfig)
	one := func(d *Resolved) int64 {
		cc := d.ClusterConfig
		cc.Instances = cc.Instances[:1]
		return firstTTFT(t, cc)[0]
	}
	single := Default()
	single.Instances = 2 // a cluster; the run keeps one instance
	h, err := Resolve(single)
	if err != nil {
		t.Fatal(err)
	}
	a100.Instances = 2
	a, err := Resolve(a100)
	if err != nil {
		t.Fatal(err)
	}
	wantH, wantA := one(h), one(a)
	if got[0] != wantH || got[1] != wantA || wantH == wantA {
		t.Fatalf("TTFT by instance %v, want H100 %d µs and A100-80 %d µs", got, wantH, wantA)
	}
	if n := r.ClusterConfig.Fleet.Pools[1].Instance.MaxNumSeqs; n != 64 {
		t.Fatalf("the run changed the pool's configuration: max_num_seqs %d", n)
	}

	// Scaled step times scale the pools' replicas too, in a copy.
	st := &latency.Step{DecodeCount: 100, DecodeContextSum: 100_000}
	before := p.Instance.Latency.StepTime(st)
	s, err := r.ScaleStepTimes(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ClusterConfig.Fleet.Pools[1].Instance.Latency.StepTime(st); got != 2*before || p.Instance.Latency.StepTime(st) != before ||
		r.ClusterConfig.Fleet.Pools[1].Instance != p.Instance {
		t.Fatalf("scaled pool step %d µs, want 2 × %d; the original now %d", got, before, p.Instance.Latency.StepTime(st))
	}
}

func TestFleetPoolHardwareErrors(t *testing.T) {
	pool := "node_pools:\n  - {name: a, gpu_type: H100, gpus_per_node: 2, initial_nodes: 1, max_nodes: 2}\n"
	for _, tc := range []struct{ body, want string }{
		{pool + "hw_config_by_gpu:\n  H100: {max_num_seq: 8}\n", `fleet.yaml:4:10: hw_config_by_gpu.H100: unknown key "max_num_seq" (did you mean "max_num_seqs"?)`},
		{pool + "hw_config_by_gpu:\n  A100-80: {max_num_seqs: 8}\n", `fleet.yaml:4:3: hw_config_by_gpu: "A100-80" is the gpu_type of no node pool`},
		{pool + "hw_config_by_gpu:\n  H100: {total_kv_blocks: -1}\n", `fleet.yaml:4:3: hw_config_by_gpu.H100: max_num_seqs, max_num_batched_tokens and total_kv_blocks must not be negative`},
		{pool + "hw_config_by_gpu:\n  H100: {}\n  H100: {}\n", `fleet.yaml:5:3: hw_config_by_gpu: key "H100" is given twice`},
		{"node_pools:\n  - {name: a, gpu_type: TPU9, gpus_per_node: 1, initial_nodes: 1, max_nodes: 2}\n", `fleet.yaml:2:25: node_pools[0]: replicas of gpu TPU9: `},
		{"node_pools:\n  - {name: a, gpu_type: H100, gpus_per_node: 1, tensor_parallel: -2, initial_nodes: 1, max_nodes: 2}\n", `fleet.yaml:2:66: node_pools[0].tensor_parallel: -2 must not be negative`},
	} {
		c := Default()
		c.FleetFile = fleetFile(t, tc.body)
		_, err := Resolve(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%q: err %v (exit %d), want %q, exit 2", tc.body, err, exitcode.Of(err), tc.want)
		}
	}
}
