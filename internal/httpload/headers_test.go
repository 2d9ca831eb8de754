package httpload_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"servesim/internal/httpload"
)

// TestCustomHeadersOnEveryEndpoint: Config.Headers and the API key reach
// /tokenize, /metrics and the prewarm's /v1/models, not only completions
// (a gateway may admit or route by them).
func TestCustomHeadersOnEveryEndpoint(t *testing.T) {
	var (
		mu  sync.Mutex
		got = map[string][2]string{}
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = [2]string{r.Header.Get("X-Route"), r.Header.Get("Authorization")}
		mu.Unlock()
		switch r.URL.Path {
		case "/tokenize":
			w.Write([]byte(`{"count":1000,"max_model_len":8}`))
		case "/metrics":
			w.Write([]byte("vllm:num_requests_running 1\n"))
		default:
			w.Write([]byte(`{"data":[]}`))
		}
	}))
	defer ts.Close()
	c, err := httpload.NewClient(httpload.Config{BaseURL: ts.URL, APIKey: "k", Headers: http.Header{"X-Route": {"pool-a"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Calibrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ScrapeMetrics(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prewarm(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/tokenize", "/metrics", "/v1/models"} {
		if h := got[path]; h != [2]string{"pool-a", "Bearer k"} {
			t.Errorf("%s: x-route %q, authorization %q; want pool-a, Bearer k", path, h[0], h[1])
		}
	}
}
