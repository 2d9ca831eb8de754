package live

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// MetricsColumns is the column row of the --scrape-metrics time series.
// time_us is on the trace's origin t0 (the scrape before the run is
// slightly negative); an empty cell means the server did not report that
// metric.
func MetricsColumns() []string {
	return []string{"time_us", "phase", "num_requests_running", "num_requests_waiting", "kv_cache_usage",
		"prefix_cache_queries", "prefix_cache_hits", "external_prefix_cache_queries", "external_prefix_cache_hits"}
}

// scraper reads the server's Prometheus /metrics before, during and after
// the run, writes the time series (when w is set) and keeps the first and
// last scrapes for the header's observed_kv_metrics deltas.
type scraper struct {
	c   *httpload.Client
	log *slog.Logger

	mu          sync.Mutex
	csv         *csv.Writer // nil = no time series file
	t0          time.Time
	before      *sample
	first, last *httpload.Metrics
	failures    int
	werr        error
	// The scheduler as the scrapes saw it: the most requests running and
	// waiting, over this many scrapes.
	peakRunning, peakWaiting float64
	scrapes                  int
}

type sample struct {
	at    time.Time
	phase string
	m     httpload.Metrics
}

func newScraper(c *httpload.Client, w io.Writer, log *slog.Logger) (*scraper, error) {
	s := &scraper{c: c, log: log}
	if w != nil {
		s.csv = csv.NewWriter(w)
		if err := s.csv.Write(MetricsColumns()); err != nil {
			return nil, fmt.Errorf("write metrics: %w", err)
		}
		s.csv.Flush()
		if err := s.csv.Error(); err != nil {
			return nil, fmt.Errorf("write metrics: %w", err)
		}
	}
	return s, nil
}

// scrapeBefore takes the scrape before t0; it is written once start gives
// the origin.
func (s *scraper) scrapeBefore(ctx context.Context) {
	m, err := s.c.ScrapeMetrics(ctx)
	if err != nil {
		s.fail(err)
		return
	}
	s.mu.Lock()
	s.before = &sample{at: time.Now(), phase: "before", m: m}
	s.first = &m
	s.seeLocked(&m)
	s.mu.Unlock()
}

// seeLocked counts one scrape in the scheduler figures.
func (s *scraper) seeLocked(m *httpload.Metrics) {
	s.scrapes++
	s.peakRunning = max(s.peakRunning, m.Running)
	s.peakWaiting = max(s.peakWaiting, m.Waiting)
}

// scheduler is what the scrapes saw of the scheduler: the most requests
// running (a lower bound on max_num_seqs) and waiting, and the preemptions
// between the first and the last scrape. nil when no scrape reported the
// running count.
func (s *scraper) scheduler() *tracev2.SchedulerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil || s.last == nil || !s.last.HasRunning {
		return nil
	}
	info := &tracev2.SchedulerInfo{PeakRunning: int(s.peakRunning), PeakWaiting: int(s.peakWaiting), Scrapes: s.scrapes}
	if s.first.HasPreemptions && s.last.HasPreemptions {
		info.Preemptions = int64(s.last.Sub(*s.first).Preemptions)
	}
	return info
}

// run writes the before-sample against t0 and scrapes every interval until
// ctx ends.
func (s *scraper) run(ctx context.Context, t0 time.Time, every time.Duration) {
	s.mu.Lock()
	s.t0 = t0
	if s.before != nil {
		s.writeLocked(*s.before)
	}
	s.mu.Unlock()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.scrape(ctx, "during")
		}
	}
}

// scrape takes one sample and writes it.
func (s *scraper) scrape(ctx context.Context, phase string) {
	m, err := s.c.ScrapeMetrics(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(err)
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = &m
	}
	s.last = &m
	s.seeLocked(&m)
	s.writeLocked(sample{at: time.Now(), phase: phase, m: m})
}

func (s *scraper) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	if s.failures == 1 {
		s.log.Warn("metrics scrape failed; the time series has a gap", "error", err)
	}
}

func (s *scraper) writeLocked(x sample) {
	if s.csv == nil || s.werr != nil {
		return
	}
	m := &x.m
	f := func(ok bool, v float64) string {
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	row := []string{
		strconv.FormatInt(x.at.Sub(s.t0).Microseconds(), 10), x.phase,
		f(m.HasRunning, m.Running), f(m.HasWaiting, m.Waiting), f(m.HasKVCacheUsage, m.KVCacheUsage),
		f(m.HasPrefixCache, m.PrefixCacheQueries), f(m.HasPrefixCache, m.PrefixCacheHits),
		f(m.HasExternalPrefixCache, m.ExternalPrefixCacheQueries), f(m.HasExternalPrefixCache, m.ExternalPrefixCacheHits),
	}
	if err := s.csv.Write(row); err == nil {
		s.csv.Flush()
	}
	if err := s.csv.Error(); err != nil {
		s.werr = fmt.Errorf("write metrics: %w", err)
	}
}

// err is the first write error of the time series.
func (s *scraper) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.werr
}

// observed is the header's observed_kv_metrics (docs/tracev2.md §3): the prefix
// cache deltas between the first and the last scrape. With a KV connector's
// external prefix cache ("tiered"), its hits count too: it serves the
// tokens the GPU cache missed, so hits = GPU hits + external hits over the
// GPU queries. nil when the server reports no prefix cache counters.
func (s *scraper) observed() *tracev2.ObservedKVMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil || s.last == nil || !s.last.HasPrefixCache || !s.first.HasPrefixCache {
		return nil
	}
	d := s.last.Sub(*s.first)
	o := &tracev2.ObservedKVMetrics{
		Source:       "gpu-prefix-cache-fallback",
		BlockHits:    int64(d.PrefixCacheHits),
		BlockQueries: int64(d.PrefixCacheQueries),
	}
	if s.last.HasExternalPrefixCache && s.first.HasExternalPrefixCache {
		o.Source = "tiered"
		o.BlockHits += int64(d.ExternalPrefixCacheHits)
	}
	if o.BlockQueries > 0 {
		o.HitRate = min(max(float64(o.BlockHits)/float64(o.BlockQueries), 0), 1)
	}
	return o
}
