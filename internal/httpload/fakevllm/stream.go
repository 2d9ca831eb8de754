package fakevllm

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// answer is the state of one completion being sent.
type answer struct {
	s        *Server
	w        http.ResponseWriter
	r        *http.Request
	req      Request
	out      int // output tokens
	cached   int // prompt tokens served from the prefix cache
	fault    Fault
	struck   bool // the mid-stream fault has happened
	id       string
	created  int64
	base     time.Time // admission, shifted by stalls
	due      time.Time // the instant the current chunk was scheduled for
	timing   *Timing
	wake     chan struct{}
	sent     int    // SSE data events sent
	buf      []byte // one SSE event on the wire
	scratch  []byte // its JSON, built without allocating
	prefix   []byte // the JSON of every chunk up to the choice's payload
	flusher  http.Flusher
	hijacked bool
	seq      *seq // the request in the step engine (Config.Steps), else nil
	got      int  // tokens the step engine has generated for it
}

func (s *Server) handleCompletion(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	var n int64
	s.update(func(st *Stats) { n = st.Requests; st.Requests++ })
	req, out, err := s.parseRequest(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req.N = n
	var fault Fault
	if s.cfg.Fault != nil {
		fault = s.cfg.Fault(n, &req)
	}
	s.mu.Lock()
	if s.cfg.CountSharedPrefix {
		req.SharedPrefixTokens = int(math.Round(float64(s.shared.lookup(req.Prompt, 1)) * s.cfg.TokensPerWord))
	}
	if len(s.requests) < s.cfg.KeepRequests {
		s.requests = append(s.requests, req)
	}
	s.mu.Unlock()
	if fault.Kind == HTTPError {
		status := fault.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		if fault.Body != "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(status)
			fmt.Fprint(w, fault.Body)
			return
		}
		writeError(w, status, "injected fault")
		return
	}
	if s.slots != nil {
		s.update(func(st *Stats) { st.Waiting++ })
		select {
		case s.slots <- struct{}{}:
			s.update(func(st *Stats) { st.Waiting-- })
			defer func() { <-s.slots }()
		case <-r.Context().Done():
			s.update(func(st *Stats) { st.Waiting-- })
			return
		}
	}
	a := &answer{s: s, w: w, r: r, req: req, out: out, fault: fault, base: time.Now(),
		created: s.cfg.Created, wake: make(chan struct{}, 1), buf: make([]byte, 0, 512)}
	if a.created == 0 {
		a.created = time.Now().Unix()
	}
	a.flusher, _ = w.(http.Flusher)
	a.id = "cmpl-" + strconv.FormatInt(n, 10)
	if req.Chat {
		a.id = "chatcmpl-" + strconv.FormatInt(n, 10)
	}
	s.mu.Lock()
	a.cached = int(float64(s.cache.lookup(req.Prompt, s.cfg.BlockTokens)) * s.cfg.TokensPerWord)
	a.cached = min(a.cached, req.PromptTokens-1)
	s.promptTotal += int64(req.PromptTokens)
	s.cachedTotal += int64(a.cached)
	s.kvTokens += int64(req.PromptTokens + out)
	if id := req.Header.Get("X-Request-Id"); s.cfg.RecordTimings && id != "" {
		a.timing = &Timing{Arrived: arrived, Admitted: a.base}
		s.timings[id] = a.timing
	}
	s.mu.Unlock()
	s.update(func(st *Stats) { st.InFlight++ })
	defer func() {
		s.mu.Lock()
		s.kvTokens -= int64(req.PromptTokens + out)
		s.mu.Unlock()
		s.update(func(st *Stats) { st.InFlight-- })
	}()

	if s.engine != nil {
		a.seq = s.engine.join(req.PromptTokens, out)
		defer s.engine.leave(a.seq)
	}
	if fault.BeforeHead {
		switch fault.Kind {
		case Reset:
			a.reset()
			return
		case Stall:
			if !a.stall() {
				return
			}
		}
	}
	var complete bool
	if req.Stream {
		complete = a.stream()
	} else {
		complete = a.whole()
	}
	if complete {
		s.update(func(st *Stats) { st.Completed++ })
	}
}

// sleepUntil waits for an instant offset from the (stall-shifted) base.
func (a *answer) sleepUntil(offset time.Duration) bool {
	a.due = a.base.Add(offset)
	return a.s.hub.sleepUntil(a.due, a.wake, a.r.Context().Done())
}

// stall blocks until Release or the client leaves (false); the remaining
// schedule shifts by the stall.
func (a *answer) stall() bool {
	a.s.update(func(st *Stats) { st.Stalled++ })
	defer a.s.update(func(st *Stats) { st.Stalled-- })
	start := time.Now()
	select {
	case <-a.s.release:
		a.base = a.base.Add(time.Since(start))
		return true
	case <-a.r.Context().Done():
		return false
	}
}

// reset aborts the connection with a TCP RST.
func (a *answer) reset() {
	hj, ok := a.w.(http.Hijacker)
	if !ok {
		return // not HTTP/1.1: the stream just ends early
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	a.hijacked = true
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// strike applies a due mid-stream fault. It reports whether the stream
// goes on.
func (a *answer) strike() bool {
	if a.struck || a.fault.Kind == NoFault || a.fault.BeforeHead || a.sent < a.fault.AfterChunks {
		return true
	}
	a.struck = true
	switch a.fault.Kind {
	case Reset:
		a.reset()
		return false
	case Stall:
		return a.stall()
	case Garbage:
		a.write([]byte(`{"id":"` + a.id + `","choices":[{"delta":{"content":"tok`))
		return true
	case StreamError:
		a.write([]byte(`{"error":{"message":"injected stream error","type":"InternalServerError","param":null,"code":500}}`))
		a.writeRaw("data: [DONE]\n\n")
		return false
	case NoDone:
		return false
	}
	return true
}

// write sends one SSE data event and records its instant.
func (a *answer) write(data []byte) {
	if a.s.cfg.KeepAliveComments {
		a.writeRaw(": keep-alive\n\n")
	}
	a.buf = append(append(append(a.buf[:0], "data: "...), data...), "\n\n"...)
	_, _ = a.w.Write(a.buf)
	a.flush()
	a.sent++
	a.record()
}

// record notes the instant a chunk left, and when it was due.
func (a *answer) record() {
	if a.timing != nil {
		now := time.Now()
		a.s.mu.Lock()
		a.timing.Chunks = append(a.timing.Chunks, now)
		a.timing.Due = append(a.timing.Due, a.due)
		a.s.mu.Unlock()
	}
}

func (a *answer) writeRaw(s string) {
	_, _ = io.WriteString(a.w, s)
	a.flush()
}

func (a *answer) flush() {
	if a.flusher != nil {
		a.flusher.Flush()
	}
}

// stream sends an SSE answer; it reports whether it went out in full.
func (a *answer) stream() bool {
	h := a.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	a.w.WriteHeader(http.StatusOK)
	a.flush() // vLLM sends the head at once, before the first token
	cfg := &a.s.cfg
	chunks := (a.out + cfg.TokensPerChunk - 1) / cfg.TokensPerChunk
	model := jsonString(a.req.Model)
	if a.req.Model == "" {
		model = jsonString(cfg.Model)
	}
	if a.req.Chat {
		a.prefix = fmt.Appendf(nil, `{"id":"%s","object":"chat.completion.chunk","created":%d,"model":%s,"choices":[{"index":0,"delta":`,
			a.id, a.created, model)
	} else {
		a.prefix = fmt.Appendf(nil, `{"id":"%s","object":"text_completion","created":%d,"model":%s,"choices":[{"index":0,"text":`,
			a.id, a.created, model)
	}
	for k := range chunks {
		if !a.awaitChunk(k) {
			return false
		}
		if k == 0 && a.req.Chat {
			if !a.strike() {
				return false
			}
			a.write(append(append(a.scratch[:0], a.prefix...), `{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`...))
		}
		if !a.strike() {
			return false
		}
		first, n := k*cfg.TokensPerChunk, min(cfg.TokensPerChunk, a.out-k*cfg.TokensPerChunk)
		finish := "null"
		if k == chunks-1 {
			finish = `"length"`
		}
		b := append(a.scratch[:0], a.prefix...)
		if a.req.Chat {
			key := "content"
			if first < cfg.ReasoningTokens {
				key = "reasoning_content"
			}
			b = append(append(append(b, `{"`...), key...), `":`...)
		}
		b = appendTokens(b, n)
		if a.req.Chat {
			b = append(b, '}')
		}
		b = append(append(b, `,"logprobs":null,"finish_reason":`...), finish...)
		if !a.req.Chat {
			b = append(b, `,"stop_reason":null`...)
		}
		a.scratch = append(b, "}]}"...)
		a.write(a.scratch)
	}
	if a.req.IncludeUsage && !cfg.NoUsage {
		if !a.strike() {
			return false
		}
		a.write(a.usageChunk(model))
	}
	if !a.strike() {
		return false
	}
	a.writeRaw("data: [DONE]\n\n")
	return true
}

// whole sends a non-streamed answer once all its tokens are "generated".
func (a *answer) whole() bool {
	cfg := &a.s.cfg
	chunks := (a.out + cfg.TokensPerChunk - 1) / cfg.TokensPerChunk
	if !a.awaitChunk(chunks - 1) {
		return false
	}
	if a.fault.Kind != NoFault && !a.fault.BeforeHead {
		switch a.fault.Kind {
		case Reset:
			a.reset()
			return false
		case Stall:
			if !a.stall() {
				return false
			}
		case Garbage:
			a.w.Header().Set("Content-Type", "application/json")
			_, _ = a.w.Write([]byte(`{"id":"` + a.id + `","choices":[{"text":`))
			return false
		case StreamError:
			writeError(a.w, http.StatusInternalServerError, "injected error")
			return false
		}
	}
	model := jsonString(a.req.Model)
	if a.req.Model == "" {
		model = jsonString(cfg.Model)
	}
	text := jsonString(tokenText(a.out))
	var body string
	if a.req.Chat {
		body = fmt.Sprintf(`{"id":"%s","object":"chat.completion","created":%d,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":%s},"logprobs":null,"finish_reason":"length"}],"usage":%s}`,
			a.id, a.created, model, text, a.usage())
	} else {
		body = fmt.Sprintf(`{"id":"%s","object":"text_completion","created":%d,"model":%s,"choices":[{"index":0,"text":%s,"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":%s}`,
			a.id, a.created, model, text, a.usage())
	}
	a.w.Header().Set("Content-Type", "application/json")
	_, _ = a.w.Write([]byte(body))
	a.record()
	return true
}

// awaitChunk waits until content chunk k (0-based) is due: at TTFT +
// k·ITL, or, with the step engine, when its last token is generated.
func (a *answer) awaitChunk(k int) bool {
	if a.seq == nil {
		return a.sleepUntil(a.s.cfg.TTFT + time.Duration(k)*a.s.cfg.ITL)
	}
	for a.got < min((k+1)*a.s.cfg.TokensPerChunk, a.out) {
		select {
		case <-a.seq.tokens:
			a.got++
		case <-a.r.Context().Done():
			return false
		}
	}
	a.due = time.Now()
	return true
}

// appendTokens appends the JSON string of n generated tokens (" tok" each;
// nothing to escape).
func appendTokens(b []byte, n int) []byte {
	b = append(b, '"')
	for range n {
		b = append(b, " tok"...)
	}
	return append(b, '"')
}

func (a *answer) usageChunk(model string) []byte {
	object := "text_completion"
	if a.req.Chat {
		object = "chat.completion.chunk"
	}
	return fmt.Appendf(nil, `{"id":"%s","object":"%s","created":%d,"model":%s,"choices":[],"usage":%s}`,
		a.id, object, a.created, model, a.usage())
}

func (a *answer) usage() string {
	p, c := a.req.PromptTokens, a.out
	if a.s.cfg.ReportCachedTokens {
		return fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}`, p, p+c, c, a.cached)
	}
	return fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d,"prompt_tokens_details":null}`, p, p+c, c)
}

// tokenText is the text of n generated tokens.
func tokenText(n int) string {
	b := make([]byte, 0, 4*n)
	for range n {
		b = append(b, " tok"...)
	}
	return string(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// writeError answers with vLLM's error body; the type is named like
// vLLM's ("BadRequestError").
func writeError(w http.ResponseWriter, status int, msg string) {
	typ := strings.ReplaceAll(http.StatusText(status), " ", "")
	if !strings.HasSuffix(typ, "Error") {
		typ += "Error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":%s,"param":null,"code":%d}}`, jsonString(msg), jsonString(typ), status)
}
