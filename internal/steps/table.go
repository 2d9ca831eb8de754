package steps

import (
	"fmt"
	"slices"

	"servesim/internal/des/latency"
	"servesim/internal/quantile"
)

// Row is one step type of the table: real and predicted step times.
type Row struct {
	Kind         string  `json:"kind"`           // decode, one prompt, several prompts
	Decodes      string  `json:"decodes"`        // the bin of decodes running, "4-7"
	Steps        int     `json:"steps"`          // steps of this type
	PromptTokens float64 `json:"prompt_tokens"`  // mean prompt tokens computed per step (0 for decode)
	RealP50Ms    float64 `json:"real_p50_ms"`    // median real step time
	RealMeanMs   float64 `json:"real_mean_ms"`   // mean real step time
	PredP50Ms    float64 `json:"pred_p50_ms"`    // median predicted step time
	PredMeanMs   float64 `json:"pred_mean_ms"`   // mean predicted step time
	ErrorPct     float64 `json:"mean_error_pct"` // 100·(predicted mean / real mean − 1)
}

// Step types.
const (
	KindDecode  = "decode only"
	KindOne     = "one prompt"
	KindSeveral = "several prompts"
)

// decodeBins are the lower bounds of the bins of decodes running: 0, 1,
// 2–3, 4–7, … 128–255, 256 and more.
func decodeBins() []int { return []int{0, 1, 2, 4, 8, 16, 32, 64, 128, 256} }

// binOf is the index of n's bin.
func binOf(n int) int {
	bins := decodeBins()
	i, found := slices.BinarySearch(bins, n)
	if !found {
		i--
	}
	return i
}

func binLabel(i int) string {
	bins := decodeBins()
	lo := bins[i]
	switch {
	case i == len(bins)-1:
		return fmt.Sprintf("%d+", lo)
	case bins[i+1]-1 == lo:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, bins[i+1]-1)
}

// kindOf is a step's type.
func kindOf(s *Step) string {
	switch len(s.Prefills) {
	case 0:
		return KindDecode
	case 1:
		return KindOne
	}
	return KindSeveral
}

// LatencyStep is s as a latency model sees it.
func LatencyStep(s *Step) *latency.Step {
	ls := &latency.Step{DecodeCount: s.Decodes, DecodeContextSum: s.DecodeContext}
	for _, p := range s.Prefills {
		ls.Prefill = append(ls.Prefill, latency.PrefillWork{NewTokens: p.NewTokens, Context: p.Context, Target: p.Target})
	}
	return ls
}

// Table sets predict's time beside the real time of every step, by step
// type and bin of decodes running; rows in the order decode only, one
// prompt, several prompts, each by bin, empty ones left out.
func Table(steps []Step, predict func(*latency.Step) int64) []Row {
	type acc struct{ real, pred, prompt []float64 }
	kinds := []string{KindDecode, KindOne, KindSeveral}
	accs := make([][]acc, len(kinds))
	for k := range accs {
		accs[k] = make([]acc, len(decodeBins()))
	}
	for i := range steps {
		s := &steps[i]
		k := slices.Index(kinds, kindOf(s))
		a := &accs[k][binOf(s.Decodes)]
		a.real = append(a.real, float64(s.DurationUs())/1000)
		a.pred = append(a.pred, float64(predict(LatencyStep(s)))/1000)
		tokens := 0
		for _, p := range s.Prefills {
			tokens += p.NewTokens
		}
		a.prompt = append(a.prompt, float64(tokens))
	}
	var rows []Row
	for k, kind := range kinds {
		for b := range accs[k] {
			a := accs[k][b]
			if len(a.real) == 0 {
				continue
			}
			r := Row{Kind: kind, Decodes: binLabel(b), Steps: len(a.real), PromptTokens: mean(a.prompt),
				RealP50Ms: quantile.Of(a.real, 50), RealMeanMs: mean(a.real),
				PredP50Ms: quantile.Of(a.pred, 50), PredMeanMs: mean(a.pred)}
			if r.RealMeanMs > 0 {
				r.ErrorPct = 100 * (r.PredMeanMs/r.RealMeanMs - 1)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
