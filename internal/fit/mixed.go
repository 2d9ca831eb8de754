package fit

import (
	"errors"
	"fmt"

	"servesim/internal/des/latency"
	"servesim/internal/nnls"
)

// KernelProfile is one deployment's kernel profile with the physics model
// whose raw quantities price its rows.
type KernelProfile struct {
	Model   *latency.Physics
	Config  *latency.ModelConfig
	Profile *Profile
	DP      int // data-parallel ranks (see [Kernels]); 0 means 1
}

// MixedPenalty fits the mixed-batch factors (mixed_kv and mixed_kv_wide)
// to the mixed attention rows of several kernel profiles together, with
// the attention kernels' own floors (per layer and per scheduled request,
// which a step's floor holds among its other kernels') and every other
// coefficient held at beta's: the factors a default needs beside those
// coefficients for the GPUs and attention backend the profiles measured.
// Rows weigh by their error relative to their step, as in [Kernels].
func MixedPenalty(profiles []KernelProfile, beta []float64) (mixed, wide float64, err error) {
	if len(beta) != latency.PhNumBetas {
		return 0, 0, fmt.Errorf("fit: mixed penalty: %d coefficients, want %d", len(beta), latency.PhNumBetas)
	}
	l, err := nnls.New(4)
	if err != nil {
		return 0, 0, err
	}
	kv := beta[latency.PhKVEff]
	n := 0
	for _, kp := range profiles {
		for _, r := range attentionRows(kp.Model, kp.Config, kp.Profile, max(kp.DP, 1)) {
			if r.q.MixedKV == 0 {
				continue
			}
			held := r.q.Attn/beta[latency.PhAttnEff] + r.q.KV/kv + r.q.PrefillSeq*beta[latency.PhPrefillSeqUs]
			l.Add([]float64{r.q.MixedKV / kv, r.q.MixedKVWide / kv, r.q.Layers, r.n}, r.y-held, 1/(r.scale*r.scale))
			n++
		}
	}
	if n < 2 {
		return 0, 0, errors.New("fit: mixed penalty: the profiles hold fewer than 2 mixed attention rows")
	}
	theta, err := l.Solve(nnls.Options{Ridge: 1e-9})
	if err != nil {
		return 0, 0, fmt.Errorf("fit: mixed penalty: %w", err)
	}
	return theta[0], theta[1], nil
}
