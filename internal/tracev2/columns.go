package tracev2

// colID identifies a known data column. The order of the constants is not the
// file order; Columns.ids gives that.
type colID uint8

const (
	colUnknown colID = iota
	colRequestID
	colClientID
	colTenantID
	colSLOClass
	colVLLMPriority
	colSessionID
	colRoundIndex
	colPrefixGroup
	colPrefixLength
	colStreaming
	colInputTokens
	colOutputTokens
	colTextTokens
	colImageTokens
	colAudioTokens
	colVideoTokens
	colReasonRatio
	colModel
	colDeadlineUs
	colSLOTargetUs
	colServerInputTokens
	colArrivalTimeUs
	colSendTimeUs
	colFirstChunkTimeUs
	colLastChunkTimeUs
	colNumChunks
	colStatus
	colErrorMessage
	colFinishReason
	colXRequestID
	colAdapter
	colThinkTimeUs
	colExtFirstTokenTimeUs
	colExtCachedTokens
	colExtInstance
	colExtPreemptions
	colExtHashIDs
	numCols
)

// name is the column's name in the CSV column row.
func (c colID) name() string {
	switch c {
	case colRequestID:
		return "request_id"
	case colClientID:
		return "client_id"
	case colTenantID:
		return "tenant_id"
	case colSLOClass:
		return "slo_class"
	case colVLLMPriority:
		return "vllm_priority"
	case colSessionID:
		return "session_id"
	case colRoundIndex:
		return "round_index"
	case colPrefixGroup:
		return "prefix_group"
	case colPrefixLength:
		return "prefix_length"
	case colStreaming:
		return "streaming"
	case colInputTokens:
		return "input_tokens"
	case colOutputTokens:
		return "output_tokens"
	case colTextTokens:
		return "text_tokens"
	case colImageTokens:
		return "image_tokens"
	case colAudioTokens:
		return "audio_tokens"
	case colVideoTokens:
		return "video_tokens"
	case colReasonRatio:
		return "reason_ratio"
	case colModel:
		return "model"
	case colDeadlineUs:
		return "deadline_us"
	case colSLOTargetUs:
		return "slo_target_us"
	case colServerInputTokens:
		return "server_input_tokens"
	case colArrivalTimeUs:
		return "arrival_time_us"
	case colSendTimeUs:
		return "send_time_us"
	case colFirstChunkTimeUs:
		return "first_chunk_time_us"
	case colLastChunkTimeUs:
		return "last_chunk_time_us"
	case colNumChunks:
		return "num_chunks"
	case colStatus:
		return "status"
	case colErrorMessage:
		return "error_message"
	case colFinishReason:
		return "finish_reason"
	case colXRequestID:
		return "x_request_id"
	case colAdapter:
		return "adapter"
	case colThinkTimeUs:
		return "think_time_us"
	case colExtFirstTokenTimeUs:
		return "ext_first_token_time_us"
	case colExtCachedTokens:
		return "ext_cached_tokens"
	case colExtInstance:
		return "ext_instance"
	case colExtPreemptions:
		return "ext_preemptions"
	case colExtHashIDs:
		return "ext_hash_ids"
	}
	return ""
}

// colByName maps a column name to its id, colUnknown if it is not ours or BLIS's.
func colByName(s string) colID {
	for c := colRequestID; c < numCols; c++ {
		if c.name() == s {
			return c
		}
	}
	return colUnknown
}

// required reports whether a column has been present since the first v2
// layout (22 columns, docs/tracev2.md §4.5); the others default when absent.
func (c colID) required() bool {
	switch c {
	case colRequestID, colClientID, colTenantID, colSLOClass, colSessionID, colRoundIndex,
		colPrefixGroup, colStreaming, colInputTokens, colOutputTokens, colTextTokens,
		colImageTokens, colAudioTokens, colVideoTokens, colReasonRatio, colArrivalTimeUs,
		colSendTimeUs, colFirstChunkTimeUs, colLastChunkTimeUs, colNumChunks, colStatus,
		colErrorMessage:
		return true
	}
	return false
}

// Columns says which optional columns a data CSV has. The 27 core columns are
// always written; each flag adds one column for the whole file. Writers decide
// it before the first row (they cannot look ahead when streaming); a column
// may then hold only zeros or empty strings.
type Columns struct {
	// BLIS optional columns (docs/tracev2.md §4.3).
	VLLMPriority bool // vllm_priority, right after slo_class
	SLOTarget    bool // slo_target_us, right after deadline_us
	XRequestID   bool // x_request_id, trailing 1st
	Adapter      bool // adapter, trailing 2nd
	ThinkTime    bool // think_time_us, trailing 3rd

	// Our extension columns (docs/tracev2.md §4.4), trailing after every BLIS column.
	FirstTokenTime bool // ext_first_token_time_us
	CachedTokens   bool // ext_cached_tokens
	Instance       bool // ext_instance
	Preemptions    bool // ext_preemptions
	HashIDs        bool // ext_hash_ids: space-separated int64 prefix block hashes (Mooncake)
}

// ids lists the file's columns in write order: BLIS's 27 core columns with
// vllm_priority and slo_target_us in their fixed slots, BLIS's trailing
// optional columns, then ours.
func (c Columns) ids() []colID {
	ids := make([]colID, 0, 37)
	ids = append(ids, colRequestID, colClientID, colTenantID, colSLOClass)
	if c.VLLMPriority {
		ids = append(ids, colVLLMPriority)
	}
	ids = append(ids, colSessionID, colRoundIndex, colPrefixGroup, colPrefixLength, colStreaming,
		colInputTokens, colOutputTokens, colTextTokens, colImageTokens, colAudioTokens,
		colVideoTokens, colReasonRatio, colModel, colDeadlineUs)
	if c.SLOTarget {
		ids = append(ids, colSLOTargetUs)
	}
	ids = append(ids, colServerInputTokens, colArrivalTimeUs, colSendTimeUs, colFirstChunkTimeUs,
		colLastChunkTimeUs, colNumChunks, colStatus, colErrorMessage, colFinishReason)
	for _, o := range []struct {
		on bool
		id colID
	}{
		{c.XRequestID, colXRequestID}, {c.Adapter, colAdapter}, {c.ThinkTime, colThinkTimeUs},
		{c.FirstTokenTime, colExtFirstTokenTimeUs}, {c.CachedTokens, colExtCachedTokens},
		{c.Instance, colExtInstance}, {c.Preemptions, colExtPreemptions}, {c.HashIDs, colExtHashIDs},
	} {
		if o.on {
			ids = append(ids, o.id)
		}
	}
	return ids
}

// Names lists the column row the writer emits for c.
func (c Columns) Names() []string {
	ids := c.ids()
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id.name()
	}
	return names
}

// set marks an optional column present (used when binding a read file).
func (c *Columns) set(id colID) {
	switch id {
	case colVLLMPriority:
		c.VLLMPriority = true
	case colSLOTargetUs:
		c.SLOTarget = true
	case colXRequestID:
		c.XRequestID = true
	case colAdapter:
		c.Adapter = true
	case colThinkTimeUs:
		c.ThinkTime = true
	case colExtFirstTokenTimeUs:
		c.FirstTokenTime = true
	case colExtCachedTokens:
		c.CachedTokens = true
	case colExtInstance:
		c.Instance = true
	case colExtPreemptions:
		c.Preemptions = true
	case colExtHashIDs:
		c.HashIDs = true
	}
}

// VLLMPriority is the priority observe sends in the request body for an SLO
// class (docs/tracev2.md §4.3): max − p(class) with p = critical 4, standard 3 (also
// empty and unknown classes), batch −1, sheddable −2, background −3; lower
// values are more urgent.
func VLLMPriority(sloClass string) int {
	const pmax = 4
	p := 3
	switch sloClass {
	case "critical":
		p = 4
	case "batch":
		p = -1
	case "sheddable":
		p = -2
	case "background":
		p = -3
	}
	return pmax - p
}
