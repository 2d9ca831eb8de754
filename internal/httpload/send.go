package httpload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// errJobTimeout is the context cause of an expired Job.Timeout or DeadlineUS.
var errJobTimeout = errors.New("job timeout")

// readBufBytes is the read size of a response body: about 15 SSE chunks, so
// a burst queued behind a stall is taken in a few reads, while thousands of
// concurrent streams stay cheap (the buffers are pooled, and the pool is
// emptied at every GC, so a small size also keeps the allocation rate low).
const readBufBytes = 4 << 10

// Send sends a prepared job and measures its response. It never returns
// without a Status, and it stamps SendUS just before handing the request to
// the transport. Cancelling ctx stops the request with StatusError and a
// "cancelled: <cause>" message (the cause is context.Cause(ctx)).
func (c *Client) Send(ctx context.Context, clock Clock, p Prepared) (r Result) {
	r = Result{Job: p.Job}
	// A server or proxy may echo the request's credentials in an error, or
	// send control bytes that would corrupt a CSV cell or a terminal.
	defer func() { r.Error = c.red.Text(Printable(r.Error)) }()
	if p.err != nil {
		r.fail(StatusError, "request error: "+p.err.Error(), clock)
		return r
	}
	if ctx.Err() != nil {
		r.fail(StatusError, "cancelled: "+causeText(ctx)+" (not sent)", clock)
		return r
	}
	if d := p.Job.DeadlineUS; d > 0 && d <= max(p.Job.IntendedUS, 1) {
		// Passed at the intended send time: it could only be late, so it
		// is never sent, whenever the dispatcher gets to it.
		r.fail(StatusTimeout, "HTTP timeout: the deadline is not after the intended send time (not sent)", clock)
		return r
	}
	rctx := ctx
	now := time.Now()
	var deadline time.Time
	if p.Job.Timeout > 0 {
		deadline = now.Add(p.Job.Timeout)
	}
	if p.Job.DeadlineUS > 0 {
		if at := clock.At(p.Job.DeadlineUS); deadline.IsZero() || at.Before(deadline) {
			deadline = at
		}
	}
	if !deadline.IsZero() {
		if !deadline.After(now) {
			r.fail(StatusTimeout, fmt.Sprintf("HTTP timeout: deadline passed %v before the request could be sent",
				now.Sub(deadline).Round(time.Microsecond)), clock)
			return r
		}
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadlineCause(ctx, deadline, errJobTimeout)
		defer cancel()
		r.limit = deadline.Sub(now)
	}
	// cancelDrain ends the read after [DONE] if the server holds the
	// connection open without finishing the body (see readStream).
	rctx, cancelDrain := context.WithCancelCause(rctx)
	defer cancelDrain(nil)
	req, err := c.newRequest(rctx, &p)
	if err != nil {
		r.fail(StatusError, "request error: "+err.Error(), clock)
		return r
	}
	r.SendUS = clock.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.failIO(&r, rctx, clock, "HTTP error: ", err)
		return r
	}
	defer resp.Body.Close()
	r.HTTPStatus = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
		msg := oneLine(body)
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		r.fail(StatusError, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg), clock)
		return r
	}
	bufp := c.getBuf()
	defer c.bufs.Put(bufp)
	if p.Job.Stream {
		c.readStream(rctx, cancelDrain, clock, resp, *bufp, &r)
	} else {
		c.readBody(rctx, clock, resp, *bufp, &r)
	}
	return r
}

func (c *Client) getBuf() *[]byte {
	if b, ok := c.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, readBufBytes)
	return &b
}

// fail records a terminal failure.
func (r *Result) fail(st Status, msg string, clock Clock) {
	r.Status, r.Error = st, msg
	if r.DoneUS == 0 {
		r.DoneUS = clock.Now()
	}
}

// streamFailure is an error found in the stream's content (as opposed to a
// transport error), reported as "streaming error: ...".
type streamFailure struct{ msg string }

func (e *streamFailure) Error() string { return e.msg }

// streamDecoder turns SSE bytes into the streaming fields of a Result.
type streamDecoder struct {
	r         *Result
	parser    SSEParser
	ch        chunk
	now       int64 // stamp of the bytes being fed
	done      bool  // [DONE] seen
	maxChunks int   // data events accepted before the response is ended as an error
}

// Bounds of the chunks of one streamed response (MaxChunks).
const (
	chunkSlack         = 64      // chunks without tokens: role, finish, usage, keep-alives
	maxChunksUnlimited = 1 << 20 // without max_tokens: 8 MiB of chunk times
)

// MaxChunks is the most SSE data events a streamed response to a job
// asking for maxTokens (0 = not asked) may carry: one token per chunk at
// worst, plus a quarter for tokenizers that split a token's text, plus
// chunkSlack. A server that keeps streaming past it (an endless response)
// has its response ended as an error, so that one request cannot exhaust
// the client's memory with chunk times.
func MaxChunks(maxTokens int) int {
	if maxTokens <= 0 || maxTokens >= maxChunksUnlimited {
		return maxChunksUnlimited
	}
	return maxTokens + maxTokens/4 + chunkSlack
}

func newStreamDecoder(r *Result, maxEventBytes int) *streamDecoder {
	hint := r.Job.MaxTokens + 2 // role chunk and usage chunk around one token per chunk
	if hint < 16 || hint > 1<<16 {
		hint = 64
	}
	r.ChunkUS = make([]int64, 0, hint)
	return &streamDecoder{r: r, parser: SSEParser{max: maxEventBytes}, maxChunks: MaxChunks(r.Job.MaxTokens)}
}

// feed parses bytes that arrived at now; every event they complete gets
// that stamp, since the events arrived together.
func (d *streamDecoder) feed(b []byte, now int64) error {
	d.now = now
	return d.parser.Feed(b, d.event)
}

// finish handles a clean end of the body.
func (d *streamDecoder) finish() error { return d.parser.Finish(d.event) }

func (d *streamDecoder) event(data []byte) error {
	if d.done {
		return nil // anything after [DONE] is ignored
	}
	r, now := d.r, d.now
	if string(data) == "[DONE]" {
		d.done = true
		r.DoneUS = now
		return nil
	}
	if r.NumChunks >= d.maxChunks {
		return &streamFailure{fmt.Sprintf("more than %d chunks (max_tokens %d): response ended", d.maxChunks, r.Job.MaxTokens)}
	}
	r.NumChunks++
	r.ChunkUS = append(r.ChunkUS, now)
	if r.FirstChunkUS == 0 {
		r.FirstChunkUS = now
	}
	r.LastChunkUS = now
	if err := decodeChunk(data, &d.ch); err != nil {
		return &streamFailure{fmt.Sprintf("chunk %d: %v", r.NumChunks, err)}
	}
	r.apply(&d.ch)
	if d.ch.isErr {
		return &streamFailure{fmt.Sprintf("server error in chunk %d: %s", r.NumChunks, jsonText(d.ch.errMsg))}
	}
	if d.ch.text {
		r.TextChunks++
		if r.FirstTokenUS == 0 {
			r.FirstTokenUS = now
			r.FirstTokenChunk = len(r.ChunkUS) - 1
		}
	}
	return nil
}

// drainAfterDone bounds the wait for the end of the body after [DONE]:
// reading to the end lets the connection be reused; a server that keeps the
// body open is cut off instead (the answer is complete either way).
const drainAfterDone = time.Second

// errDrained is the cause of the cut-off after [DONE].
var errDrained = errors.New("body not finished after [DONE]")

// readStream consumes an SSE response.
func (c *Client) readStream(ctx context.Context, cancel context.CancelCauseFunc, clock Clock, resp *http.Response, buf []byte, r *Result) {
	d := newStreamDecoder(r, c.cfg.MaxEventBytes)
	afterDone := 0 // bytes read after [DONE], drained for connection reuse
	var cutoff *time.Timer
	defer func() {
		if cutoff != nil {
			cutoff.Stop()
		}
	}()
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if d.done {
				afterDone += n
			} else if perr := d.feed(buf[:n], clock.Now()); perr != nil {
				r.fail(StatusError, "streaming error: "+perr.Error(), clock)
				return
			}
			if d.done && cutoff == nil && err == nil {
				cutoff = time.AfterFunc(c.drainAfterDone, func() { cancel(errDrained) })
			}
		}
		if err == io.EOF {
			if !d.done {
				if perr := d.finish(); perr != nil {
					r.fail(StatusError, "streaming error: "+perr.Error(), clock)
					return
				}
			}
			break
		}
		if err != nil {
			if d.done {
				break // the answer was complete; only the drain failed
			}
			c.failIO(r, ctx, clock, "streaming error: ", err)
			return
		}
		if d.done && afterDone > readBufBytes {
			break // a server that keeps talking after [DONE]: stop listening
		}
	}
	if !d.done {
		msg := fmt.Sprintf("streaming error: stream ended before [DONE] after %d chunks", r.NumChunks)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			msg += fmt.Sprintf(" (content-type %q)", ct)
		}
		r.fail(StatusError, msg, clock)
		return
	}
	r.Status = StatusOK
}

// readBody consumes a non-streamed response: first and last byte times, one
// chunk, the whole body decoded at the end.
func (c *Client) readBody(ctx context.Context, clock Clock, resp *http.Response, buf []byte, r *Result) {
	var body []byte
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			now := clock.Now()
			if r.FirstChunkUS == 0 {
				r.FirstChunkUS = now
			}
			r.LastChunkUS = now
			if len(body)+n > maxBodyBytes {
				r.fail(StatusError, fmt.Sprintf("response error: body longer than %d bytes", maxBodyBytes), clock)
				return
			}
			body = append(body, buf[:n]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			c.failIO(r, ctx, clock, "response error: ", err)
			return
		}
	}
	r.DoneUS = clock.Now()
	if r.FirstChunkUS == 0 {
		r.fail(StatusError, "response error: empty body", clock)
		return
	}
	r.NumChunks = 1
	var ch chunk
	if err := decodeChunk(body, &ch); err != nil {
		r.fail(StatusError, "response error: "+err.Error(), clock)
		return
	}
	r.apply(&ch)
	if ch.isErr {
		r.fail(StatusError, "response error: server error: "+jsonText(ch.errMsg), clock)
		return
	}
	if ch.text {
		r.TextChunks = 1
		r.FirstTokenUS = r.FirstChunkUS
	}
	r.Status = StatusOK
}

// apply copies usage and finish reason from a decoded chunk.
func (r *Result) apply(ch *chunk) {
	if ch.hasFinish && string(ch.finish) != r.FinishReason {
		r.FinishReason = jsonText(ch.finish)
	}
	if ch.usage {
		r.HasUsage = true
		r.PromptTokens, r.CompletionTokens = ch.prompt, ch.completion
		if ch.hasCached {
			r.CachedTokens, r.HasCachedTokens = ch.cached, true
		}
	}
}

// failIO classifies an I/O error: the job's timeout, an interrupt
// (cancellation of the caller's context), or a transport failure.
func (c *Client) failIO(r *Result, ctx context.Context, clock Clock, prefix string, err error) {
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), errJobTimeout) {
			r.fail(StatusTimeout, "HTTP timeout: "+timeoutDetail(r), clock)
			return
		}
		r.fail(StatusError, "cancelled: "+causeText(ctx)+progressDetail(r), clock)
		return
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if errors.Is(err, io.EOF) && r.HTTPStatus == 0 {
		msg = "server closed the connection before responding"
	}
	r.fail(StatusError, prefix+msg+progressDetail(r), clock)
}

// timeoutDetail says what was missing when the time limit (from the send)
// ran out.
func timeoutDetail(r *Result) string {
	limit := r.limit.Round(time.Millisecond)
	switch {
	case r.HTTPStatus == 0:
		return fmt.Sprintf("no response within %v", limit)
	case r.NumChunks == 0 && r.FirstChunkUS == 0:
		return fmt.Sprintf("no data within %v", limit)
	default:
		return fmt.Sprintf("response not complete within %v (after %d chunks)", limit, r.NumChunks)
	}
}

func progressDetail(r *Result) string {
	if r.HTTPStatus == 0 || !r.Job.Stream {
		return ""
	}
	return fmt.Sprintf(" (after %d chunks)", r.NumChunks)
}

// causeText is the text of a cancelled context's cause.
func causeText(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil {
		return cause.Error()
	}
	return "context cancelled"
}

// oneLine turns a body into a single trimmed line of valid, printable
// UTF-8 (see Printable).
func oneLine(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = Printable(strings.Join(strings.Fields(s), " "))
	if len(s) > maxErrorBodyBytes {
		s = s[:maxErrorBodyBytes]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// jsonText unescapes a raw JSON string body (as returned by jscan.str).
func jsonText(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return oneLine(raw)
	}
	var s string
	quoted := append(append([]byte{'"'}, raw...), '"')
	if json.Unmarshal(quoted, &s) != nil {
		return oneLine(raw)
	}
	return oneLine([]byte(s))
}
