package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"servesim/internal/tracev2"
)

// LLMServingSim imports one run of LLMServingSim's `bench run` (a real vLLM
// AsyncLLM driven in-process): requests.jsonl, one object per request with
// request_id, input_toks, output_toks, arrival_time (the front end's Unix
// clock, s) and queued_ts, scheduled_ts, first_token_ts, last_token_ts (the
// engine's monotonic clock, s; vLLM's RequestStateStats), plus the run's
// meta.json (see [LLMServingSimMeta]).
//
// Mapping. The two clocks share no origin; they are tied by the request that
// reached the engine soonest after arriving: no request is queued before it
// arrives, so E = min over requests of (queued_ts − arrival_time) converts
// engine times to the front-end clock (the same reasoning as docs/tracev2.md §5
// for epoch send times). With t0 the earliest arrival:
//
//	arrival_time_us     = arrival_time − t0
//	send_time_us        = queued_ts − E − t0     (arrival_time_us when queued_ts is absent)
//	first_chunk_time_us = first_token_ts − E − t0
//	last_chunk_time_us  = last_token_ts − E − t0
//
// all rounded to µs. The engine's queueing plays the send, so calibrate's
// TTFT (first chunk − send) and E2E are vLLM's own definitions
// (first_token_ts − queued_ts, last_token_ts − queued_ts), the ones the
// bench's validation summary reports; `replay` injects at send_time_us by
// default and at arrival_time_us with --inject-at arrival.
// input_tokens = server_input_tokens = text_tokens = input_toks; output_tokens
// = num_chunks = output_toks (one streamed chunk per token); streaming true;
// status ok; finish_reason length (the bench pins min_tokens = max_tokens
// with ignore_eos); model from meta.json; x_request_id = request_id as
// written; request_id = 0-based record index. A missing or null engine time,
// or 0 (vLLM's "not set"), leaves the matching column at 0 ("not
// measured"). scheduled_ts only feeds consistency warnings.
//
// Unlike the other importers, this one holds every request (about 100 bytes
// each) before the first record is returned, because E and t0 are minima over
// the whole file; the runs it reads have hundreds of requests.
type LLMServingSim struct {
	file  string
	rows  []llmsRow
	next  int
	meta  *LLMServingSimMeta
	hdr   *tracev2.Header
	e, t0 float64 // clock tie E (s) and first arrival t0 (s); hasE says E is known
	hasE  bool
	stream
}

// llmsRow is one parsed request line; engine times ≤ 0 mean absent.
type llmsRow struct {
	line                   int
	id                     string
	in, out                int
	arrival                float64
	queued, sched, ft, lt  float64
	colQueued, colFT, colL int // columns of the engine times, for errors
}

// LLMServingSimRequests and LLMServingSimMetaFile name the two files of a run.
const (
	LLMServingSimRequests = "requests.jsonl"
	LLMServingSimMetaFile = "meta.json"
)

// NewLLMServingSim reads a whole requests.jsonl from r; meta (may be nil)
// is the run's parsed meta.json. name is used in errors.
func NewLLMServingSim(name string, r io.Reader, meta *LLMServingSimMeta, opts Options) (*LLMServingSim, error) {
	l := &LLMServingSim{file: displayName(name), meta: meta, hdr: newHeader()}
	if err := l.load(r); err != nil {
		return nil, err
	}
	client := opts.ClientID
	if client == "" {
		client = "llmservingsim"
	}
	if meta == nil {
		l.warn.add("%s: no %s: the model and server settings are unknown", l.file, LLMServingSimMetaFile)
	} else {
		l.hdr.Server = meta.server()
		if meta.Dataset != "" {
			l.hdr.WorkloadSpec = filepath.Base(meta.Dataset)
		}
		if meta.NumRequests > 0 && meta.NumRequests != len(l.rows) {
			l.warn.add("%s: %d requests, but %s says num_requests %d", l.file, len(l.rows), LLMServingSimMetaFile, meta.NumRequests)
		}
	}
	if len(l.rows) > 0 && l.t0 > 0 {
		sec, frac := math.Modf(l.t0)
		l.hdr.CreatedAt = tracev2.FormatCreatedAt(time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000))
	}
	model := ""
	if meta != nil {
		model = meta.Model
	}
	if err := l.start(func() (tracev2.Record, error) { return l.read(client, model) }); err != nil {
		return nil, err
	}
	return l, nil
}

// OpenLLMServingSim imports the run at path: a directory holding
// requests.jsonl and meta.json (or a `vllm` subdirectory holding them, as
// the bench's examples are laid out), or the requests.jsonl file itself with
// meta.json looked up beside it. A missing meta.json is a warning.
func OpenLLMServingSim(path string, opts Options) (*LLMServingSim, error) {
	reqPath, err := llmsRequestsPath(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(reqPath)
	if err != nil {
		return nil, fmt.Errorf("llmservingsim: %w", err)
	}
	defer f.Close()
	return newLLMServingSimBeside(reqPath, f, opts)
}

// newLLMServingSimBeside imports requests read from r, with the meta.json
// found beside the file name (when name is a path).
func newLLMServingSimBeside(name string, r io.Reader, opts Options) (*LLMServingSim, error) {
	var meta *LLMServingSimMeta
	if name != "" && name != "-" {
		mp := filepath.Join(filepath.Dir(name), LLMServingSimMetaFile)
		data, err := os.ReadFile(mp)
		switch {
		case err == nil:
			if meta, err = ParseLLMServingSimMeta(mp, data); err != nil {
				return nil, err
			}
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("llmservingsim: %w", err)
		}
	}
	return NewLLMServingSim(name, r, meta, opts)
}

// llmsRequestsPath finds requests.jsonl for a directory or file path.
func llmsRequestsPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("llmservingsim: %w", err)
	}
	if !st.IsDir() {
		return path, nil
	}
	for _, p := range []string{filepath.Join(path, LLMServingSimRequests), filepath.Join(path, "vllm", LLMServingSimRequests)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("llmservingsim: %s holds no %s (nor vllm/%s)", path, LLMServingSimRequests, LLMServingSimRequests)
}

// openLLMServingSim is Open's entry: r may be a directory opened by the
// caller (`replay --from llmservingsim DIR`), a requests.jsonl file, or a
// stream.
func openLLMServingSim(name string, r io.Reader, opts Options) (Importer, error) {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return OpenLLMServingSim(f.Name(), opts)
		}
	}
	return newLLMServingSimBeside(name, r, opts)
}

// Header describes the imported trace: mode real, created_at from the first
// arrival, and the server facts of meta.json.
func (l *LLMServingSim) Header() *tracev2.Header { return l.hdr.Clone() }

// Meta returns the run's meta.json as parsed (nil when there was none).
func (l *LLMServingSim) Meta() *LLMServingSimMeta {
	if l.meta == nil {
		return nil
	}
	m := *l.meta
	return &m
}

// ClockTieSeconds returns E, the engine-clock minus front-end-clock offset
// used for the mapping (see the type's comment), and whether it is known.
func (l *LLMServingSim) ClockTieSeconds() (float64, bool) { return l.e, l.hasE }

// ScheduledTimesUs returns each request's first schedule (scheduled_ts) on
// the records' time origin, indexed by request_id; 0 where it is absent, the
// clocks cannot be tied, or it maps before the first arrival. TraceV2 has
// no column for it; it splits a measured TTFT into queueing and prefill.
func (l *LLMServingSim) ScheduledTimesUs() []int64 {
	out := make([]int64, len(l.rows))
	if !l.hasE {
		return out
	}
	for i := range l.rows {
		if v := l.rows[i].sched; v > 0 {
			if us, prob := durationUs(v-l.e-l.t0, 1e6); prob == "" {
				out[i] = us
			}
		}
	}
	return out
}

// load parses every line and computes t0 and E.
func (l *LLMServingSim) load(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	line := 0
	l.t0, l.e = math.Inf(1), math.Inf(1)
	for {
		buf = buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(buf)+len(chunk) > maxJSONLine {
				return &Error{File: l.file, Line: line + 1, Column: 1, Msg: fmt.Sprintf("line longer than %d MiB", maxJSONLine>>20)}
			}
			buf = append(buf, chunk...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: read: %w", l.file, err)
		}
		if len(buf) == 0 && err == io.EOF {
			break
		}
		line++
		text := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte{'\n'}), []byte{'\r'})
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		}
		if len(bytes.TrimSpace(text)) > 0 {
			row, perr := l.parseLine(text, line)
			if perr != nil {
				return perr
			}
			l.rows = append(l.rows, row)
			l.t0 = min(l.t0, row.arrival)
			if row.queued > 0 {
				l.e, l.hasE = min(l.e, row.queued-row.arrival), true
			}
		}
		if err == io.EOF {
			break
		}
	}
	if !l.hasE {
		l.e = 0
		withTimes := 0
		for i := range l.rows {
			if l.rows[i].ft > 0 || l.rows[i].lt > 0 {
				withTimes++
			}
		}
		if withTimes > 0 {
			l.warn.add("%s: no request has queued_ts, so the engine clock cannot be tied to arrival_time: latencies of %d requests left unmeasured", l.file, withTimes)
		}
	}
	if len(l.rows) == 0 {
		l.t0 = 0
	}
	return nil
}

// read returns the next request as a record, mapping its times.
func (l *LLMServingSim) read(client, model string) (tracev2.Record, error) {
	if l.next >= len(l.rows) {
		return tracev2.Record{}, io.EOF
	}
	row := &l.rows[l.next]
	rec := tracev2.Record{
		RequestID: int64(l.next), ClientID: client, Streaming: true,
		InputTokens: row.in, OutputTokens: row.out, TextTokens: row.in, ServerInputTokens: row.in,
		Model: model, Status: "ok", FinishReason: "length", XRequestID: row.id,
	}
	l.next++
	var prob string
	if rec.ArrivalTimeUs, prob = durationUs(row.arrival-l.t0, 1e6); prob != "" {
		return tracev2.Record{}, &Error{File: l.file, Line: row.line, Column: 1, Field: "arrival_time", Msg: "offset from the first arrival " + prob}
	}
	rec.SendTimeUs = rec.ArrivalTimeUs
	if !l.hasE {
		return rec, nil
	}
	engine := func(v float64, col int, field string) (int64, error) {
		if v <= 0 {
			return 0, nil
		}
		off := v - l.e - l.t0
		if off < 0 {
			return 0, &Error{File: l.file, Line: row.line, Column: col, Field: field,
				Msg: fmt.Sprintf("%s is earlier on the engine clock than the first arrival (clock tie %.6f s)", strconv.FormatFloat(v, 'f', -1, 64), l.e)}
		}
		us, prob := durationUs(off, 1e6)
		if prob != "" {
			return 0, &Error{File: l.file, Line: row.line, Column: col, Field: field, Msg: "offset from the first arrival " + prob}
		}
		return us, nil
	}
	var err error
	if row.queued > 0 {
		if rec.SendTimeUs, err = engine(row.queued, row.colQueued, "queued_ts"); err != nil {
			return tracev2.Record{}, err
		}
	}
	if rec.FirstChunkTimeUs, err = engine(row.ft, row.colFT, "first_token_ts"); err != nil {
		return tracev2.Record{}, err
	}
	if rec.LastChunkTimeUs, err = engine(row.lt, row.colL, "last_token_ts"); err != nil {
		return tracev2.Record{}, err
	}
	// A chunk time of 0 means "never": a measured instant at t = 0 becomes 1 µs.
	if row.ft > 0 {
		rec.FirstChunkTimeUs = max(rec.FirstChunkTimeUs, 1)
	}
	if row.lt > 0 {
		rec.LastChunkTimeUs = max(rec.LastChunkTimeUs, 1)
	}
	if rec.FirstChunkTimeUs > 0 {
		// Chunks are counted from the first one; without it (no
		// first_token_ts) the row has none, as a trace row must (0 = never).
		rec.NumChunks = row.out
	}
	l.check(row, &rec)
	return rec, nil
}

// check warns about engine times out of order (kept as measured).
func (l *LLMServingSim) check(row *llmsRow, rec *tracev2.Record) {
	switch {
	case row.queued > 0 && row.sched > 0 && row.sched < row.queued:
		l.warn.add("%s:%d: scheduled_ts is before queued_ts", l.file, row.line)
	case row.sched > 0 && row.ft > 0 && row.ft < row.sched:
		l.warn.add("%s:%d: first_token_ts is before scheduled_ts", l.file, row.line)
	case rec.FirstChunkTimeUs > 0 && rec.FirstChunkTimeUs < rec.SendTimeUs:
		l.warn.add("%s:%d: first_token_ts is before queued_ts", l.file, row.line)
	case rec.LastChunkTimeUs > 0 && rec.LastChunkTimeUs < rec.FirstChunkTimeUs:
		l.warn.add("%s:%d: last_token_ts is before first_token_ts", l.file, row.line)
	case row.out > 0 && row.ft <= 0 && l.hasE:
		l.warn.add("%s:%d: no first_token_ts for a request with %d output tokens", l.file, row.line, row.out)
	}
}
