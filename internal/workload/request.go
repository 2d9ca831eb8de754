package workload

// Request is one generated request: what a client sends and when
// (docs/workload.md §9). Times are µs from t = 0.
type Request struct {
	ID           int64  // 0, 1, 2, … in arrival order; follow-ups after the pre-generated ones
	Client       int    // index of the client in Spec.Clients
	ClientID     string // client id (trace client_id)
	TenantID     string
	SLOClass     string
	Model        string  // "" = the deployment's model
	ArrivalUs    int64   // intended send time
	PromptIDs    []int32 // nil from a shape source (NewShapeSource)
	PrefixGroup  string
	PrefixLength int // shared-prefix tokens at the start of PromptIDs
	InputTokens  int // prompt tokens excluding the shared prefix: len(PromptIDs) − PrefixLength
	OutputTokens int // O: tokens the server will generate
	MaxOutputLen int // the client's declared budget; = OutputTokens
	Streaming    bool
	ReasonRatio  float64 // in [0, 1]
	DeadlineUs   int64   // ArrivalUs + timeout; 0 = none
	SLOTargetUs  int64   // per-request TTFT target; 0 = none
	SessionID    string  // "" for single-turn requests
	RoundIndex   int     // 0 for single-turn requests and round 0
	ThinkTimeUs  int64   // the session's think time between rounds (trace think_time_us); 0 otherwise
	// Multimodal clients: the image, audio and video tokens counted in
	// InputTokens (the rest is text).
	ImageTokens, AudioTokens, VideoTokens int

	tokSeed uint64 // seed of this request's token stream
	newIn   int    // ids this request drew from it (its new input)
}

// OutputIDs returns the ids of the first n tokens this request generates:
// the continuation of its token stream after its new input ids (doc.go).
// An accumulating session appends exactly these to the next round's
// prompt, so a simulator that gives its KV cache these output ids sees the
// next round's prompt hit the cached context.
func (r *Request) OutputIDs(n int) []int32 {
	if n <= 0 {
		return nil
	}
	var t tokenStream
	t.reset(r.tokSeed)
	t.skip(r.newIn)
	ids := make([]int32, min(n, MaxSampleTokens))
	t.fill(ids)
	return ids
}

// PromptTokens is the whole prompt length.
func (r *Request) PromptTokens() int { return r.PrefixLength + r.InputTokens }
