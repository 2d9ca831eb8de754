package latency

// PrefillWork is one prefill request's share of a step: a new prompt, a chunk
// of one, or a recompute after preemption.
//
// Entries with NewTokens ≤ 0 do no work and are ignored by every model (docs/simulator.md
// §5: requests given no tokens do not count in StepTime).
type PrefillWork struct {
	NewTokens int // tokens whose KV this step computes (prefix-cache misses only)
	Context   int // tokens whose KV already existed before the step (progress)
	Target    int // the request's full prefill target: prompt + generated tokens
}

// Step is the composition of one batch step as a latency model sees it.
// Decode requests are summarised by count and context sum because every model
// is linear in per-request decode context; that is what lets the simulator
// advance a stretch of decode-only steps cheaply.
//
// A decode request (docs/simulator.md §5: g ≥ 1 and one token to compute) contributes 1 to
// DecodeCount and its progress to DecodeContextSum. A step with no prefill
// work and no decode requests costs 1 µs.
type Step struct {
	Prefill          []PrefillWork
	DecodeCount      int   // decode requests (one new token each)
	DecodeContextSum int64 // Σ progress (tokens of KV) of the decode requests before the step
}

// Model turns a batch's composition into time. All results are integer µs.
// Implementations are immutable after construction and safe for concurrent
// use; StepTime does not allocate.
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

// maxMicros caps every computed time so that adding a few of them to a clock
// cannot overflow int64 (about 73,000 years in µs).
const maxMicros = int64(1) << 61

// floorMicros converts a non-negative time in µs to integer µs by truncation
// (floor), clamped to [lo, maxMicros]; NaN maps to lo.
func floorMicros(us float64, lo int64) int64 {
	if !(us >= float64(lo)) {
		return lo
	}
	if us >= float64(maxMicros) {
		return maxMicros
	}
	return int64(us)
}
