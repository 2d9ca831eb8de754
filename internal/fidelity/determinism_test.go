package fidelity

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"servesim/internal/des/latency"
	"servesim/internal/fit"
)

// noisyProfile is a kernel profile with every dense op of a Llama layer at
// irregular times, so that sums over the ops depend on their order in the
// last bits.
func noisyProfile() *fit.Profile {
	rng := rand.New(rand.NewPCG(11, 12))
	p := &fit.Profile{Dense: map[string][]fit.Point{}, PerSequence: map[string][]fit.Point{}}
	ops := []string{"qkv_proj", "o_proj", "gate_up_proj", "down_proj", "act_fn", "layernorm", "rotary_emb", "qk_norm", "embedding", "final_layernorm"}
	for _, tok := range []float64{1, 16, 64, 256, 1024, 2048} {
		for i, op := range ops {
			p.Dense[op] = append(p.Dense[op], fit.Point{X: tok, Us: (1 + float64(i)) * (3 + tok/97) * (1 + 0.1*rng.Float64())})
		}
		p.PerSequence["lm_head"] = append(p.PerSequence["lm_head"], fit.Point{X: tok, Us: 40 + tok/7 + rng.Float64()})
		p.PerSequence["sampler"] = append(p.PerSequence["sampler"], fit.Point{X: tok, Us: 3 + tok/300 + rng.Float64()})
	}
	for _, chunk := range []int{0, 64, 512, 2048} {
		for _, n := range []int{0, 8, 64} {
			if chunk == 0 && n == 0 {
				continue
			}
			for _, kv := range []int{256, 2048} {
				p.Attention = append(p.Attention, fit.AttentionRow{Chunk: chunk, KVPrefill: kv, NDecode: n, KVDecode: kv,
					Us: 5 + float64(chunk)*float64(kv)/4e4 + float64(n*kv)/3e3 + rng.Float64()})
			}
		}
	}
	return p
}

// fitDeployment runs the whole fit on a small synthetic run (kernel fit on
// the profile, two universal iterations) and returns the deployment YAML.
func fitDeployment(t *testing.T, c *Case, k *latency.Physics) []byte {
	t.Helper()
	kf, err := fit.Kernels(k, c.Model, noisyProfile(), 1)
	if err != nil {
		t.Fatal(err)
	}
	cc := newCase(c.Run, c.Deploy, c.Model, kf)
	res, err := FitUniversal(context.Background(), []*Case{cc}, FitOptions{Start: Universal{HostStepUs: 300}, Iterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cc.Deployment(res.Universal)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteDeployment(&b, cfg, []string{"determinism"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFitDeterministic: fitting the same inputs again gives the same bytes
// (the committed deployment files depend on it). Go randomises map order on
// every range, so a sum over a map would differ in its last bits between
// the fits.
func TestFitDeterministic(t *testing.T) {
	c := syntheticCase(t, Universal{HostStepUs: 700, HostSeqUs: 9})
	k, _, _ := testModel(t, 1)
	first := fitDeployment(t, c, k)
	for i := range 4 {
		if again := fitDeployment(t, c, k); !bytes.Equal(again, first) {
			t.Fatalf("fit %d differs from the first:\n%s\nfirst:\n%s", i+2, again, first)
		}
	}
}
