package replay

import (
	"fmt"

	"servesim/internal/tracev2"
)

// overlong counts the requests that do not fit the deployment's context
// (docs/simulator.md §7: prompt ≥ max_model_len, or prompt + output tokens above
// it). The simulator drops them as dropped_unservable, as vLLM rejects
// them; the count and the first of them become a warning, so a trace made
// for a longer context does not lose rows without a word.
type overlong struct {
	maxLen      int // max_model_len; 0 = unknown (no check)
	n           int
	firstID     int64
	firstPrompt int
	firstOutput int
}

func (o *overlong) check(rec *tracev2.Record) {
	p := rec.ResendPromptTokens()
	if o.maxLen <= 0 || (p < o.maxLen && p+rec.OutputTokens <= o.maxLen) {
		return
	}
	if o.n == 0 {
		o.firstID, o.firstPrompt, o.firstOutput = rec.RequestID, p, rec.OutputTokens
	}
	o.n++
}

// warning is the warning for the requests counted, or "".
func (o *overlong) warning() string {
	if o.n == 0 {
		return ""
	}
	what := "1 request exceeds"
	if o.n > 1 {
		what = fmt.Sprintf("%d requests exceed", o.n)
	}
	return fmt.Sprintf("%s max_model_len %d (the first, request %d: %d prompt + %d output tokens): "+
		"dropped as unservable, as vLLM rejects them (a larger --max-model-len admits them)",
		what, o.maxLen, o.firstID, o.firstPrompt, o.firstOutput)
}
