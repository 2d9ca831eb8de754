package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"servesim/internal/cli"
	"servesim/internal/report"
	"servesim/internal/workload"
)

// sweepConfig is --sweep, --rates, --sweep-levels and --sweep-output.
type sweepConfig struct {
	full   bool      // --sweep: a synchronous and a throughput level first
	levels int       // rates between the two (GuideLLM's sweep)
	rates  []float64 // --rates: these rates instead
	output string    // the summary JSON; default PREFIX.sweep.json
}

func (s sweepConfig) active() bool { return s.full || len(s.rates) > 0 }

// burstRPS sends a level's requests all at once (1 µs apart): the
// synchronous level behind a cap of one, the throughput level without.
const burstRPS = 1e6

// parseSweep reads the sweep flags.
func parseSweep(full bool, levels int, rates, output string) (sweepConfig, error) {
	s := sweepConfig{full: full, levels: levels, output: output}
	if levels < 0 || levels > 100 {
		return s, cli.Usagef("--sweep-levels %d: want 0 to 100", levels)
	}
	for _, r := range strings.FieldsFunc(rates, func(c rune) bool { return c == ',' || c == ' ' }) {
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || !(v > 0) || v >= burstRPS {
			return s, cli.Usagef("--rates %q: %q is not a rate in requests/s (> 0)", rates, r)
		}
		s.rates = append(s.rates, v)
	}
	if rates != "" && len(s.rates) == 0 {
		return s, cli.Usagef("--rates %q: give rates in requests/s, e.g. 2,4,8", rates)
	}
	if output != "" && !s.active() {
		return s, cli.Usagef("--sweep-output needs --sweep or --rates")
	}
	return s, nil
}

// sweepLevel is one level of a live sweep.
type sweepLevel struct {
	kind    string  // synchronous, throughput, rate
	rate    float64 // offered requests/s (burstRPS for the first two)
	maxConc int
}

// label names the level in the trace header's client.sweep_level.
func (l sweepLevel) label() string {
	if l.kind == "rate" {
		return "rate=" + strconv.FormatFloat(l.rate, 'f', -1, 64)
	}
	return l.kind
}

func (l sweepLevel) name() string {
	if l.kind == "rate" {
		return "rate-" + strconv.FormatFloat(l.rate, 'f', -1, 64)
	}
	return l.kind
}

// runSweep is observe --sweep / --rates: GuideLLM's sweep on a live server.
// With --sweep it runs a synchronous level (one request at a time), then a
// throughput level (every request at once: the ceiling), then --sweep-levels
// rates evenly between the two; with --rates, those rates. Each level is a
// run of its own with its own trace (PREFIX-<k>-<name>), after one set-up;
// an open-loop level whose backlog grows without bound is stopped early and
// says so. The summary (--sweep-output, default PREFIX.sweep.json) lists
// every level in vllm bench serve's metric names.
func runSweep(ctx context.Context, cfg *config, wl *workload.Workload, stdio cli.IO, log *slog.Logger) error {
	if _, err := wl.AtRate(1); err != nil {
		return cli.Usagef("a sweep sends the workload at several rates: %v", err)
	}
	base := &specTraffic{wl: wl, shard: cfg.shard}
	s, err := setUp(ctx, cfg, base, log)
	if err != nil {
		return beforeRun(ctx, err)
	}
	defer s.client.Close()
	var levels []sweepLevel
	if cfg.sweep.full {
		levels = append(levels, sweepLevel{"synchronous", burstRPS, 1}, sweepLevel{"throughput", burstRPS, cfg.maxConc})
	}
	for _, r := range cfg.sweep.rates {
		levels = append(levels, sweepLevel{"rate", r, cfg.maxConc})
	}
	var rows [][]kv
	var ceiling, syncRate float64 // the throughput level's completion rate, else the best whole level's throughput
	var runErr error
	measured := false
	for k := 0; k < len(levels); k++ {
		lv := levels[k]
		row, out, err := sweepRun(ctx, cfg, wl, s, k, lv, stdio, log)
		if out != nil {
			rows = append(rows, row)
			thr := rate(out.tally)
			switch lv.kind {
			case "synchronous":
				syncRate = thr
			case "throughput":
				ceiling, measured = completionRate(out.tally), true
				if len(cfg.sweep.rates) == 0 {
					for i := 1; i <= cfg.sweep.levels; i++ {
						r := syncRate + (ceiling-syncRate)*float64(i)/float64(cfg.sweep.levels+1)
						levels = append(levels, sweepLevel{"rate", r, cfg.maxConc})
					}
				}
			}
			if !measured && !out.saturated {
				ceiling = max(ceiling, thr)
			}
		}
		if err != nil {
			runErr = err
			break
		}
	}
	if err := writeSweepSummary(cfg, rows, ceiling, stdio); err != nil {
		return errors.Join(runErr, err)
	}
	log.Info("sweep done", "levels", len(rows), "ceiling_rps", fmt.Sprintf("%.2f", ceiling))
	return runErr
}

// completionRate is how fast a level's requests completed between its
// first and its last completion: for the throughput level, whose server
// queue stays full, the server's capacity, without the ramp before the first
// answer that request_throughput counts.
func completionRate(t *tally) float64 {
	if t.ok < 2 || t.lastEndUS <= t.firstEndUS {
		return rate(t)
	}
	return float64(t.ok-1) / (float64(t.lastEndUS-t.firstEndUS) / 1e6)
}

// rate is a level's achieved request throughput, requests/s.
func rate(t *tally) float64 {
	if t.lastDoneUS <= 0 {
		return 0
	}
	return float64(t.ok) / (float64(t.lastDoneUS) / 1e6)
}

// sweepRun runs level k with its own outputs and returns its summary row.
func sweepRun(ctx context.Context, cfg *config, wl *workload.Workload, s *setup, k int, lv sweepLevel, stdio cli.IO,
	log *slog.Logger) ([]kv, *levelOutcome, error) {
	lw, err := wl.AtRate(lv.rate)
	if err != nil {
		return nil, nil, err
	}
	lcfg := *cfg
	lcfg.maxConc = lv.maxConc
	if lcfg.sweepLevel == "" {
		lcfg.sweepLevel = lv.label()
	}
	lcfg.traceOut = fmt.Sprintf("%s-%d-%s", cfg.traceOut, k, lv.name())
	if cfg.recordITL {
		lcfg.itlOut = lcfg.traceOut + ".itl.csv"
	}
	if cfg.scrape {
		lcfg.metricsOut = lcfg.traceOut + ".metrics.csv"
	}
	if cfg.result.path != "" {
		lcfg.result.path = strings.TrimSuffix(cfg.result.path, ".json") + fmt.Sprintf("-%d-%s.json", k, lv.name())
	}
	outs, err := openSide(&lcfg, s, log)
	if err != nil {
		return nil, nil, err
	}
	defer outs.close()
	if lcfg.scrape {
		outs.scraper.scrapeBefore(ctx)
	}
	var watch *saturation
	if lv.kind == "rate" {
		dur := time.Duration(float64(wl.Spec.NumRequests)/lv.rate*1e6) * time.Microsecond
		if wl.Spec.NumRequests == 0 {
			dur = time.Duration(wl.Spec.HorizonUs) * time.Microsecond
		}
		watch = newSaturation(lv.rate, dur)
	}
	log.Info("sweep level", "level", k, "kind", lv.kind, "rate", lv.name(), "trace", lcfg.traceOut)
	out, err := recordRun(ctx, &lcfg, &specTraffic{wl: lw, shard: cfg.shard}, s, outs, stdio, log, watch)
	if out == nil {
		return nil, nil, err
	}
	return sweepRow(k, lv, lcfg, out), out, err
}

// sweepRow is a level's line of the summary.
func sweepRow(k int, lv sweepLevel, lcfg config, out *levelOutcome) []kv {
	t := out.tally
	var target, conc any
	if lv.kind == "rate" {
		target = lv.rate
	}
	if lv.maxConc > 0 {
		conc = lv.maxConc
	}
	dur := float64(t.lastDoneUS) / 1e6
	row := []kv{{"level", k}, {"kind", lv.kind}, {"request_rate", target}, {"max_concurrency", conc},
		{"trace", lcfg.traceOut + ".csv"}, {"completed", t.ok}, {"failed", t.failed}, {"duration", dur},
		{"request_throughput", rate(t)}, {"output_throughput", float64(t.outputTokens) / max(dur, 1e-9)}}
	for _, m := range []struct {
		name string
		xs   []float64
	}{{"ttft", t.ttft}, {"tpot", t.tpot}, {"e2el", t.e2el}, {"ttft_from_intended", t.ttftIntended}, {"e2el_from_intended", t.e2elIntended}} {
		row = append(row, kv{"mean_" + m.name + "_ms", report.Mean(m.xs)}, kv{"median_" + m.name + "_ms", report.Percentile(m.xs, 50)},
			kv{"p99_" + m.name + "_ms", report.Percentile(m.xs, 99)})
	}
	return append(row, kv{"stopped_early", out.saturated}, kv{"stop_reason", out.reason})
}

// writeSweepSummary writes the levels and the ceiling found.
func writeSweepSummary(cfg *config, rows [][]kv, ceiling float64, stdio cli.IO) error {
	path := cfg.sweep.output
	if path == "" {
		path = cfg.traceOut + ".sweep.json"
	}
	levels := make([]any, len(rows))
	for i, r := range rows {
		levels[i] = r
	}
	data, err := encodeOrdered([]kv{{"ceiling_request_throughput", ceiling}, {"levels", levels}})
	if err != nil {
		return err
	}
	return writeWhole(path, "--sweep-output", data, stdio)
}
