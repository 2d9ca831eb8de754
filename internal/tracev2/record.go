package tracev2

import "fmt"

// MaxTokens bounds every token count of a row (prefix_length, input_tokens,
// output_tokens, the modality and server counts, ext_cached_tokens) and a
// prompt, prefix_length + input_tokens: 2²⁴ = 16,777,216 tokens, above any
// model's context window (the largest, 10M tokens). A reader or importer
// refuses a larger count at its place, before anything is sized by it: the
// simulator holds a prompt's token ids, 4 bytes each.
const MaxTokens = 1 << 24

// MaxHashIDs bounds the entries of a row's ext_hash_ids: 2¹⁵ = 32,768, a
// prompt of MaxTokens in Mooncake's 512-token blocks. A row holding that
// many int64s stays below the readers' 1 MiB row limit.
const MaxHashIDs = 1 << 15

// Record is one row of a TraceV2 data CSV: one request. Field comments give the
// column name; times are integer microseconds on the file's time origin (docs/tracev2.md §5),
// and 0 means "never" for the chunk and token times.
type Record struct {
	RequestID    int64  // request_id
	ClientID     string // client_id
	TenantID     string // tenant_id
	SLOClass     string // slo_class
	VLLMPriority int    // vllm_priority (optional column, docs/tracev2.md §4.3)
	SessionID    string // session_id
	RoundIndex   int    // round_index
	PrefixGroup  string // prefix_group
	PrefixLength int    // prefix_length
	Streaming    bool   // streaming
	InputTokens  int    // input_tokens: prompt tokens excluding the shared prefix
	OutputTokens int    // output_tokens
	TextTokens   int    // text_tokens
	ImageTokens  int    // image_tokens
	AudioTokens  int    // audio_tokens
	VideoTokens  int    // video_tokens
	ReasonRatio  float64
	Model        string // model
	DeadlineUs   int64  // deadline_us: absolute, 0 = none
	SLOTargetUs  int64  // slo_target_us (optional column)

	ServerInputTokens int   // server_input_tokens
	ArrivalTimeUs     int64 // arrival_time_us: intended send time
	SendTimeUs        int64 // send_time_us: actual send time
	FirstChunkTimeUs  int64 // first_chunk_time_us
	LastChunkTimeUs   int64 // last_chunk_time_us
	NumChunks         int   // num_chunks

	Status       string // status: ok, error, timeout, incomplete, ...
	ErrorMessage string // error_message
	FinishReason string // finish_reason

	XRequestID  string // x_request_id (optional trailing)
	Adapter     string // adapter (optional trailing)
	ThinkTimeUs int64  // think_time_us (optional trailing)

	// Our extension columns (docs/tracev2.md §4.4), trailing after every BLIS column.
	FirstTokenTimeUs int64   // ext_first_token_time_us
	CachedTokens     int     // ext_cached_tokens
	Instance         string  // ext_instance
	Preemptions      int     // ext_preemptions
	HashIDs          []int64 // ext_hash_ids: prefix block hashes (Mooncake), space-separated
}

// PromptTokens is the total prompt length: shared prefix plus the request's own input.
func (r *Record) PromptTokens() int { return r.PrefixLength + r.InputTokens }

// DefaultHashBlockTokens is the number of prompt tokens one ext_hash_ids
// entry stands for: Mooncake's 512-token prefix blocks.
const DefaultHashBlockTokens = 512

// ResendPromptTokens is the prompt length a row stands for when it is sent
// again, to the simulator (replay) or to a live server (observe --trace),
// docs/simulator.md §13: server_input_tokens when > 0 and the row has no prefix
// group (the server's own count of what it received), else prefix_length +
// input_tokens.
func (r *Record) ResendPromptTokens() int {
	if r.ServerInputTokens > 0 && r.PrefixGroup == "" {
		return r.ServerInputTokens
	}
	return r.PrefixLength + r.InputTokens
}

// KnownStatus reports whether s is one of the status values of docs/tracev2.md §4.6
// (ok, error, timeout, incomplete). Readers accept any status; a consumer
// treats another as not ok and says so once (StatusTally).
func KnownStatus(s string) bool {
	switch s {
	case "ok", "error", "timeout", "incomplete":
		return true
	}
	return false
}

// StatusTally counts the rows whose status is not a known one, for the one
// warning a consumer gives about them.
type StatusTally struct {
	rows, distinct int
	first          string
	line           int
	seen           map[string]bool // at most maxStatusesTracked values
}

const maxStatusesTracked = 100

// Add notes a row's status; line is where the row starts.
func (t *StatusTally) Add(status string, line int) {
	if KnownStatus(status) {
		return
	}
	t.rows++
	if t.rows == 1 {
		t.first, t.line = status, line
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	if !t.seen[status] && len(t.seen) < maxStatusesTracked {
		t.seen[status] = true
		t.distinct++
	}
}

// Warning is the warning for the rows noted, or "". name is the trace's
// file name.
func (t *StatusTally) Warning(name string) string {
	if t.rows == 0 {
		return ""
	}
	others := ""
	if t.distinct > 1 {
		others = fmt.Sprintf(" and %d other unknown values", t.distinct-1)
	}
	return fmt.Sprintf("%s:%d: status %s%s on %d rows: not ok, error, timeout or incomplete; treated as not ok",
		name, t.line, QuoteName(t.first), others, t.rows)
}
