package latency

// PrefillWork is one prefill request's share of a step: a new prompt, a chunk
// of one, or a recompute after preemption.
type PrefillWork struct {
	NewTokens int // tokens whose KV this step computes (prefix-cache misses only)
	Context   int // tokens whose KV already existed before the step (progress)
	Target    int // the request's full prefill target: prompt + generated tokens
}

// Step is the composition of one batch step as a latency model sees it.
// Decode requests are summarised by count and context sum because every model
// is linear in per-request decode context; that is what lets the simulator
// advance a stretch of decode-only steps cheaply.
type Step struct {
	Prefill          []PrefillWork
	DecodeCount      int   // decode requests (one new token each)
	DecodeContextSum int64 // Σ progress (tokens of KV) of the decode requests before the step
}

// Model turns a batch's composition into time. All results are integer µs.
type Model interface {
	// StepTime is the engine time of one step, at least 1 µs.
	StepTime(s *Step) int64
	// QueueDelay is Q(r): delay from instance arrival to enqueue for a prompt
	// of the given length. It does not block the server.
	QueueDelay(promptTokens int) int64
	// TokenOverhead is A_tok, added to the first token and to every ITL sample.
	TokenOverhead() int64
	// EndOverhead is A_end, added once to E2E for requests with output.
	EndOverhead() int64
}
