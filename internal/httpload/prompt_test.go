package httpload_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/httpload/fakevllm"
)

func TestPrompter(t *testing.T) {
	p, err := httpload.NewPrompter(42, 1.25)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := httpload.NewPrompter(42, 1.25)
	other, _ := httpload.NewPrompter(43, 1.25)
	if p.Prefix("sys", 100) != q.Prefix("sys", 100) || p.Text(7, 50) != q.Text(7, 50) {
		t.Error("same seed, group and id gave different text")
	}
	if p.Prefix("sys", 100) == other.Prefix("sys", 100) || p.Prefix("sys", 100) == p.Prefix("tools", 100) {
		t.Error("another seed or group gave the same prefix")
	}
	if got := len(strings.Fields(p.Prefix("sys", 100))); got != 80 {
		t.Errorf("100 tokens at 1.25 tokens/word: %d words, want 80", got)
	}
	if long, short := p.Prefix("sys", 200), p.Prefix("sys", 100); !strings.HasPrefix(long, short+" ") {
		t.Error("a shorter prefix of a group is not a prefix of a longer one")
	}
	a, b := p.Text(1, 40), p.Text(2, 40)
	if a == b || strings.Fields(a)[0] == strings.Fields(b)[0] && strings.Fields(a)[1] == strings.Fields(b)[1] {
		t.Errorf("jobs 1 and 2 share leading text: %q / %q", a[:20], b[:20])
	}
	whole := p.Prompt(3, "sys", 100, 40)
	if !strings.HasPrefix(whole, p.Prefix("sys", 100)+" ") || !strings.HasSuffix(whole, " "+p.Text(3, 40)) {
		t.Error("prompt is not prefix + own text")
	}
	if p.Words(0) != 0 || p.Words(1) != 1 || p.Prompt(1, "", 0, 0) != "" {
		t.Error("empty and tiny sizes")
	}
	for _, r := range []float64{0, 0.05, 11, math.NaN()} {
		if _, err := httpload.NewPrompter(1, r); err == nil {
			t.Errorf("ratio %v accepted", r)
		}
	}
}

func TestCalibrate(t *testing.T) {
	tests := []struct {
		name       string
		noTokenize bool
		ratio      float64
		source     string
	}{
		{"tokenize", false, 1.3, "tokenize"},
		{"usage fallback", true, 1.301, "usage"}, // 1,300 tokens + BOS for 1,000 words
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, fakevllm.Config{TokensPerWord: 1.3, NoTokenize: tc.noTokenize, MaxModelLen: 4096}, httpload.Config{})
			cal, err := c.Calibrate(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(cal.TokensPerWord-tc.ratio) > 1e-9 || cal.Source != tc.source || cal.Words != 1000 {
				t.Errorf("got %+v, want ratio %v from %s", cal, tc.ratio, tc.source)
			}
		})
	}
}

// TestPromptSizesAndSharedPrefix: jobs sized in tokens reach the server at
// the sampled length (after calibration), and a group's prefix is
// byte-identical, so the server's prefix cache hits it.
func TestPromptSizesAndSharedPrefix(t *testing.T) {
	srv, probe := start(t, fakevllm.Config{TokensPerWord: 1.3, ReportCachedTokens: true, BlockTokens: 16}, httpload.Config{})
	cal, err := probe.Calibrate(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := httpload.NewPrompter(9, cal.TokensPerWord)
	if err != nil {
		t.Fatal(err)
	}
	c, err := httpload.NewClient(httpload.Config{BaseURL: srv.URL(), Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	clock := httpload.NewClock(time.Now())
	for id := int64(1); id <= 3; id++ {
		r := c.Do(testCtx(t), clock, httpload.Job{ID: id, PrefixGroup: "sys", PrefixTokens: 260, PromptTokens: 130, MaxTokens: 1})
		want := 260 + 130 + 1 // + BOS
		if r.Status != httpload.StatusOK || math.Abs(float64(r.PromptTokens-want)) > 2 {
			t.Errorf("job %d: %s %q, server counted %d prompt tokens, want %d ± 2", id, r.Status, r.Error, r.PromptTokens, want)
		}
		if id > 1 && r.CachedTokens < 240 {
			t.Errorf("job %d: %d cached tokens; the 260-token prefix should hit", id, r.CachedTokens)
		}
	}
	reqs := srv.Requests()
	pre := p.Prefix("sys", 260)
	for _, q := range reqs[len(reqs)-3:] {
		if !strings.HasPrefix(q.Prompt, pre+" ") {
			t.Errorf("request %d does not start with the group's prefix", q.N)
		}
	}
}

func TestScrapeMetricsFromServer(t *testing.T) {
	srv, c := start(t, fakevllm.Config{MaxRunning: 2, Fault: func(int64, *fakevllm.Request) fakevllm.Fault {
		return fakevllm.Fault{Kind: fakevllm.Stall, BeforeHead: true}
	}}, httpload.Config{})
	ctx := testCtx(t)
	clock := httpload.NewClock(time.Now())
	done := make(chan httpload.Result, 3)
	for i := range 3 {
		go func() { done <- c.Do(ctx, clock, httpload.Job{ID: int64(i), Prompt: "a b c d", MaxTokens: 2}) }()
	}
	if err := srv.WaitFor(ctx, func(s fakevllm.Stats) bool { return s.Stalled == 2 && s.Waiting == 1 }); err != nil {
		t.Fatal(err)
	}
	m, err := c.ScrapeMetrics(ctx) // two admitted prompts of 4 words + BOS; one waiting
	if err != nil {
		t.Fatal(err)
	}
	if m.Running != 2 || m.Waiting != 1 || !m.HasKVCacheUsage || m.KVCacheUsage <= 0 || m.PrefixCacheQueries != 10 {
		t.Errorf("scrape during the run: %+v", m)
	}
	srv.Release()
	for range 3 {
		if r := <-done; r.Status != httpload.StatusOK {
			t.Errorf("job %d: %s %q", r.Job.ID, r.Status, r.Error)
		}
	}
	bad, _ := httpload.NewClient(httpload.Config{BaseURL: srv.URL() + "/nothing"})
	if _, err := bad.ScrapeMetrics(ctx); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("missing page: %v", err)
	}
}

// TestPrompterBlocks: prompts whose leading hash ids agree share exactly
// those blocks' words (every whole block has the same words whatever the
// row's length), and differ from the first word of the first block that
// differs.
func TestPrompterBlocks(t *testing.T) {
	p, err := httpload.NewPrompter(7, 1.3)
	if err != nil {
		t.Fatal(err)
	}
	per := p.Words(512)
	commonWords := func(a, b string) int {
		fa, fb := strings.Fields(a), strings.Fields(b)
		n := 0
		for n < len(fa) && n < len(fb) && fa[n] == fb[n] {
			n++
		}
		return n
	}
	a, ca := p.Blocks([]int64{11, 12, 13}, 512, 3*512)
	b, cb := p.Blocks([]int64{11, 12, 99, 100}, 512, 1800)
	c, cc := p.Blocks([]int64{11, 12}, 512, 700) // block 12 cut after 188 tokens
	if ca != 1536 || cb != 1800 || cc != 700 {
		t.Fatalf("covered %d, %d, %d tokens; want 1536, 1800, 700", ca, cb, cc)
	}
	if n := commonWords(a, b); n < 2*per || n > 2*per+1 {
		t.Errorf("[11 12 13] and [11 12 99 100] share %d leading words, want the two blocks' %d", n, 2*per)
	}
	if n, want := commonWords(a, c), per+p.Words(700-512); n != want || len(strings.Fields(c)) != want {
		t.Errorf("a cut second block: %d common words of %d, want all %d", n, len(strings.Fields(c)), want)
	}
	if d, _ := p.Blocks([]int64{21, 12, 13}, 512, 1536); commonWords(a, d) > 1 {
		t.Errorf("a different first hash id still shares %d leading words", commonWords(a, d))
	}
	if s, n := p.Blocks(nil, 512, 100); s != "" || n != 0 {
		t.Errorf("no hash ids: %q, %d covered", s, n)
	}
}

// TestServerSaysWhatItIs: /version and vllm:cache_config_info as vLLM
// publishes them; a server without /version is an error, not a guess.
func TestServerSaysWhatItIs(t *testing.T) {
	_, c := start(t, fakevllm.Config{VLLMVersion: "0.11.2", BlockTokens: 32, KVCapacityTokens: 32 * 1500,
		GPUMemoryUtilization: 0.85}, httpload.Config{})
	ctx := testCtx(t)
	v, err := c.Version(ctx)
	if err != nil || v != "0.11.2" {
		t.Errorf("Version = %q, %v; want 0.11.2", v, err)
	}
	labels, m, err := c.CacheConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"block_size": "32", "num_gpu_blocks": "1500", "gpu_memory_utilization": "0.85",
		"enable_prefix_caching": "True", "engine": "0", "cache_dtype": "auto"} {
		if labels[k] != want {
			t.Errorf("cache_config_info %s = %q, want %q", k, labels[k], want)
		}
	}
	if !m.HasRunning || !m.HasPreemptions {
		t.Errorf("the page's metrics: %+v", m)
	}
	_, c2 := start(t, fakevllm.Config{NoVersion: true, NoCacheConfigInfo: true}, httpload.Config{})
	if v, err := c2.Version(ctx); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("no /version: %q, %v; want an HTTP 404 error", v, err)
	}
	if labels, _, err := c2.CacheConfig(ctx); err != nil || labels != nil {
		t.Errorf("no cache_config_info: %v, %v; want nil, nil", labels, err)
	}
}
