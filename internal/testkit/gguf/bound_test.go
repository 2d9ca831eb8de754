package gguf

import (
	"fmt"
	"math"
	"testing"
)

// frob is the Frobenius norm of a tensor, an upper bound of its spectral norm.
func frob(t Tensor) float64 {
	s := 0.0
	for _, v := range t.Data {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// rows splits a matrix into its rows (ne0 values each).
func rows(t Tensor) [][]float32 {
	n := int(t.Dims[0])
	var out [][]float32
	for i := 0; i+n <= len(t.Data); i += n {
		out = append(out, t.Data[i:i+n])
	}
	return out
}

func norm(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// logitGap returns, for any input sequence, a lower bound on (the smallest
// suppressed-token logit gap) = min over allowed a, suppressed s of
// logit(a) − logit(s), from the weights alone.
//
// With all norm weights 1, an RMS-normalized vector x̂ has ‖x̂‖ ≤ √E. A block
// adds attn = Wo·Σαᵢ Wv x̂ᵢ (a convex combination, whatever the rotary
// embedding and attention scores do), so ‖attn‖ ≤ ‖Wo‖F‖Wv‖F√E, and
// ffn = Wd (silu(Wg x̂) ⊙ Wu x̂) with |silu(a)| ≤ |a|, so
// ‖ffn‖ ≤ ‖Wd‖F · max-row-norm(Wg)√E · ‖Wu‖F√E. Dimension 0 is untouched
// (rows 0 of Wo and Wd are zero), so the final hidden state is (c, r) with
// ‖r‖ ≤ R = max embedding rest norm + Σ(attn + ffn bounds), and its
// normalization has n0 = c√E/√(c²+‖r‖²+E·eps) ≥ c√E/√(c²+R²+E·eps) and a
// rest of norm ≤ √E. An allowed row (0, w) gives |logit| ≤ ‖w‖√E; a
// suppressed row (−S, 0…) gives −S·n0.
func logitGap(t *testing.T, f *File) (gap, n0 float64) {
	t.Helper()
	get := func(name string) Tensor {
		tt, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("tensor %s missing", name)
		}
		return tt
	}
	for _, name := range []string{"output_norm.weight", "blk.0.attn_norm.weight", "blk.0.ffn_norm.weight"} {
		for _, v := range get(name).Data {
			if v != 1 {
				t.Fatalf("%s holds %v, the bound assumes 1", name, v)
			}
		}
	}
	emb := get("token_embd.weight")
	e := float64(emb.Dims[0])
	sqrtE := math.Sqrt(e)
	c := float64(emb.Data[0])
	rest := 0.0
	for i, row := range rows(emb) {
		if float64(row[0]) != c {
			t.Fatalf("token %d embedding dim 0 = %v, want %v", i, row[0], c)
		}
		rest = math.Max(rest, norm(row[1:]))
	}
	layers, _ := f.Get("llama.block_count")
	r := rest
	for l := 0; l < int(layers.(uint32)); l++ {
		p := fmt.Sprintf("blk.%d.", l)
		wo, wd := get(p+"attn_output.weight"), get(p+"ffn_down.weight")
		for _, w := range []Tensor{wo, wd} {
			if norm(rows(w)[0]) != 0 {
				t.Fatalf("%s writes into dimension 0", w.Name)
			}
		}
		attn := frob(wo) * frob(get(p+"attn_v.weight")) * sqrtE
		maxRow := 0.0
		for _, row := range rows(get(p + "ffn_gate.weight")) {
			maxRow = math.Max(maxRow, norm(row))
		}
		ffn := frob(wd) * maxRow * sqrtE * frob(get(p+"ffn_up.weight")) * sqrtE
		r += attn + ffn
	}
	eps := 1e-5
	n0 = c * sqrtE / math.Sqrt(c*c+r*r+e*eps)
	maxAllowed, minSuppress := 0.0, math.Inf(1)
	for id, row := range rows(get("output.weight")) {
		if Allowed(id) {
			if row[0] != 0 {
				t.Fatalf("allowed token %d reads dimension 0", id)
			}
			maxAllowed = math.Max(maxAllowed, norm(row)*sqrtE)
			continue
		}
		if row[0] >= 0 || norm(row[1:]) != 0 {
			t.Fatalf("suppressed token %d row is not (−S, 0, …)", id)
		}
		minSuppress = math.Min(minSuppress, -float64(row[0])*n0)
	}
	return minSuppress - maxAllowed, n0
}

func TestSuppressedTokensCanNeverWin(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		cfg := DefaultLlama()
		cfg.Seed = seed
		f, err := NewLlama(cfg)
		if err != nil {
			t.Fatal(err)
		}
		gap, n0 := logitGap(t, f)
		// A gap of 100 logits leaves a suppressed token a probability below
		// e^-100 ≈ 4e-44 at temperature 1 (below float32's smallest normal,
		// so exactly 0 after softmax), and still below e^-50 at temperature 2.
		if gap < 100 {
			t.Errorf("seed %d: worst-case logit gap %.1f (n0 ≥ %.2f), want ≥ 100", seed, gap, n0)
		}
		t.Logf("seed %d: worst-case gap %.1f logits, n0 ≥ %.2f", seed, gap, n0)
	}
}
