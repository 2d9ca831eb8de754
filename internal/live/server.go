package live

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// rttProbes is the number of timed GET /v1/models round trips; their
// minimum is the network RTT estimate (the server's own handling time of
// that tiny request is the smallest of any endpoint's).
const rttProbes = 5

// serverInfo is what observe learns from GET /v1/models.
type serverInfo struct {
	models      []string
	maxModelLen int64
	rttMs       float64 // 0 = not measured
}

// probeServer lists the served models and measures the round-trip time on
// one kept-alive connection. It reuses nothing of the load client, so the
// load client's connection pool starts clean.
func probeServer(ctx context.Context, cfg *config) (serverInfo, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(cfg.url, "/"), "/v1")
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: cfg.insecure}, //nolint:gosec // only when asked
		DisableCompression:  true,
		MaxIdleConnsPerHost: 1,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	get := func() (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
		if err != nil {
			return nil, err
		}
		for k, vs := range cfg.headers {
			req.Header[http.CanonicalHeaderKey(k)] = vs
		}
		if cfg.apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.apiKey)
		}
		return hc.Do(req)
	}
	resp, err := get()
	if err != nil {
		return serverInfo{}, fmt.Errorf("server %s: GET /v1/models: %w", base, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return serverInfo{}, fmt.Errorf("server %s: GET /v1/models: %w", base, err)
	}
	var info serverInfo
	if resp.StatusCode == http.StatusOK {
		var list struct {
			Data []struct {
				ID          string `json:"id"`
				MaxModelLen int64  `json:"max_model_len"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &list) == nil {
			for _, m := range list.Data {
				info.models = append(info.models, m.ID)
				if m.ID == cfg.model || (cfg.model == "" && info.maxModelLen == 0) {
					info.maxModelLen = m.MaxModelLen
				}
			}
		}
	}
	best := time.Duration(0)
	for range rttProbes {
		start := time.Now()
		resp, err := get()
		if err != nil {
			break
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if d := time.Since(start); resp.StatusCode == http.StatusOK && (best == 0 || d < best) {
			best = d
		}
	}
	info.rttMs = float64(best.Microseconds()) / 1000
	return info, nil
}
