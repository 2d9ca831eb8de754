package tracev2

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// SimResult is one completed simulated request (spec §9), as replay writes it
// and calibrate reads it. Times in µs. Fields marked ours are ignored by
// BLIS's decoder.
type SimResult struct {
	RequestID         int64   `json:"request_id"`
	TTFTUs            float64 `json:"ttft_us"` // arrival to first token, overheads included
	E2EUs             float64 `json:"e2e_us"`  // TTFT + ΣITL + A_end
	InputTokens       int     `json:"input_tokens"`
	OutputTokens      int     `json:"output_tokens"`
	SLOClass          string  `json:"slo_class,omitempty"`
	Model             string  `json:"model,omitempty"`
	ITLMeanUs         float64 `json:"itl_mean_us,omitempty"` // ΣITL / (output_tokens − 1); omitted if 0
	ArrivalUs         int64   `json:"arrival_us"`            // ours: normalised injection time
	SchedulingDelayUs float64 `json:"scheduling_delay_us"`   // ours
	NumPreemptions    int     `json:"num_preemptions"`       // ours
	CachedInputTokens int     `json:"cached_input_tokens"`   // ours
	Instance          string  `json:"instance,omitempty"`    // ours: instance_<i>
}

// SimResultFormat selects the JSON layout.
type SimResultFormat int

const (
	// SimResultArray is a JSON array with 2-space indentation.
	SimResultArray SimResultFormat = iota
	// SimResultJSONL is one compact object per line (for pipes).
	SimResultJSONL
)

// WriteSimResults writes results sorted by request_id (a sorted copy; the
// caller's slice is untouched), "[]" when empty. Whole numbers print
// without a decimal point (encoding/json's shortest form); NaN or infinite
// times are an error.
func WriteSimResults(w io.Writer, results []SimResult, format SimResultFormat) error {
	sorted := slices.Clone(results)
	if sorted == nil {
		sorted = []SimResult{}
	}
	slices.SortStableFunc(sorted, func(a, b SimResult) int {
		switch {
		case a.RequestID < b.RequestID:
			return -1
		case a.RequestID > b.RequestID:
			return 1
		}
		return 0
	})
	for i := range sorted {
		r := &sorted[i]
		for _, v := range []float64{r.TTFTUs, r.E2EUs, r.ITLMeanUs, r.SchedulingDelayUs} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("write sim results: request %d: time %v is not finite", r.RequestID, v)
			}
		}
	}
	var out []byte
	switch format {
	case SimResultArray:
		b, err := json.MarshalIndent(sorted, "", "  ")
		if err != nil {
			return fmt.Errorf("write sim results: %w", err)
		}
		out = append(b, '\n')
	case SimResultJSONL:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for i := range sorted {
			if err := enc.Encode(&sorted[i]); err != nil {
				return fmt.Errorf("write sim results: %w", err)
			}
		}
		out = buf.Bytes()
	default:
		return fmt.Errorf("write sim results: unknown format %d", format)
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("write sim results: %w", err)
	}
	return nil
}

// ReadSimResults reads a JSON array or JSON Lines of SimResult, detected from
// the first non-space byte ('[' or '{'). Unknown fields are ignored. Errors
// are *Error with the line and column of the offending byte.
func ReadSimResults(r io.Reader, name string) ([]SimResult, error) {
	br, err := newInput(r, name)
	if err != nil {
		return nil, err
	}
	lt := &lineTracker{r: br, line: 1, col: 1}
	dec := json.NewDecoder(lt)
	first, skipped, err := firstNonSpace(br)
	if err != nil {
		return nil, inputError(name, 0, err)
	}
	inArray := first == '['
	results := []SimResult{}
	// fail locates err. A type error's offset counts from where the decoder
	// started the value: after the separating comma in an array.
	fail := func(err error, before int64) error {
		off := dec.InputOffset()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		msg := err.Error()
		switch {
		case errors.As(err, &se):
			off = se.Offset - 1
		case errors.As(err, &te):
			off = lt.valueBase(before, inArray && len(results) > 0) + te.Offset - 1
			msg = fmt.Sprintf("field %s: cannot read a JSON %s as %s", te.Field, te.Value, te.Type)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			msg = "unexpected end of input"
		}
		line, col := lt.pos(off)
		return &Error{File: name, Line: line, Column: col, What: "json", Msg: oneLine(msg), Err: err}
	}
	switch first {
	case 0:
		return nil, &Error{File: name, Line: 1, Column: 1, What: "json", Msg: "empty input, want a JSON array or JSON Lines"}
	case '[':
		if _, err := dec.Token(); err != nil {
			return nil, fail(err, 0)
		}
		lt.advance(dec.InputOffset())
		for dec.More() {
			before := dec.InputOffset()
			var s SimResult
			if err := dec.Decode(&s); err != nil {
				return nil, fail(err, before)
			}
			results = append(results, s)
			lt.advance(dec.InputOffset())
		}
		if _, err := dec.Token(); err != nil {
			return nil, fail(err, dec.InputOffset())
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fail(errors.New("unexpected data after the JSON array"), dec.InputOffset())
		}
	case '{':
		for {
			before := dec.InputOffset()
			var s SimResult
			err := dec.Decode(&s)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fail(err, before)
			}
			results = append(results, s)
			lt.advance(dec.InputOffset())
		}
	default:
		line, col := 1+bytes.Count(skipped, []byte("\n")), 1
		if i := bytes.LastIndexByte(skipped, '\n'); i >= 0 {
			col = len(skipped) - i
		} else {
			col = len(skipped) + 1
		}
		return nil, &Error{File: name, Line: line, Column: col, What: "json",
			Msg: fmt.Sprintf("want a JSON array ('[') or JSON Lines ('{'), got %q", first)}
	}
	return results, nil
}

// firstNonSpace peeks past JSON white space without consuming it; 0 at EOF.
// It also returns the white space skipped.
func firstNonSpace(br *bufio.Reader) (byte, []byte, error) {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			if err == io.EOF || err == bufio.ErrBufferFull {
				return 0, nil, nil
			}
			return 0, nil, err
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, b[:n-1], nil
		}
	}
}

// lineTracker converts decoder byte offsets to line and column in bounded
// memory: it keeps only the bytes read since the last settled offset.
type lineTracker struct {
	r    io.Reader
	buf  []byte // bytes from offset base on
	base int64
	line int // line at base
	col  int // column at base
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// advance settles every byte before off.
func (t *lineTracker) advance(off int64) {
	k := int(off - t.base)
	if k <= 0 || k > len(t.buf) {
		return
	}
	t.line, t.col = t.walk(k)
	t.buf = append(t.buf[:0], t.buf[k:]...)
	t.base = off
}

// valueBase is where json.Decoder starts a value after offset before: past
// the separating comma (and the white space before it) when comma is set.
func (t *lineTracker) valueBase(before int64, comma bool) int64 {
	if !comma {
		return before
	}
	k := int(before - t.base)
	for k >= 0 && k < len(t.buf) {
		switch t.buf[k] {
		case ' ', '\t', '\r', '\n':
			k++
			continue
		case ',':
			return t.base + int64(k) + 1
		}
		break
	}
	return before
}

// pos gives the line and column of offset off (clamped to what was read).
func (t *lineTracker) pos(off int64) (int, int) {
	k := int(off - t.base)
	if k < 0 {
		k = 0
	}
	if k > len(t.buf) {
		k = len(t.buf)
	}
	return t.walk(k)
}

func (t *lineTracker) walk(k int) (int, int) {
	line, col := t.line, t.col
	for _, c := range t.buf[:k] {
		if c == '\n' {
			line, col = line+1, 1
		} else if c < 0x80 || c >= 0xC0 {
			col++
		}
	}
	return line, col
}
