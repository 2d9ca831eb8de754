package httpload

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Config configures a Client. Only BaseURL is required.
type Config struct {
	// BaseURL is the server root, e.g. "http://127.0.0.1:8000"; a trailing
	// "/v1" is accepted and dropped. Requests go to /v1/completions,
	// /v1/chat/completions, /tokenize and /metrics under it.
	BaseURL string
	Model   string // default "model" field; a Job's Model overrides it
	APIKey  string // sent as "Authorization: Bearer <key>" when set; never logged
	// Headers are added to every request (custom headers); a Job's own
	// headers win on conflict.
	Headers http.Header

	// InsecureSkipVerify disables TLS certificate checks (only when asked).
	InsecureSkipVerify bool
	// MaxConns is the number of keep-alive connections kept per host; it
	// should be at least the peak number of concurrent streams. Default 4096.
	MaxConns int
	// DialTimeout bounds connection set-up. Default 30s.
	DialTimeout time.Duration
	// MaxEventBytes bounds one SSE line or event. Default
	// DefaultMaxEventBytes. (A non-streamed body is bounded at 64 MiB.)
	MaxEventBytes int

	// Prompter builds prompt text for jobs that give token counts instead of
	// text. Required only for such jobs.
	Prompter *Prompter

	// Transport replaces the tuned transport (tests, proxies); optional.
	Transport http.RoundTripper
}

// Client sends Jobs to one OpenAI-compatible server. It is safe for
// concurrent use.
type Client struct {
	cfg       Config
	base      string // scheme://host[:port][/prefix], no trailing slash or /v1
	hc        *http.Client
	transport *http.Transport // nil when Config.Transport was given
	bufs      sync.Pool       // *[]byte read buffers of readBufBytes
	// drainAfterDone bounds reading the body after [DONE] (drainAfterDone).
	drainAfterDone time.Duration
	red            Redactor // applied to every error text that leaves the client
}

// maxBodyBytes bounds a non-streamed response body.
const maxBodyBytes = 64 << 20

// maxErrorBodyBytes bounds the part of an error response body that is read
// and quoted in Result.Error.
const maxErrorBodyBytes = 2048

// NewClient validates cfg and builds a client with a transport tuned for
// many concurrent streams: HTTP/1.1 keep-alive (one connection per stream,
// as vLLM benchmarks use), no HTTP/2, no compression (it would delay SSE
// chunks and distort their times), and enough idle connections per host
// that none is closed and re-dialled between requests.
func NewClient(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("httpload: base url %q: %w", cfg.BaseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("httpload: base url %q: scheme must be http or https", cfg.BaseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("httpload: base url %q: no host", cfg.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("httpload: base url %q: must not have a query or fragment", cfg.BaseURL)
	}
	if cfg.MaxConns < 0 || cfg.DialTimeout < 0 || cfg.MaxEventBytes < 0 {
		return nil, errors.New("httpload: config: MaxConns, DialTimeout and MaxEventBytes must not be negative")
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 4096
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 30 * time.Second
	}
	if cfg.MaxEventBytes == 0 {
		cfg.MaxEventBytes = DefaultMaxEventBytes
	}
	path := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	c := &Client{cfg: cfg, base: u.Scheme + "://" + u.Host + path, drainAfterDone: drainAfterDone, red: NewRedactor(cfg)}
	rt := cfg.Transport
	if rt == nil {
		c.transport = &http.Transport{
			Proxy: http.ProxyFromEnvironment,
			DialContext: (&net.Dialer{
				Timeout:   cfg.DialTimeout,
				KeepAlive: 30 * time.Second,
			}).DialContext,
			MaxIdleConns:        0, // no global limit
			MaxIdleConnsPerHost: cfg.MaxConns,
			MaxConnsPerHost:     0, // never queue a request behind a hidden cap
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: cfg.DialTimeout,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
			// A non-nil empty map turns HTTP/2 off on TLS connections.
			TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
			TLSClientConfig: &tls.Config{InsecureSkipVerify: cfg.InsecureSkipVerify}, //nolint:gosec // only when the user asks
			ReadBufferSize:  16 << 10,
			WriteBufferSize: 16 << 10,
		}
		rt = c.transport
	}
	// No http.Client.Timeout: a Job's timeout runs on its context, so a
	// timeout can be told apart from an interrupt.
	c.hc = &http.Client{
		Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer to record, not to follow
		},
	}
	return c, nil
}

// Close releases idle connections.
func (c *Client) Close() {
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

// Prepared is a job whose request body has been built, ready to send at its
// intended time without further work on the hot path.
type Prepared struct {
	Job  Job
	url  string
	body []byte
	err  error // the job could not be turned into a request
}

// Prepare builds the request body of a job (prompt text included). A job
// that cannot be built gives a Prepared whose Send reports StatusError with
// a "request error:" message, so the job still gets its Result.
func (c *Client) Prepare(job Job) Prepared {
	p := Prepared{Job: job, url: c.base + "/v1/completions"}
	if job.Chat {
		p.url = c.base + "/v1/chat/completions"
	}
	prompt := job.Prompt
	if prompt == "" && (job.PromptTokens > 0 || job.PrefixTokens > 0) {
		if c.cfg.Prompter == nil {
			p.err = errors.New("job gives token counts but the client has no Prompter")
			return p
		}
		prompt = c.cfg.Prompter.Prompt(job.ID, job.PrefixGroup, job.PrefixTokens, job.PromptTokens)
	}
	model := job.Model
	if model == "" {
		model = c.cfg.Model
	}
	p.body, p.err = encodeBody(job, model, prompt)
	return p
}

// Do prepares and sends a job at once.
func (c *Client) Do(ctx context.Context, clock Clock, job Job) Result {
	return c.Send(ctx, clock, c.Prepare(job))
}

// newRequest builds the HTTP request of a prepared job.
func (c *Client) newRequest(ctx context.Context, p *Prepared) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytesReader(p.body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	for k, vs := range c.cfg.Headers {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	for k, vs := range p.Job.Headers {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	h.Set("Content-Type", "application/json")
	if p.Job.Stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if c.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	j := &p.Job
	if j.RequestID != "" {
		h.Set("X-Request-Id", j.RequestID)
	}
	if j.Objective != "" {
		h.Set("X-Gateway-Inference-Objective", j.Objective)
	}
	if j.FairnessID != "" {
		h.Set("X-Gateway-Inference-Fairness-Id", j.FairnessID)
	}
	if j.SLOTTFTms > 0 {
		h.Set("X-Slo-Ttft-Ms", fmt.Sprint(j.SLOTTFTms))
	}
	return req, nil
}

// setCommon adds what every request to the server carries: the custom
// headers of Config.Headers and the API key. The completion requests add
// their own headers on top (newRequest); /tokenize, /metrics and the
// prewarm's /v1/models use it alone, so a gateway that routes or admits by
// a custom header sees it on them too.
func (c *Client) setCommon(req *http.Request) {
	for k, vs := range c.cfg.Headers {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
}
