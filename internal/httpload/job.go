package httpload

import (
	"fmt"
	"net/http"
	"time"
)

// Job is one request to send. It knows nothing of workload specs: the caller
// fills it from whatever generated the request.
type Job struct {
	ID         int64 // caller's id, copied to the Result (e.g. the trace request_id)
	IntendedUS int64 // intended send time, µs since the run's Clock origin

	// Prompt is the exact prompt text. When empty, the client builds it with
	// its Prompter from PrefixGroup/PrefixTokens (shared text) and
	// PromptTokens (text unique to this job, seeded by ID).
	Prompt       string
	PrefixGroup  string
	PrefixTokens int
	PromptTokens int

	Chat   bool   // /v1/chat/completions (one user message) instead of /v1/completions
	Stream bool   // SSE with stream_options.include_usage
	Model  string // overrides the client's model when set

	MaxTokens int  // max_tokens; 0 = omitted
	MinTokens int  // min_tokens (vLLM); 0 = omitted
	IgnoreEOS bool // ignore_eos (vLLM)

	// Priority is sent as the body field "priority" when HasPriority is set
	// (vLLM's priority scheduling: lower runs first).
	Priority    int
	HasPriority bool

	RequestID  string      // x-request-id header when set
	Objective  string      // x-gateway-inference-objective header (SLO class) when set
	FairnessID string      // x-gateway-inference-fairness-id header (tenant) when set
	SLOTTFTms  int64       // x-slo-ttft-ms header when > 0
	Headers    http.Header // further per-job headers; may be nil

	// Timeout bounds the request from its send to the end of its response;
	// 0 = none. DeadlineUS is an absolute bound on the run's clock (e.g.
	// intended time + the workload's timeout, so that a wait for a
	// concurrency slot counts); 0 = none. The earlier of the two applies;
	// when it passes the Result has StatusTimeout, and a job whose deadline
	// passed before it could be sent is not sent, nor is one whose
	// DeadlineUS is not after its IntendedUS (1 µs, the clock's earliest
	// stamp, standing for an IntendedUS of 0).
	Timeout    time.Duration
	DeadlineUS int64
}

// Status is the outcome of one request, spelled as the trace's status column.
type Status string

// The statuses a Result can carry.
const (
	StatusOK      Status = "ok"      // HTTP 2xx and a complete response ([DONE] when streaming)
	StatusError   Status = "error"   // HTTP, transport, parse or stream failure, or cancelled
	StatusTimeout Status = "timeout" // Job.Timeout or Job.DeadlineUS passed
)

// Result is everything measured about one Job. Times are µs on the run's
// Clock origin; 0 means "never happened".
type Result struct {
	Job Job // the job as dispatched (IntendedUS is the intended send time)

	SendUS       int64 // just before the request was handed to the transport; 0 = never sent
	FirstChunkUS int64 // first SSE data event, or first body byte when not streaming
	FirstTokenUS int64 // first event carrying generated text (content, reasoning, text or tool call)
	LastChunkUS  int64 // last SSE data event ([DONE] excluded), or end of body when not streaming
	DoneUS       int64 // when the outcome was known (end of stream, error, cancellation); always ≥ 1

	NumChunks  int     // SSE data events excluding [DONE] (usage-only included); 1 when not streaming
	TextChunks int     // events that carried generated text
	ChunkUS    []int64 // arrival of each counted SSE data event, in order (streaming only); for ITL
	// FirstTokenChunk is the index in ChunkUS of the first event that
	// carried text (streaming, FirstTokenUS > 0): a chat stream's role
	// chunk often shares its stamp, so the stamp alone cannot find it.
	FirstTokenChunk int

	PromptTokens     int  // usage.prompt_tokens; 0 = not reported
	CompletionTokens int  // usage.completion_tokens; 0 = not reported
	CachedTokens     int  // usage.prompt_tokens_details.cached_tokens
	HasUsage         bool // the server sent a usage object
	HasCachedTokens  bool // the usage carried cached_tokens

	FinishReason string // last non-null finish_reason
	HTTPStatus   int    // 0 when no response head arrived

	Status Status
	// Error is empty for StatusOK, else one line: "HTTP 503: <body>",
	// "HTTP error: <transport error>", "HTTP timeout: ...",
	// "streaming error: ...", "response error: ...", "request error: ...",
	// or "cancelled: ..." for requests stopped by an interrupt.
	Error string

	limit time.Duration // the time limit from the send, for timeout messages
}

// Sent reports whether the request was handed to the transport.
func (r *Result) Sent() bool { return r.SendUS > 0 }

// LagUS is the dispatch lag, actual minus intended send time, in µs (the wait
// for a concurrency slot included); 0 when the job was never sent.
func (r *Result) LagUS() int64 {
	if r.SendUS == 0 {
		return 0
	}
	return r.SendUS - r.Job.IntendedUS
}

// Tolerance of the comparison of usage.completion_tokens with the stream
// (UsageMismatch): a chunk may carry several tokens (speculative decoding,
// a server's stream interval), and a few chunks may carry text without a
// token of their own.
const (
	maxTokensPerChunk = 16
	usageSlackTokens  = 16
)

// UsageMismatch says why a streamed response's usage.completion_tokens
// cannot be what was streamed ("" when it can, or when there is nothing to
// compare): more tokens than max_tokens allows, more than
// maxTokensPerChunk per text chunk, or fewer than the text chunks, each
// beyond usageSlackTokens.
func (r *Result) UsageMismatch() string {
	if !r.HasUsage || !r.Job.Stream || r.Status != StatusOK {
		return ""
	}
	got, streamed := r.CompletionTokens, r.TextChunks
	switch {
	case r.Job.MaxTokens > 0 && got > r.Job.MaxTokens+usageSlackTokens,
		got > maxTokensPerChunk*streamed+usageSlackTokens,
		got+usageSlackTokens < streamed:
		return fmt.Sprintf("usage disagrees with the stream: completion_tokens %d for %d text chunks (max_tokens %d); output_tokens is the streamed count",
			got, streamed, r.Job.MaxTokens)
	}
	return ""
}

// GeneratedTokens is the output length of a completed request: the
// server's usage.completion_tokens, or the chunks that carried text when
// the server sent no usage or a usage the stream contradicts
// (UsageMismatch).
func (r *Result) GeneratedTokens() int {
	if r.HasUsage && r.UsageMismatch() == "" {
		return r.CompletionTokens
	}
	return r.TextChunks
}
