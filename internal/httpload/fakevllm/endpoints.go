package fakevllm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// handleTokenize imitates vLLM's POST /tokenize.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	if s.cfg.NoTokenize {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"detail":"Not Found"}`)
		return
	}
	var in struct {
		Prompt   *string `json:"prompt"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		AddSpecialTokens *bool `json:"add_special_tokens"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes))
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid request: "+err.Error())
		return
	}
	special := in.AddSpecialTokens == nil || *in.AddSpecialTokens
	var n int
	switch {
	case in.Prompt != nil:
		n = s.countTokens(*in.Prompt, special)
	case len(in.Messages) > 0:
		var parts []string
		for _, m := range in.Messages {
			parts = append(parts, m.Content)
		}
		n = s.countTokens(strings.Join(parts, "\n"), false) + s.cfg.ChatTemplateTokens
	default:
		writeError(w, http.StatusBadRequest, "prompt or messages required")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"count":%d,"max_model_len":%d,"tokens":[`, n, s.cfg.MaxModelLen)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", 1000+i%30000)
	}
	b.WriteString(`],"token_strs":null}`)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, b.String())
}

// handleMetrics writes the vLLM gauges and counters in the Prometheus text
// format, with the label sets vLLM uses.
func (s *Server) handleMetrics(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	st := s.stats
	kv := float64(s.kvTokens) / float64(s.cfg.KVCapacityTokens)
	queries, hits := s.promptTotal, s.cachedTotal
	s.mu.Unlock()
	labels := fmt.Sprintf(`{engine="0",model_name=%s}`, jsonString(s.cfg.Model))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintf(w, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n")
	fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running%s %d.0\n", labels, st.InFlight)
	fmt.Fprintf(w, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n")
	fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting%s %d.0\n", labels, st.Waiting)
	fmt.Fprintf(w, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n")
	fmt.Fprintf(w, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc%s %g\n", labels, kv)
	fmt.Fprintf(w, "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.\n")
	fmt.Fprintf(w, "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total%s %d.0\n", labels, queries)
	fmt.Fprintf(w, "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.\n")
	fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total%s %d.0\n", labels, hits)
	fmt.Fprintf(w, "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.\n")
	fmt.Fprintf(w, "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total%s 0.0\n", labels)
	if !s.cfg.NoCacheConfigInfo {
		fmt.Fprintf(w, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n")
		fmt.Fprintf(w, "# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info%s 1.0\n", s.cacheConfigLabels())
	}
}

// cacheConfigLabels are the labels vLLM puts on vllm:cache_config_info:
// every field of its CacheConfig as Python's str() prints it ("True",
// "None", "0.9"), plus engine, in sorted order as vLLM's multiprocess
// Prometheus collector writes them (a v0.10 field set).
func (s *Server) cacheConfigLabels() string {
	py := func(b bool) string {
		if b {
			return "True"
		}
		return "False"
	}
	kv := [][2]string{
		{"block_size", strconv.Itoa(s.cfg.BlockTokens)},
		{"cache_dtype", "auto"},
		{"calculate_kv_scales", "False"},
		{"cpu_offload_gb", "0"},
		{"enable_prefix_caching", py(!s.cfg.NoPrefixCaching)},
		{"engine", "0"},
		{"gpu_memory_utilization", strconv.FormatFloat(s.cfg.GPUMemoryUtilization, 'g', -1, 64)},
		{"is_attention_free", "False"},
		{"kv_cache_memory_bytes", "None"},
		{"kv_sharing_fast_prefill", "False"},
		{"mamba_cache_dtype", "auto"},
		{"mamba_ssm_cache_dtype", "auto"},
		{"num_cpu_blocks", "None"},
		{"num_gpu_blocks", strconv.Itoa(s.cfg.KVCapacityTokens / s.cfg.BlockTokens)},
		{"num_gpu_blocks_override", "None"},
		{"prefix_caching_hash_algo", "sha256"},
		{"sliding_window", "None"},
		{"swap_space", "4"},
		{"swap_space_bytes", "4294967296"},
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range kv {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", p[0], strconv.Quote(p[1]))
	}
	b.WriteByte('}')
	return b.String()
}

// handleVersion imitates vLLM's GET /version.
func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if s.cfg.NoVersion {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"detail":"Not Found"}`)
		return
	}
	fmt.Fprintf(w, `{"version":%s}`, jsonString(s.cfg.VLLMVersion))
}

// handleModels imitates GET /v1/models.
func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":0,"owned_by":"vllm","root":%s,"parent":null,"max_model_len":%d}]}`,
		jsonString(s.cfg.Model), jsonString(s.cfg.Model), s.cfg.MaxModelLen)
}
