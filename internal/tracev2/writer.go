package tracev2

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Writer writes a data CSV: the column row at construction, then one row per
// Write. Each row is formatted into a reused buffer and handed to the
// underlying io.Writer in a single Write call, never buffered across rows,
// so an interrupted producer leaves only whole rows (docs/tracev2.md §7). Wrap w in a
// bufio.Writer (and Flush it) for throughput when that guarantee is not
// needed.
type Writer struct {
	w    io.Writer
	cols Columns
	ids  []colID
	buf  []byte
	err  error
}

// NewWriter writes the column row for cols to w and returns the Writer.
func NewWriter(w io.Writer, cols Columns) (*Writer, error) {
	if w == nil {
		return nil, errors.New("tracev2: NewWriter: nil io.Writer")
	}
	cw := &Writer{w: w, cols: cols, ids: cols.ids(), buf: make([]byte, 0, 512)}
	for i, id := range cw.ids {
		if i > 0 {
			cw.buf = append(cw.buf, ',')
		}
		cw.buf = append(cw.buf, id.name()...)
	}
	cw.buf = append(cw.buf, '\n')
	if _, err := w.Write(cw.buf); err != nil {
		cw.err = fmt.Errorf("write trace column row: %w", err)
		return nil, cw.err
	}
	return cw, nil
}

// Write validates rec (the checks a reader would fail) and writes its row.
// Write errors are sticky.
func (w *Writer) Write(rec *Record) error {
	if w.err != nil {
		return w.err
	}
	if err := checkRecord(rec); err != nil {
		return err
	}
	b := w.buf[:0]
	for i, id := range w.ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendField(b, id, rec)
	}
	b = append(b, '\n')
	w.buf = b
	if n, err := w.w.Write(b); err != nil {
		cutBack(w.w, int64(n)) // a full disk must not leave half a row
		w.err = fmt.Errorf("write trace row (request_id %d): %w", rec.RequestID, err)
		return w.err
	}
	return nil
}

func appendField(b []byte, id colID, r *Record) []byte {
	switch id {
	case colRequestID:
		return strconv.AppendInt(b, r.RequestID, 10)
	case colClientID:
		return appendString(b, r.ClientID)
	case colTenantID:
		return appendString(b, r.TenantID)
	case colSLOClass:
		return appendString(b, r.SLOClass)
	case colVLLMPriority:
		return strconv.AppendInt(b, int64(r.VLLMPriority), 10)
	case colSessionID:
		return appendString(b, r.SessionID)
	case colRoundIndex:
		return strconv.AppendInt(b, int64(r.RoundIndex), 10)
	case colPrefixGroup:
		return appendString(b, r.PrefixGroup)
	case colPrefixLength:
		return strconv.AppendInt(b, int64(r.PrefixLength), 10)
	case colStreaming:
		return strconv.AppendBool(b, r.Streaming)
	case colInputTokens:
		return strconv.AppendInt(b, int64(r.InputTokens), 10)
	case colOutputTokens:
		return strconv.AppendInt(b, int64(r.OutputTokens), 10)
	case colTextTokens:
		return strconv.AppendInt(b, int64(r.TextTokens), 10)
	case colImageTokens:
		return strconv.AppendInt(b, int64(r.ImageTokens), 10)
	case colAudioTokens:
		return strconv.AppendInt(b, int64(r.AudioTokens), 10)
	case colVideoTokens:
		return strconv.AppendInt(b, int64(r.VideoTokens), 10)
	case colReasonRatio:
		// Shortest decimal that round-trips, never an exponent: 0, 0.01, 0.5.
		return strconv.AppendFloat(b, r.ReasonRatio, 'f', -1, 64)
	case colModel:
		return appendString(b, r.Model)
	case colDeadlineUs:
		return strconv.AppendInt(b, r.DeadlineUs, 10)
	case colSLOTargetUs:
		return strconv.AppendInt(b, r.SLOTargetUs, 10)
	case colServerInputTokens:
		return strconv.AppendInt(b, int64(r.ServerInputTokens), 10)
	case colArrivalTimeUs:
		return strconv.AppendInt(b, r.ArrivalTimeUs, 10)
	case colSendTimeUs:
		return strconv.AppendInt(b, r.SendTimeUs, 10)
	case colFirstChunkTimeUs:
		return strconv.AppendInt(b, r.FirstChunkTimeUs, 10)
	case colLastChunkTimeUs:
		return strconv.AppendInt(b, r.LastChunkTimeUs, 10)
	case colNumChunks:
		return strconv.AppendInt(b, int64(r.NumChunks), 10)
	case colStatus:
		return appendString(b, r.Status)
	case colErrorMessage:
		return appendString(b, r.ErrorMessage)
	case colFinishReason:
		return appendString(b, r.FinishReason)
	case colXRequestID:
		return appendString(b, r.XRequestID)
	case colAdapter:
		return appendString(b, r.Adapter)
	case colThinkTimeUs:
		return strconv.AppendInt(b, r.ThinkTimeUs, 10)
	case colExtFirstTokenTimeUs:
		return strconv.AppendInt(b, r.FirstTokenTimeUs, 10)
	case colExtCachedTokens:
		return strconv.AppendInt(b, int64(r.CachedTokens), 10)
	case colExtInstance:
		return appendString(b, r.Instance)
	case colExtPreemptions:
		return strconv.AppendInt(b, int64(r.Preemptions), 10)
	case colExtHashIDs:
		for i, h := range r.HashIDs {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, h, 10)
		}
	}
	return b
}

// appendString appends a field quoted the way encoding/csv quotes it: only
// when it holds a comma, a double quote or a line break, begins with white
// space, or is `\.`; inner quotes are doubled.
func appendString(b []byte, s string) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

func needsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// checkRecord rejects what a reader would reject (docs/tracev2.md §4.7), so a writer
// never emits a row it cannot read back.
func checkRecord(r *Record) error {
	// The OR of the values is negative exactly when one of them is, so the
	// common case is one test; the loop below names the culprit.
	if r.RequestID|int64(r.VLLMPriority)|int64(r.RoundIndex)|int64(r.PrefixLength)|int64(r.InputTokens)|
		int64(r.OutputTokens)|int64(r.TextTokens)|int64(r.ImageTokens)|int64(r.AudioTokens)|int64(r.VideoTokens)|
		r.DeadlineUs|r.SLOTargetUs|int64(r.ServerInputTokens)|int64(r.NumChunks)|r.ThinkTimeUs|
		int64(r.CachedTokens)|int64(r.Preemptions) >= 0 &&
		r.ReasonRatio >= 0 && r.ReasonRatio <= 1 &&
		(r.DeadlineUs == 0 || r.ArrivalTimeUs <= 0 || r.DeadlineUs >= r.ArrivalTimeUs) &&
		// MaxTokens is a power of two: the OR is below it exactly when
		// every count is.
		r.PrefixLength|r.InputTokens|r.OutputTokens|r.TextTokens|r.ImageTokens|r.AudioTokens|r.VideoTokens|
			r.ServerInputTokens|r.CachedTokens < MaxTokens && r.PrefixLength+r.InputTokens <= MaxTokens &&
		len(r.HashIDs) <= MaxHashIDs {
		return nil
	}
	bad := func(col string, v any, what string) error {
		return fmt.Errorf("trace row (request_id %d): column %s: %v %s", r.RequestID, col, v, what)
	}
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"request_id", r.RequestID}, {"vllm_priority", int64(r.VLLMPriority)},
		{"round_index", int64(r.RoundIndex)}, {"prefix_length", int64(r.PrefixLength)},
		{"input_tokens", int64(r.InputTokens)}, {"output_tokens", int64(r.OutputTokens)},
		{"text_tokens", int64(r.TextTokens)}, {"image_tokens", int64(r.ImageTokens)},
		{"audio_tokens", int64(r.AudioTokens)}, {"video_tokens", int64(r.VideoTokens)},
		{"deadline_us", r.DeadlineUs}, {"slo_target_us", r.SLOTargetUs},
		{"server_input_tokens", int64(r.ServerInputTokens)}, {"num_chunks", int64(r.NumChunks)},
		{"think_time_us", r.ThinkTimeUs}, {"ext_cached_tokens", int64(r.CachedTokens)},
		{"ext_preemptions", int64(r.Preemptions)},
	} {
		if c.v < 0 {
			return bad(c.name, c.v, "is negative")
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"prefix_length", r.PrefixLength}, {"input_tokens", r.InputTokens}, {"output_tokens", r.OutputTokens},
		{"text_tokens", r.TextTokens}, {"image_tokens", r.ImageTokens}, {"audio_tokens", r.AudioTokens},
		{"video_tokens", r.VideoTokens}, {"server_input_tokens", r.ServerInputTokens}, {"ext_cached_tokens", r.CachedTokens},
	} {
		if c.v > MaxTokens {
			return bad(c.name, c.v, fmt.Sprintf("exceeds %d, the largest token count a trace may hold", MaxTokens))
		}
	}
	if r.PrefixLength+r.InputTokens > MaxTokens {
		return bad("input_tokens", r.InputTokens, fmt.Sprintf("with prefix_length %d exceeds %d, the largest prompt a trace may hold", r.PrefixLength, MaxTokens))
	}
	if len(r.HashIDs) > MaxHashIDs {
		return bad("ext_hash_ids", len(r.HashIDs), fmt.Sprintf("entries exceed %d", MaxHashIDs))
	}
	if math.IsNaN(r.ReasonRatio) || r.ReasonRatio < 0 || r.ReasonRatio > 1 {
		return bad("reason_ratio", r.ReasonRatio, "is outside [0, 1]")
	}
	if r.DeadlineUs > 0 && r.ArrivalTimeUs > 0 && r.DeadlineUs < r.ArrivalTimeUs {
		return bad("deadline_us", r.DeadlineUs, fmt.Sprintf("is before arrival_time_us %d", r.ArrivalTimeUs))
	}
	return nil
}
