package httpload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Bounds of a /metrics page: a hostile or broken server cannot make the
// scraper read or hold more than this.
const (
	maxMetricsBytes     = 8 << 20
	maxMetricsLineBytes = 64 << 10
)

// Metrics holds the vLLM engine figures of one /metrics scrape. Each value
// is summed over the label sets of its metric (model names, data-parallel
// engines), except KVCacheUsage, which is their mean. A Has flag tells
// whether the page carried the metric at all.
type Metrics struct {
	Running float64 // vllm:num_requests_running
	Waiting float64 // vllm:num_requests_waiting
	// KVCacheUsage is the fraction (0..1) of KV cache blocks in use:
	// vllm:kv_cache_usage_perc, or the older vllm:gpu_cache_usage_perc.
	KVCacheUsage float64
	// PrefixCacheQueries and PrefixCacheHits are counters in tokens:
	// vllm:prefix_cache_{queries,hits}_total, or the older
	// vllm:gpu_prefix_cache_{queries,hits}_total.
	PrefixCacheQueries float64
	PrefixCacheHits    float64
	// ExternalPrefixCache* are the KV-connector (offloading) counterparts,
	// vllm:external_prefix_cache_{queries,hits}_total.
	ExternalPrefixCacheQueries float64
	ExternalPrefixCacheHits    float64

	HasRunning, HasWaiting, HasKVCacheUsage, HasPrefixCache, HasExternalPrefixCache bool
	// PrefixCacheSource names the family the prefix counters came from:
	// "prefix_cache", "gpu_prefix_cache", or "" when absent.
	PrefixCacheSource string
	// Preemptions counts the scheduler's preemptions (vllm:num_preemptions_total).
	Preemptions    float64
	HasPreemptions bool
}

// HitRate is PrefixCacheHits / PrefixCacheQueries, 0 when nothing was queried.
func (m Metrics) HitRate() float64 {
	if m.PrefixCacheQueries <= 0 {
		return 0
	}
	return m.PrefixCacheHits / m.PrefixCacheQueries
}

// Sub is the change from an earlier scrape: counters as deltas, gauges as
// the later value.
func (m Metrics) Sub(earlier Metrics) Metrics {
	d := m
	d.PrefixCacheQueries -= earlier.PrefixCacheQueries
	d.PrefixCacheHits -= earlier.PrefixCacheHits
	d.ExternalPrefixCacheQueries -= earlier.ExternalPrefixCacheQueries
	d.ExternalPrefixCacheHits -= earlier.ExternalPrefixCacheHits
	d.Preemptions -= earlier.Preemptions
	return d
}

// series accumulates the samples of one metric name.
type series struct {
	sum float64
	n   int
}

func (s *series) add(v float64) {
	s.sum += v
	s.n++
}

// ParseMetrics reads a Prometheus text exposition page and extracts the vLLM
// metrics above. It reads at most 8 MiB and lines of at most 64 KiB; other
// metrics, comments, and samples with unparsable values are skipped.
func ParseMetrics(r io.Reader) (Metrics, error) {
	var (
		running, waiting, kv, kvOld        series
		queries, hits, gpuQueries, gpuHits series
		extQueries, extHits, preempts      series
	)
	err := scanSamples(r, func(name, _ []byte, value float64) {
		switch string(name) {
		case "vllm:num_requests_running":
			running.add(value)
		case "vllm:num_requests_waiting":
			waiting.add(value)
		case "vllm:kv_cache_usage_perc":
			kv.add(value)
		case "vllm:gpu_cache_usage_perc":
			kvOld.add(value)
		case "vllm:prefix_cache_queries_total":
			queries.add(value)
		case "vllm:prefix_cache_hits_total":
			hits.add(value)
		case "vllm:gpu_prefix_cache_queries_total":
			gpuQueries.add(value)
		case "vllm:gpu_prefix_cache_hits_total":
			gpuHits.add(value)
		case "vllm:external_prefix_cache_queries_total":
			extQueries.add(value)
		case "vllm:external_prefix_cache_hits_total":
			extHits.add(value)
		case "vllm:num_preemptions_total":
			preempts.add(value)
		}
	})
	if err != nil {
		return Metrics{}, err
	}
	m := Metrics{
		Running: running.sum, HasRunning: running.n > 0,
		Waiting: waiting.sum, HasWaiting: waiting.n > 0,
		Preemptions: preempts.sum, HasPreemptions: preempts.n > 0,
	}
	switch {
	case kv.n > 0:
		m.KVCacheUsage, m.HasKVCacheUsage = kv.sum/float64(kv.n), true
	case kvOld.n > 0:
		m.KVCacheUsage, m.HasKVCacheUsage = kvOld.sum/float64(kvOld.n), true
	}
	switch {
	case queries.n > 0:
		m.PrefixCacheQueries, m.PrefixCacheHits = queries.sum, hits.sum
		m.HasPrefixCache, m.PrefixCacheSource = true, "prefix_cache"
	case gpuQueries.n > 0:
		m.PrefixCacheQueries, m.PrefixCacheHits = gpuQueries.sum, gpuHits.sum
		m.HasPrefixCache, m.PrefixCacheSource = true, "gpu_prefix_cache"
	}
	if extQueries.n > 0 {
		m.ExternalPrefixCacheQueries, m.ExternalPrefixCacheHits = extQueries.sum, extHits.sum
		m.HasExternalPrefixCache = true
	}
	return m, nil
}

// scanSamples calls f with the name, the whole line and the value of every
// sample of a Prometheus text page, within the page and line bounds above.
func scanSamples(r io.Reader, f func(name, line []byte, value float64)) error {
	sc := bufio.NewScanner(io.LimitReader(r, maxMetricsBytes+1))
	sc.Buffer(make([]byte, 0, 4096), maxMetricsLineBytes)
	read := 0
	for sc.Scan() {
		line := sc.Bytes()
		read += len(line) + 1
		if read > maxMetricsBytes {
			return fmt.Errorf("httpload: metrics: page longer than %d bytes", maxMetricsBytes)
		}
		if name, value, ok := parseSample(line); ok {
			f(name, line, value)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("httpload: metrics: line longer than %d bytes", maxMetricsLineBytes)
		}
		return fmt.Errorf("httpload: metrics: %w", err)
	}
	return nil
}

// parseSample splits a sample line `name{labels} value [timestamp]`.
// Label values may hold any character, escaped quotes and braces included.
func parseSample(line []byte) (name []byte, value float64, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '#' {
		return nil, 0, false
	}
	i := 0
	for i < len(line) && line[i] != '{' && line[i] != ' ' && line[i] != '\t' {
		i++
	}
	name = line[:i]
	if i < len(line) && line[i] == '{' {
		inQuote := false
		for i++; i < len(line); i++ {
			c := line[i]
			if inQuote {
				if c == '\\' {
					i++
				} else if c == '"' {
					inQuote = false
				}
				continue
			}
			if c == '"' {
				inQuote = true
			} else if c == '}' {
				break
			}
		}
		if i >= len(line) {
			return nil, 0, false
		}
		i++
	}
	rest := bytes.Fields(line[i:])
	if len(name) == 0 || len(rest) == 0 {
		return nil, 0, false
	}
	v, err := strconv.ParseFloat(string(rest[0]), 64)
	if err != nil || math.IsNaN(v) {
		return nil, 0, false
	}
	return name, v, true
}

// ScrapeMetrics fetches and parses the server's /metrics page.
func (c *Client) ScrapeMetrics(ctx context.Context) (Metrics, error) {
	page, err := c.get(ctx, "/metrics", "metrics", maxMetricsBytes+1)
	if err != nil {
		return Metrics{}, err
	}
	return ParseMetrics(bytes.NewReader(page))
}
