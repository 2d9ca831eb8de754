package fakevllm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Config shapes the fake server. The zero value streams 16 tokens per
// request with no delay.
type Config struct {
	// TTFT is the time from a request's admission (its body read) to the
	// first content chunk; the role chunk of a chat stream goes out with it,
	// as vLLM sends both after the first engine step.
	TTFT time.Duration
	// ITL is the time between consecutive content chunks.
	ITL time.Duration
	// OutputTokens is the answer length when a request gives no max_tokens.
	// Default 16. A request's max_tokens is always honoured exactly.
	OutputTokens int
	// TokensPerChunk is the tokens carried by each content chunk. Default 1.
	TokensPerChunk int
	// ReasoningTokens of each answer come first as reasoning_content deltas.
	ReasoningTokens int
	// KeepAliveComments sends an SSE comment line before every chunk.
	KeepAliveComments bool
	// NoUsage never sends usage, even when stream_options asks for it.
	NoUsage bool
	// ReportCachedTokens adds usage.prompt_tokens_details.cached_tokens,
	// from a prefix cache of BlockTokens-token blocks.
	ReportCachedTokens bool
	// BlockTokens is the prefix cache block size in tokens. Default 16.
	BlockTokens int
	// CountSharedPrefix sets Request.SharedPrefixTokens: how many leading
	// prompt tokens are identical to those of an earlier request, token by
	// token (not in blocks), so a test can check the prefix sharing a
	// client meant to create.
	CountSharedPrefix bool

	// TokensPerWord sizes prompts: a prompt of w words is
	// round(w·TokensPerWord) tokens, plus one BOS token for completions and
	// ChatTemplateTokens for chat. Default 1.
	TokensPerWord      float64
	ChatTemplateTokens int // default 8
	// NoTokenize answers /tokenize with 404, as servers without it do.
	NoTokenize bool
	// MaxModelLen is reported by /tokenize. Default 8192.
	MaxModelLen int
	Model       string // default "fake-model"
	// Created is the "created" field of every response; 0 = the current
	// Unix time (set it for byte-stable output).
	Created int64

	// VLLMVersion is GET /version's answer. Default "0.10.1". NoVersion
	// answers 404 instead, as servers that are not vLLM do.
	VLLMVersion string
	NoVersion   bool
	// GPUMemoryUtilization is reported in vllm:cache_config_info. Default 0.9.
	GPUMemoryUtilization float64
	// NoPrefixCaching reports enable_prefix_caching="False" in
	// vllm:cache_config_info (the fake's cache still answers cached_tokens
	// when ReportCachedTokens asks).
	NoPrefixCaching bool
	// NoCacheConfigInfo leaves vllm:cache_config_info out of /metrics.
	NoCacheConfigInfo bool

	// MaxRunning admits at most this many requests at once (vLLM's
	// max_num_seqs); the others wait, visible in num_requests_waiting, and
	// their TTFT starts at admission. 0 = no limit.
	MaxRunning int
	// KVCapacityTokens is the denominator of kv_cache_usage_perc. Default 10⁶.
	KVCapacityTokens int

	// Steps, when set, times the answers by a step engine instead of TTFT
	// and ITL: continuous batching, each step lasting what Steps returns
	// for its composition (a latency model's step time), so that latency
	// grows with load as a real server's does. MaxBatchedTokens is the
	// prefill budget of a step (default 8192).
	Steps            func(Step) time.Duration
	MaxBatchedTokens int

	// Fault, when set, picks a fault for each completion request (n is the
	// 0-based arrival index).
	Fault func(n int64, req *Request) Fault

	// RecordTimings keeps, per x-request-id, the instant each chunk left the
	// server (see Server.Timing).
	RecordTimings bool
	// KeepRequests bounds the requests kept for Server.Requests. Default 10000.
	KeepRequests int
}

// FaultKind names an injected failure.
type FaultKind int

// The faults. AfterChunks counts SSE data events already sent (role chunk
// included) when a fault strikes mid-stream.
const (
	NoFault     FaultKind = iota
	HTTPError             // answer Status with Body instead of a completion
	Reset                 // reset the TCP connection (RST)
	Stall                 // stop sending until the client leaves, Release, or Close
	Garbage               // send a malformed SSE data event, then carry on
	StreamError           // send a vLLM error event, then [DONE]
	NoDone                // end the stream cleanly without [DONE]
)

// Fault is one injected failure.
type Fault struct {
	Kind        FaultKind
	AfterChunks int  // for mid-stream faults
	BeforeHead  bool // Reset and Stall strike before the response head
	Status      int  // HTTPError: default 500
	Body        string
}

// Request is what the server parsed from one completion request.
type Request struct {
	N            int64 // arrival index
	Path         string
	Header       http.Header
	Chat         bool
	Stream       bool
	IncludeUsage bool
	Model        string
	Prompt       string // the prompt, or the chat messages' contents joined by "\n"
	MaxTokens    int
	MinTokens    int
	IgnoreEOS    bool
	Priority     *int
	PromptTokens int // by the fake tokenizer
	// SharedPrefixTokens is the longest run of leading prompt tokens (the
	// BOS and chat template not counted) identical to the start of an
	// earlier request's prompt; set with Config.CountSharedPrefix.
	SharedPrefixTokens int
}

// Stats counts requests.
type Stats struct {
	Requests    int64 // completion requests received
	InFlight    int   // completion requests being answered
	MaxInFlight int
	Waiting     int   // held back by MaxRunning
	Completed   int64 // answers sent in full
	Stalled     int   // streams currently stalled
}

// Timing is the server's record of one request, on the monotonic clock.
type Timing struct {
	Arrived  time.Time   // the handler started
	Admitted time.Time   // body read and slot taken; TTFT counts from here
	Chunks   []time.Time // after each SSE data event was flushed ([DONE] excluded)
	// Due holds the instant each of Chunks was scheduled for: Chunks[k] −
	// Due[k] is the server's own lateness, a gauge of how loaded the
	// machine was (the role and usage chunks share their neighbour's due).
	Due []time.Time
}

// Server is a running fake vLLM.
type Server struct {
	cfg     Config
	ts      *httptest.Server
	hub     *hub
	engine  *engine // nil unless Config.Steps
	slots   chan struct{}
	release chan struct{}
	relOnce sync.Once

	mu          sync.Mutex
	stats       Stats
	changed     chan struct{} // closed and replaced on a change while watchers > 0
	watchers    int
	requests    []Request
	timings     map[string]*Timing
	cache       prefixCache
	shared      prefixCache // one-token blocks, for CountSharedPrefix
	promptTotal int64       // prefix cache queries, tokens
	cachedTotal int64       // prefix cache hits, tokens
	kvTokens    int64       // tokens of requests in flight
}

// Start validates cfg and starts a server on 127.0.0.1.
func Start(cfg Config) (*Server, error) {
	if cfg.TTFT < 0 || cfg.ITL < 0 || cfg.OutputTokens < 0 || cfg.TokensPerChunk < 0 || cfg.ReasoningTokens < 0 ||
		cfg.BlockTokens < 0 || cfg.TokensPerWord < 0 || cfg.ChatTemplateTokens < 0 || cfg.MaxModelLen < 0 ||
		cfg.MaxRunning < 0 || cfg.KVCapacityTokens < 0 || cfg.MaxBatchedTokens < 0 || cfg.KeepRequests < 0 || cfg.GPUMemoryUtilization < 0 {
		return nil, errors.New("fakevllm: config: negative value")
	}
	if cfg.OutputTokens == 0 {
		cfg.OutputTokens = 16
	}
	if cfg.TokensPerChunk == 0 {
		cfg.TokensPerChunk = 1
	}
	if cfg.BlockTokens == 0 {
		cfg.BlockTokens = 16
	}
	if cfg.TokensPerWord == 0 {
		cfg.TokensPerWord = 1
	}
	if cfg.ChatTemplateTokens == 0 {
		cfg.ChatTemplateTokens = 8
	}
	if cfg.MaxModelLen == 0 {
		cfg.MaxModelLen = 8192
	}
	if cfg.Model == "" {
		cfg.Model = "fake-model"
	}
	if cfg.KVCapacityTokens == 0 {
		cfg.KVCapacityTokens = 1_000_000
	}
	if cfg.KeepRequests == 0 {
		cfg.KeepRequests = 10000
	}
	if cfg.VLLMVersion == "" {
		cfg.VLLMVersion = "0.10.1"
	}
	if cfg.GPUMemoryUtilization == 0 {
		cfg.GPUMemoryUtilization = 0.9
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakevllm: listen: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		hub:     newHub(),
		release: make(chan struct{}),
		changed: make(chan struct{}),
		timings: map[string]*Timing{},
		cache:   newPrefixCache(maxCacheBlocks),
		shared:  newPrefixCache(maxSharedWords),
	}
	if cfg.MaxRunning > 0 {
		s.slots = make(chan struct{}, cfg.MaxRunning)
	}
	if cfg.Steps != nil {
		s.engine = newEngine(cfg.Steps, cfg.MaxBatchedTokens, s.hub)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/completions", s.handleCompletion)
	mux.HandleFunc("POST /v1/chat/completions", s.handleCompletion)
	mux.HandleFunc("POST /tokenize", s.handleTokenize)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /version", s.handleVersion)
	s.ts = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	s.ts.Start()
	return s, nil
}

// URL is the base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.ts.URL }

// Close releases stalled streams, closes every connection and waits for the
// handlers to return.
func (s *Server) Close() {
	s.Release()
	s.ts.CloseClientConnections()
	s.ts.Close()
	if s.engine != nil {
		s.engine.close()
	}
	s.hub.close()
}

// Release lets every stalled stream, present and future, carry on.
func (s *Server) Release() { s.relOnce.Do(func() { close(s.release) }) }

// Stats is a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Requests returns the parsed requests kept so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Timing returns the record of the request with that x-request-id, when
// RecordTimings is on.
func (s *Server) Timing(requestID string) (Timing, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.timings[requestID]
	if !ok {
		return Timing{}, false
	}
	c := *t
	c.Chunks = append([]time.Time(nil), t.Chunks...)
	c.Due = append([]time.Time(nil), t.Due...)
	return c, true
}

// WaitFor blocks until cond holds for the stats, or ctx ends.
func (s *Server) WaitFor(ctx context.Context, cond func(Stats) bool) error {
	s.mu.Lock()
	s.watchers++
	defer func() {
		s.mu.Lock()
		s.watchers--
		s.mu.Unlock()
	}()
	for {
		if cond(s.stats) {
			s.mu.Unlock()
			return nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("fakevllm: wait: %w", context.Cause(ctx))
		}
		s.mu.Lock()
	}
}

// update changes the stats under the lock and wakes watchers.
func (s *Server) update(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.stats.InFlight)
	if s.watchers > 0 {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.mu.Unlock()
}
