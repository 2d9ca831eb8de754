package live

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/httpload"
	"servesim/internal/infile"
	"servesim/internal/tracev2"
)

// serverFacts is what observe knows of the server it loads, before t0.
type serverFacts struct {
	deployment map[string]any    // deployment keys (run --deployment), only those a deployment has
	sources    map[string]string // deployment key -> measured, declared or absent
	info       tracev2.ServerInfo
	// infoSources marks the server_info facts (without the prefix).
	infoSources map[string]string
}

// readDeclared reads what the user says the server runs: --server-config (a
// deployment YAML, checked strictly against run's keys) and --vllm-args (the
// `vllm serve` command line). The file wins where the two disagree.
func readDeclared(path, args string) (fromFile, fromArgs map[string]any, err error) {
	if args != "" {
		if fromArgs, err = parseServeArgs(args); err != nil {
			return nil, nil, exitcode.Usagef("--vllm-args: %v", err)
		}
	}
	if path == "" {
		return nil, fromArgs, nil
	}
	if _, err := deploy.Load(path, deploy.Default()); err != nil {
		return nil, nil, err // unknown keys and bad values, located
	}
	data, err := infile.ReadFile(path, infile.ConfigBytes)
	if err != nil {
		return nil, nil, exitcode.Usagef("--server-config: %v", err)
	}
	if err := yaml.Unmarshal(data, &fromFile); err != nil {
		return nil, nil, exitcode.Usagef("--server-config %s: %v", path, err)
	}
	return fromFile, fromArgs, nil
}

// learnServer gathers the facts: the server's own (GET /version, the labels
// of vllm:cache_config_info on /metrics, the model list and max_model_len
// already probed), measured; the user's, declared. A measured value wins
// over a declared one that contradicts it, with a warning, except the
// model: a declared model names the served one for the simulator (served
// names are often aliases). A server that answers neither endpoint leaves
// those facts absent, never guessed; a fact no trace can hold (factProblem:
// a block size of 0, a context of 2^63-1 tokens, a version of markup) is
// dropped with a warning and absent too.
func learnServer(ctx context.Context, c *httpload.Client, cfg *config, s *setup, log *slog.Logger) serverFacts {
	f := serverFacts{sources: map[string]string{}, infoSources: map[string]string{}}
	measured := map[string]any{}
	if v, err := c.Version(ctx); err == nil {
		measured["vllm_version"] = v
	} else {
		log.Debug("no server version", "error", err)
	}
	labels, _, err := c.CacheConfig(ctx)
	if err == nil && labels != nil {
		f.info.CacheConfig = labels
		f.infoSources["cache_config"] = tracev2.SourceMeasured
		for label, key := range map[string]string{"block_size": "block_size", "num_gpu_blocks": "total_kv_blocks",
			"gpu_memory_utilization": "gpu_memory_utilization", "enable_prefix_caching": "enable_prefix_caching"} {
			if v, ok := pythonValue(labels[label]); ok {
				measured[key] = v
			}
		}
	} else {
		f.infoSources["cache_config"] = tracev2.SourceAbsent
		log.Debug("no vllm:cache_config_info on /metrics", "error", err)
	}
	if s.maxModelLen != 0 {
		measured["max_model_len"] = int(min(s.maxModelLen, math.MaxInt))
	}
	if slices.Contains(s.info.models, s.model) {
		measured["model"] = s.model
	}
	dropBadFacts(measured, func(m string) { log.Warn(m) })
	if v, ok := measured["vllm_version"].(string); ok {
		f.info.VLLMVersion = v
		f.infoSources["vllm_version"] = tracev2.SourceMeasured
	} else {
		f.infoSources["vllm_version"] = tracev2.SourceAbsent
	}
	if _, ok := measured["max_model_len"]; !ok {
		s.maxModelLen = 0 // unknown rather than wrong
	}
	if cfg.vllmArgs != "" {
		f.info.ServeArgs = cfg.vllmArgs
		f.infoSources["serve_args"] = tracev2.SourceDeclared
	}

	dep := map[string]any{}
	for k, v := range cfg.fromArgs {
		dep[k], f.sources[k] = v, tracev2.SourceDeclared
	}
	for k, v := range cfg.fromFile {
		if old, ok := dep[k]; ok && !deploy.SameKey(k, old, v) {
			log.Warn(fmt.Sprintf("--server-config says %s %v, --vllm-args says %v; recording --server-config's", k, v, old))
		}
		dep[k], f.sources[k] = v, tracev2.SourceDeclared
	}
	for _, k := range slices.Sorted(maps.Keys(measured)) {
		v := measured[k]
		if old, ok := dep[k]; ok {
			if k == "model" {
				continue
			}
			if !deploy.SameKey(k, old, v) {
				log.Warn(fmt.Sprintf("the server reports %s %v, but it was declared %v; recording the server's", k, v, old))
			}
		}
		dep[k], f.sources[k] = v, tracev2.SourceMeasured
	}
	if _, ok := dep["model"]; !ok && factProblem("model", s.model) == "" {
		dep["model"], f.sources["model"] = s.model, tracev2.SourceDeclared // --model, not listed by the server
	}
	known := map[string]bool{}
	for _, k := range deploy.KeyNames() {
		known[k] = true
	}
	for k := range dep {
		if !known[k] {
			delete(dep, k) // the raw fact stays in server_info
			delete(f.sources, k)
		}
	}
	// What the replay will have to assume is marked absent.
	for _, k := range tracev2.CoreDeploymentKeys() {
		if _, ok := dep[k]; !ok && known[k] {
			f.sources[k] = tracev2.SourceAbsent
		}
	}
	f.deployment = dep
	return f
}

// pythonValue reads a label value as vLLM writes it (Python's str()): an
// integer, a float, True/False; "None" and anything else is no value.
func pythonValue(s string) (any, bool) {
	switch s {
	case "True":
		return true, true
	case "False":
		return false, true
	case "", "None":
		return nil, false
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	if x, err := strconv.ParseFloat(s, 64); err == nil {
		return x, true
	}
	return nil, false
}

// recordFacts writes the server facts and the client into the header.
func recordFacts(h *tracev2.Header, f serverFacts, client tracev2.Client) {
	h.SetDeployment(f.deployment, f.sources)
	if h.XExt.Sources == nil {
		h.XExt.Sources = map[string]string{}
	}
	if f.info.VLLMVersion != "" || f.info.CacheConfig != nil || f.info.ServeArgs != "" {
		info := f.info
		h.XExt.ServerInfo = &info
	}
	for k, v := range f.infoSources {
		h.XExt.Sources["server_info."+k] = v
	}
	h.XExt.Client = &client
}

// observedClient is the client observe runs: the workload's (declared) with
// the cap, prewarmed connections, request timeout and sweep level; every
// request streams under --record-itl, whatever the workload says.
func observedClient(cfg *config, tr traffic) tracev2.Client {
	c := tr.client()
	if cfg.recordITL {
		c.Streaming = "all"
	}
	c.MaxConcurrency = cfg.maxConc
	c.PrewarmConnections = prewarmConns(cfg, tr)
	c.RequestTimeoutUs = cfg.reqTimeout.Microseconds()
	c.SweepLevel = cfg.sweepLevel
	c.Repeat, c.Repeats, c.Server = cfg.mark.index, cfg.mark.of, cfg.mark.server
	return c
}

// finalFacts adds what only the run could measure to the final header: the
// client's peak of requests in flight and what the scrapes saw of the
// scheduler.
func finalFacts(h *tracev2.Header, stats httpload.Stats, sc *scraper) {
	x := h.XExt
	if stats.MaxInFlight > 0 {
		x.Client.PeakInFlight = int(stats.MaxInFlight)
		x.Sources["client.peak_in_flight"] = tracev2.SourceMeasured
	}
	if sc == nil {
		return
	}
	if sched := sc.scheduler(); sched != nil {
		if x.ServerInfo == nil {
			x.ServerInfo = &tracev2.ServerInfo{}
		}
		x.ServerInfo.Scheduler = sched
		x.Sources["server_info.scheduler"] = tracev2.SourceMeasured
	}
}
