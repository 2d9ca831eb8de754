package httpload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Prewarm opens conns keep-alive connections to the server before a run,
// so that the first requests of the run do not pay for TCP (and TLS) set-up
// in their measured latency. It holds conns GET /v1/models responses open
// at once, which forces one connection each, then releases them all to the
// idle pool. It returns the number of connections opened.
func (c *Client) Prewarm(ctx context.Context, conns int) (int, error) {
	if conns <= 0 {
		return 0, nil
	}
	if conns > c.cfg.MaxConns {
		conns = c.cfg.MaxConns // more would be closed again as excess idle connections
	}
	var (
		mu     sync.Mutex
		bodies []io.ReadCloser
		errs   []error
		wg     sync.WaitGroup
	)
	for range conns {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/models", nil)
			if err == nil {
				c.setCommon(req)
			}
			var resp *http.Response
			if err == nil {
				resp, err = c.hc.Do(req)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			bodies = append(bodies, resp.Body)
		})
	}
	wg.Wait() // every response is open: each holds its own connection
	for _, b := range bodies {
		_, _ = io.Copy(io.Discard, io.LimitReader(b, maxBodyBytes))
		_ = b.Close()
	}
	if len(errs) > 0 {
		return len(bodies), fmt.Errorf("httpload: prewarm: %d of %d connections failed, first: %w", len(errs), conns, errs[0])
	}
	return len(bodies), nil
}
