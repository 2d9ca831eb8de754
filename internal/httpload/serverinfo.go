package httpload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// cacheConfigInfo is vLLM's info gauge for its KV cache configuration: one
// sample per engine, value 1, whose labels are every field of the engine's
// CacheConfig as Python prints it (block_size="16",
// enable_prefix_caching="True", num_gpu_blocks="18038",
// num_gpu_blocks_override="None", ...) plus engine="0".
const cacheConfigInfo = "vllm:cache_config_info"

// cacheConfigLabels are the labels of vllm:cache_config_info that are
// copied into a trace: the fields of vLLM's CacheConfig and the engine. A
// server may add others (a token, a path, kilobytes of text); they are
// never copied.
func cacheConfigLabels() []string {
	return []string{"block_size", "cache_dtype", "calculate_kv_scales", "cpu_offload_gb", "enable_prefix_caching",
		"engine", "gpu_memory_utilization", "is_attention_free", "kv_cache_dtype_skip_layers", "kv_offloading_backend", "kv_offloading_size",
		"kv_sharing_fast_prefill", "mamba_cache_dtype", "mamba_page_size_padded", "mamba_ssm_cache_dtype",
		"num_cpu_blocks", "num_gpu_blocks", "num_gpu_blocks_override", "prefix_caching_hash_algo",
		"sliding_window", "swap_space"}
}

// maxCacheLabelBytes bounds one copied label value of
// vllm:cache_config_info; a longer value is left out.
const maxCacheLabelBytes = 64

// ParseCacheConfig returns the known labels (cacheConfigLabels) of
// vllm:cache_config_info on a Prometheus text page (the first engine's
// sample), each at most maxCacheLabelBytes of printable text; nil when the
// page has none. The page bounds are ParseMetrics'.
func ParseCacheConfig(r io.Reader) (map[string]string, error) {
	var labels map[string]string
	err := scanSamples(r, func(name, line []byte, _ float64) {
		if labels == nil && string(name) == cacheConfigInfo {
			labels = parseLabels(line[len(name):])
		}
	})
	if err != nil || labels == nil {
		return nil, err
	}
	known := map[string]string{}
	for _, k := range cacheConfigLabels() {
		if v, ok := labels[k]; ok && len(v) <= maxCacheLabelBytes && Printable(v) == v {
			known[k] = v
		}
	}
	return known, nil
}

// parseLabels reads `{k="v",k2="v2"} ...` into a map; escapes \\, \" and \n
// in values are undone. Malformed text ends the labels read so far.
func parseLabels(b []byte) map[string]string {
	out := map[string]string{}
	if len(b) == 0 || b[0] != '{' {
		return out
	}
	i := 1
	for i < len(b) {
		for i < len(b) && (b[i] == ' ' || b[i] == ',') {
			i++
		}
		if i >= len(b) || b[i] == '}' {
			return out
		}
		eq := bytes.IndexByte(b[i:], '=')
		if eq < 0 || i+eq+1 >= len(b) || b[i+eq+1] != '"' {
			return out
		}
		key := string(bytes.TrimSpace(b[i : i+eq]))
		var val []byte
		j := i + eq + 2
		for ; j < len(b) && b[j] != '"'; j++ {
			if b[j] == '\\' && j+1 < len(b) {
				j++
				switch b[j] {
				case 'n':
					val = append(val, '\n')
				default:
					val = append(val, b[j])
				}
				continue
			}
			val = append(val, b[j])
		}
		if j >= len(b) {
			return out
		}
		out[key] = string(val)
		i = j + 1
	}
	return out
}

// get fetches path (GET) and returns at most limit bytes of its body when
// the server answers 200; what names the request in errors.
func (c *Client) get(ctx context.Context, path, what string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("httpload: %s: %w", what, err)
	}
	c.setCommon(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("httpload: %s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
		return nil, fmt.Errorf("httpload: %s: HTTP %d: %s", what, resp.StatusCode, c.red.Text(oneLine(body)))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("httpload: %s: %w", what, err)
	}
	return body, nil
}

// Version asks the server for its version (vLLM's GET /version, which
// answers {"version": "0.10.1"}). A server that is not vLLM usually answers
// 404: an error.
func (c *Client) Version(ctx context.Context) (string, error) {
	body, err := c.get(ctx, "/version", "version", maxErrorBodyBytes)
	if err != nil {
		return "", err
	}
	var v struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Version) == 0 {
		return "", fmt.Errorf("httpload: version: no \"version\" in %s", c.red.Text(oneLine(body)))
	}
	s, err := strconv.Unquote(string(v.Version))
	if err != nil {
		s = string(v.Version) // a number, as some servers write it
	}
	return s, nil
}

// CacheConfig reads the server's /metrics page once and returns the labels
// of vllm:cache_config_info (see ParseCacheConfig) and the metrics on it.
func (c *Client) CacheConfig(ctx context.Context) (map[string]string, Metrics, error) {
	page, err := c.get(ctx, "/metrics", "metrics", maxMetricsBytes+1)
	if err != nil {
		return nil, Metrics{}, err
	}
	labels, err := ParseCacheConfig(bytes.NewReader(page))
	if err != nil {
		return nil, Metrics{}, err
	}
	m, err := ParseMetrics(bytes.NewReader(page))
	return labels, m, err
}
