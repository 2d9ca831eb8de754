package httpload_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/httpload/fakevllm"
)

// start runs a fake server for the test and a client pointed at it.
func start(t *testing.T, cfg fakevllm.Config, ccfg httpload.Config) (*fakevllm.Server, *httpload.Client) {
	t.Helper()
	srv, err := fakevllm.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ccfg.BaseURL = srv.URL()
	c, err := httpload.NewClient(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return srv, c
}

// testCtx bounds a test's waits.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func jobsOf(js []httpload.Job) func(func(httpload.Job) bool) {
	return func(yield func(httpload.Job) bool) {
		for _, j := range js {
			if !yield(j) {
				return
			}
		}
	}
}

// runAll dispatches jobs and returns the results indexed by job ID.
func runAll(t *testing.T, ctx context.Context, c httpload.Sender, cfg httpload.DispatchConfig, js []httpload.Job) (map[int64]httpload.Result, httpload.Stats, error) {
	t.Helper()
	d, err := httpload.NewDispatcher(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]httpload.Result{}
	stats, err := d.Run(ctx, httpload.NewClock(time.Now()), httpload.Plan{Jobs: jobsOf(js)}, func(r httpload.Result) {
		if _, dup := got[r.Job.ID]; dup {
			t.Errorf("job %d has two results", r.Job.ID)
		}
		got[r.Job.ID] = r
	})
	return got, stats, err
}

// TestFaultsEachGetTheirStatus sends every fault, streamed and not, in one
// open-loop run: each job gets exactly one Result with the right status
// and message.
func TestFaultsEachGetTheirStatus(t *testing.T) {
	srv, c := start(t, fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond, OutputTokens: 6, MaxModelLen: 4096,
		Fault: fakevllm.HeaderFault}, httpload.Config{Model: "m"})
	tests := []struct {
		fault   string
		stream  bool
		chat    bool
		timeout time.Duration
		prompt  string
		maxTok  int
		status  httpload.Status
		msg     string // regexp, anchored
	}{
		{"", true, true, 0, "", 0, httpload.StatusOK, ``},
		{"", false, false, 0, "", 0, httpload.StatusOK, ``},
		{"http status=503", true, false, 0, "", 0, httpload.StatusError,
			`HTTP 503: \{"error":\{"message":"injected fault","type":"ServiceUnavailableError","param":null,"code":503\}\}`},
		{"http status=429", false, true, 0, "", 0, httpload.StatusError, `HTTP 429: .*TooManyRequestsError.*`},
		{"reset before-head", true, true, 0, "", 0, httpload.StatusError, `HTTP error: (server closed the connection before responding|.*connection reset by peer)`},
		{"reset after=3", true, true, 0, "", 0, httpload.StatusError, `streaming error: .*(connection reset by peer|unexpected EOF).* \(after [0-3] chunks\)`},
		{"reset", false, false, 0, "", 0, httpload.StatusError, `HTTP error: (server closed the connection before responding|.*connection reset by peer)`},
		{"stall after=2", true, false, 300 * time.Millisecond, "", 0, httpload.StatusTimeout, `HTTP timeout: response not complete within 300ms \(after 2 chunks\)`},
		{"stall before-head", true, true, 300 * time.Millisecond, "", 0, httpload.StatusTimeout, `HTTP timeout: no response within 300ms`},
		{"stall", false, false, 300 * time.Millisecond, "", 0, httpload.StatusTimeout, `HTTP timeout: no response within 300ms`},
		{"garbage after=2", true, true, 0, "", 0, httpload.StatusError, `streaming error: chunk 3: invalid JSON at byte \d+: unterminated string`},
		{"garbage", false, false, 0, "", 0, httpload.StatusError, `response error: invalid JSON at byte \d+: unexpected end`},
		{"stream-error after=2", true, false, 0, "", 0, httpload.StatusError, `streaming error: server error in chunk 3: injected stream error`},
		{"no-done after=4", true, true, 0, "", 0, httpload.StatusError, `streaming error: stream ended before \[DONE\] after 4 chunks`},
		{"", true, false, 0, strings.Repeat("word ", 5000), 0, httpload.StatusError, `HTTP 400: .*exceeds max_model_len 4096.*`},
	}
	var jobs []httpload.Job
	for i, tc := range tests {
		j := httpload.Job{ID: int64(i), IntendedUS: int64(i) * 100, Stream: tc.stream, Chat: tc.chat, Timeout: tc.timeout,
			Prompt: "the of and", MaxTokens: tc.maxTok}
		if tc.prompt != "" {
			j.Prompt = tc.prompt
		}
		if tc.fault != "" {
			j.Headers = http.Header{fakevllm.FaultHeader: {tc.fault}}
		}
		jobs = append(jobs, j)
	}
	// A job that cannot be built still gets its Result, unsent.
	jobs = append(jobs, httpload.Job{ID: 99, Prompt: "x", MaxTokens: 2, MinTokens: 5})
	got, stats, err := runAll(t, testCtx(t), c, httpload.DispatchConfig{}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(jobs) || stats.Results != int64(len(jobs)) {
		t.Fatalf("%d results (stats %d) for %d jobs", len(got), stats.Results, len(jobs))
	}
	for i, tc := range tests {
		r := got[int64(i)]
		if r.Status != tc.status || !regexp.MustCompile(`^`+tc.msg+`$`).MatchString(r.Error) {
			t.Errorf("fault %q (stream %v): got %s %q, want %s matching %q", tc.fault, tc.stream, r.Status, r.Error, tc.status, tc.msg)
		}
		if r.SendUS == 0 || r.DoneUS < r.SendUS {
			t.Errorf("fault %q: send %d done %d", tc.fault, r.SendUS, r.DoneUS)
		}
	}
	if r := got[99]; r.Status != httpload.StatusError || r.Sent() || r.Error != "request error: job 99: min_tokens 5 exceeds max_tokens 2" {
		t.Errorf("unbuildable job: %s %q sent=%v", r.Status, r.Error, r.Sent())
	}
	if ok := got[0]; ok.NumChunks != 8 || ok.TextChunks != 6 || ok.CompletionTokens != 6 || ok.FinishReason != "length" {
		t.Errorf("ok chat stream: %d chunks, %d text, %d tokens, finish %q; want 8 (role + 6 + usage), 6, 6, length",
			ok.NumChunks, ok.TextChunks, ok.CompletionTokens, ok.FinishReason)
	}
	if st := srv.Stats(); st.Requests != int64(len(tests)) {
		t.Errorf("server saw %d requests, want %d", st.Requests, len(tests))
	}
}

func TestRequestCarriesJobFields(t *testing.T) {
	srv, c := start(t, fakevllm.Config{}, httpload.Config{Model: "base", APIKey: "sk-test",
		Headers: http.Header{"X-Custom": {"c"}}})
	clock := httpload.NewClock(time.Now())
	r := c.Do(testCtx(t), clock, httpload.Job{ID: 7, Prompt: "hello there", Chat: true, Stream: true, Model: "tagged",
		MaxTokens: 3, MinTokens: 3, IgnoreEOS: true, Priority: 5, HasPriority: true,
		RequestID: "0b9c2f0e-1111-4222-8333-444455556666", Objective: "critical", FairnessID: "acme", SLOTTFTms: 250,
		Headers: http.Header{"X-Custom": {"job"}}})
	if r.Status != httpload.StatusOK {
		t.Fatalf("%s %s", r.Status, r.Error)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	q := reqs[0]
	got := []string{q.Path, q.Model, q.Prompt, q.Header.Get("Authorization"), q.Header.Get("X-Request-Id"),
		q.Header.Get("X-Gateway-Inference-Objective"), q.Header.Get("X-Gateway-Inference-Fairness-Id"),
		q.Header.Get("X-Slo-Ttft-Ms"), q.Header.Get("X-Custom"), q.Header.Get("Accept-Encoding")}
	want := []string{"/v1/chat/completions", "tagged", "hello there", "Bearer sk-test", "0b9c2f0e-1111-4222-8333-444455556666",
		"critical", "acme", "250", "job", ""}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if q.MaxTokens != 3 || q.MinTokens != 3 || !q.IgnoreEOS || q.Priority == nil || *q.Priority != 5 || !q.Stream || !q.IncludeUsage {
		t.Errorf("body: %+v", q)
	}
	// The completions endpoint, not streamed, and the client's model.
	c.Do(testCtx(t), clock, httpload.Job{ID: 8, Prompt: "x"})
	q = srv.Requests()[1]
	if q.Path != "/v1/completions" || q.Model != "base" || q.Stream || q.IncludeUsage || q.Priority != nil || q.MaxTokens != 16 {
		t.Errorf("defaults: %+v", q)
	}
}

func TestClientConfigErrors(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "http://", "http://h/?q=1", "::"} {
		if _, err := httpload.NewClient(httpload.Config{BaseURL: u}); err == nil {
			t.Errorf("base url %q accepted", u)
		}
	}
	c, err := httpload.NewClient(httpload.Config{BaseURL: "http://127.0.0.1:1/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Do(testCtx(t), httpload.NewClock(time.Now()), httpload.Job{Prompt: "x"})
	if r.Status != httpload.StatusError || !strings.HasPrefix(r.Error, "HTTP error: dial tcp 127.0.0.1:1: connect: connection refused") {
		t.Errorf("refused: %s %q", r.Status, r.Error)
	}
	if r := c.Do(testCtx(t), httpload.NewClock(time.Now()), httpload.Job{PromptTokens: 5}); r.Error != "request error: job gives token counts but the client has no Prompter" {
		t.Errorf("no prompter: %q", r.Error)
	}
}

func TestDeadlineOnTheRunClock(t *testing.T) {
	_, c := start(t, fakevllm.Config{Fault: fakevllm.HeaderFault}, httpload.Config{})
	clock := httpload.NewClock(time.Now().Add(-time.Second)) // the run began a second ago
	stall := http.Header{fakevllm.FaultHeader: {"stall before-head"}}
	r := c.Do(testCtx(t), clock, httpload.Job{Prompt: "x", DeadlineUS: 500_000, Headers: stall})
	if r.Status != httpload.StatusTimeout || r.Sent() || !regexp.MustCompile(`^HTTP timeout: deadline passed 50\d\.\d+ms before the request could be sent$`).MatchString(r.Error) {
		t.Errorf("past deadline: %s %q sent=%v", r.Status, r.Error, r.Sent())
	}
	r = c.Do(testCtx(t), clock, httpload.Job{Prompt: "x", DeadlineUS: clock.Now() + 100_000, Timeout: time.Hour, Headers: stall})
	if r.Status != httpload.StatusTimeout || !r.Sent() || !regexp.MustCompile(`^HTTP timeout: no response within (9\d|100)ms$`).MatchString(r.Error) {
		t.Errorf("deadline before the timeout: %s %q", r.Status, r.Error)
	}
	// A deadline not after the intended send time could only be missed:
	// the job is never sent, even while the deadline is still ahead on the
	// wall clock (intended an hour from now; a run whose origin is an hour
	// away, with a deadline at its first instant, 1 µs, for a job at 0).
	later := clock.Now() + time.Hour.Microseconds()
	future := httpload.NewClock(time.Now().Add(time.Hour))
	for _, tc := range []struct {
		clock              httpload.Clock
		intended, deadline int64
	}{{clock, later, later}, {clock, later, later - 1}, {future, 0, 1}} {
		r = c.Do(testCtx(t), tc.clock, httpload.Job{Prompt: "x", IntendedUS: tc.intended, DeadlineUS: tc.deadline, Timeout: 50 * time.Millisecond, Headers: stall})
		if r.Status != httpload.StatusTimeout || r.Sent() {
			t.Errorf("deadline %d µs for a send intended at %d µs: %s %q, sent=%v; want a timeout, not sent", tc.deadline, tc.intended, r.Status, r.Error, r.Sent())
		}
	}
}
