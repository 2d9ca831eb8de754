package live

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"servesim/internal/exitcode"
	"servesim/internal/infile"
	"servesim/internal/report"
	"servesim/internal/steady"
	"servesim/internal/sweep"
	"servesim/internal/workload"
)

// sweepConfig is --sweep, --rates, --sweep-levels, --slo, --sweep-output,
// --html and --overlay.
type sweepConfig struct {
	full    bool      // --sweep: a synchronous and a throughput level first
	levels  int       // rates between the two (GuideLLM's sweep)
	rates   []float64 // --rates: these rates instead
	slo     sweep.SLO // the simulated sweep's SLO language
	bounds  goodput   // the SLO's per-request bounds, for goodput
	output  string    // the sweep document (JSON); default PREFIX.sweep.json
	html    string    // the sweep's page
	overlay string    // a simulated sweep's document drawn beside this one
}

func (s sweepConfig) active() bool { return s.full || len(s.rates) > 0 }

// burstRPS sends a level's requests all at once (1 µs apart): the
// synchronous level behind a cap of one, the throughput level without.
const burstRPS = 1e6

// parseSweep reads the sweep flags.
func parseSweep(full bool, levels int, rates, slo, output, html, overlay string) (sweepConfig, error) {
	s := sweepConfig{full: full, levels: levels, output: output, html: html, overlay: overlay}
	if levels < 0 || levels > 100 {
		return s, exitcode.Usagef("--sweep-levels %d: want 0 to 100", levels)
	}
	for _, r := range strings.FieldsFunc(rates, func(c rune) bool { return c == ',' || c == ' ' }) {
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || !(v > 0) || v >= burstRPS {
			return s, exitcode.Usagef("--rates %q: %q is not a rate in requests/s (> 0)", rates, r)
		}
		s.rates = append(s.rates, v)
	}
	if rates != "" && len(s.rates) == 0 {
		return s, exitcode.Usagef("--rates %q: give rates in requests/s, e.g. 2,4,8", rates)
	}
	var err error
	if s.slo, err = sweep.ParseSLO(slo); err != nil {
		return s, err
	}
	s.bounds.ttftMs, s.bounds.tpotMs, s.bounds.e2elMs = s.slo.RequestTargets()
	if (output != "" || html != "" || overlay != "" || slo != "") && !s.active() {
		return s, exitcode.Usagef("--slo, --sweep-output, --html and --overlay shape a sweep: give --sweep or --rates")
	}
	return s, nil
}

// sweepLevel is one level of a live sweep.
type sweepLevel struct {
	kind    string  // synchronous, throughput, rate
	rate    float64 // offered requests/s (burstRPS for the first two)
	maxConc int
}

// name is the level as the grid, the files and the header name it.
func (l sweepLevel) name() string {
	if l.kind == "rate" {
		return strconv.FormatFloat(l.rate, 'f', -1, 64)
	}
	return l.kind
}

// liveSweep runs the levels of observe --sweep / --rates through the
// simulated sweep's executor (sweep.Plan), so that its rows, SLO verdicts,
// table, document and page are the simulated sweep's own.
type liveSweep struct {
	cfg   *config
	wl    *workload.Workload
	s     *setup
	stdio IO
	log   *slog.Logger
	byKey map[string]sweepLevel
	ran   int                      // levels run so far (their files are numbered by it)
	outs  map[string]*levelOutcome // by level name
}

// runSweep is observe --sweep / --rates: GuideLLM's sweep on a live server.
// With --sweep it runs a synchronous level (one request at a time), then a
// throughput level (every request at once: its completion rate is the
// server's capacity), then --sweep-levels rates evenly between the two;
// with --rates, those rates. Each level is a run of its own with its own
// trace (PREFIX-<k>-<name>), after one set-up; an open-loop level whose
// backlog grows without bound is stopped early and says so. The rows are
// the simulated sweep's (run sweep): its --slo, its table on stdout, its
// JSON document (--sweep-output) and its page (--html), which draws a
// simulated sweep's curves beside these with --overlay.
func runSweep(ctx context.Context, cfg *config, wl *workload.Workload, stdio IO, log *slog.Logger) error {
	if _, err := wl.AtRate(1); err != nil {
		return exitcode.Usagef("a sweep sends the workload at several rates: %v", err)
	}
	var sim *sweep.Doc
	if cfg.sweep.overlay != "" {
		data, err := infile.ReadFile(cfg.sweep.overlay, sweep.MaxDocBytes)
		if err != nil {
			return exitcode.WithCode(exitcode.Usage, fmt.Errorf("--overlay: %w", err))
		}
		if sim, err = sweep.DecodeWholeDoc(cfg.sweep.overlay, data); err != nil {
			return err
		}
	}
	s, err := setUp(ctx, cfg, &specTraffic{wl: wl, shard: cfg.shard}, log)
	if err != nil {
		return beforeRun(ctx, err)
	}
	defer s.client.Close()
	sw := &liveSweep{cfg: cfg, wl: wl, s: s, stdio: stdio, log: log, byKey: map[string]sweepLevel{}, outs: map[string]*levelOutcome{}}
	var rows []sweep.Row
	if cfg.sweep.full {
		first, err := sw.phase(ctx, 0, []sweepLevel{{"synchronous", burstRPS, 1}, {"throughput", burstRPS, cfg.maxConc}})
		if err != nil {
			return err
		}
		rows = append(rows, first...)
	}
	rates := cfg.sweep.rates
	if len(rates) == 0 && cfg.sweep.full {
		rates = sweep.Between(rows[0].ThroughputRPS, rows[1].ThroughputRPS, cfg.sweep.levels)
	}
	var levels []sweepLevel
	for _, r := range rates {
		levels = append(levels, sweepLevel{"rate", r, cfg.maxConc})
	}
	more, err := sw.phase(ctx, len(rows), levels)
	if err != nil {
		return err
	}
	rows = append(rows, more...)
	d := &sweep.Doc{Command: "observe sweep", Cases: len(rows), Keys: []string{"rate"}, LoadKeys: []string{"rate"},
		Base: []sweep.Param{{Key: "server", Value: cfg.redactor().Text(cfg.url)}, {Key: "model", Value: s.model}, {Key: "workload", Value: workloadName(wl)}},
		SLO:  cfg.sweep.slo.String(), Rows: rows}
	d.Finish(sweep.DefaultPrices())
	liveOnly := d.Answer
	if sim != nil {
		d = sweep.Overlay(d, sim)
		d.Finish(sweep.DefaultPrices())
	}
	liveAnswer(d.Answer, liveOnly)
	return sw.write(d)
}

// liveAnswer makes a's verdict the live server's alone (live is the answer
// of the live rows): simulated rows drawn beside them (--overlay) are no
// case of this server, and costs, a simulated deployment's prices, say
// nothing of it, so no cost front is drawn.
func liveAnswer(a, live *sweep.Answer) {
	if a == nil || live == nil {
		return
	}
	a.Met, a.Verdict, a.Best, a.Pareto = live.Met, live.Verdict, live.Best, nil
}

// workloadName names the workload in the sweep's base line.
func workloadName(wl *workload.Workload) string {
	if wl.Name == "" {
		return "flags"
	}
	return wl.Name
}

// phase runs levels one after another (a live server takes one load at a
// time) as grid cases first, first+1, …
func (sw *liveSweep) phase(ctx context.Context, first int, levels []sweepLevel) ([]sweep.Row, error) {
	if len(levels) == 0 {
		return nil, nil
	}
	ax := sweep.Axis{Key: "rate"}
	for _, l := range levels {
		sw.byKey[l.name()] = l
		ax.Values = append(ax.Values, sweep.Value{Text: l.name()})
	}
	grid, err := sweep.NewGrid([]sweep.Axis{ax})
	if err != nil {
		return nil, err
	}
	plan := &sweep.Plan{Spec: sweep.Spec{SLO: sw.cfg.sweep.slo, Prices: sweep.DefaultPrices()}, Grid: grid, Jobs: 1}
	rows, err := plan.Run(ctx, sw.run)
	for i := range rows {
		rows[i].Case += first
		if rows[i].Param("rate") == "throughput" {
			rows[i].Role = sweep.RoleProbe // every request at once: the capacity, not a point of the curve
		}
	}
	return rows, err
}

// run is the sweep.RunFunc of a live level.
func (sw *liveSweep) run(ctx context.Context, c sweep.Case, _ float64) (sweep.Row, error) {
	lv := sw.byKey[c.Values[0].Text]
	k := sw.ran
	sw.ran++
	out, err := sweepRun(ctx, sw.cfg, sw.wl, sw.s, k, lv, sw.stdio, sw.log)
	if err != nil {
		return sweep.Row{}, err
	}
	sw.outs[lv.name()] = out
	return liveRow(lv, out), nil
}

// sweepRun runs level k with its own outputs.
func sweepRun(ctx context.Context, cfg *config, wl *workload.Workload, s *setup, k int, lv sweepLevel, stdio IO,
	log *slog.Logger) (*levelOutcome, error) {
	lw, err := wl.AtRate(lv.rate)
	if err != nil {
		return nil, err
	}
	lcfg := *cfg
	lcfg.maxConc = lv.maxConc
	if lcfg.sweepLevel == "" {
		lcfg.sweepLevel = "rate=" + lv.name()
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
		return nil, err
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
	log.Info("sweep level", "level", k, "rate", lv.name(), "trace", lcfg.traceOut)
	return recordRun(ctx, runParts{cfg: &lcfg, tr: &specTraffic{wl: lw, shard: cfg.shard}, s: s, outs: outs,
		stdio: stdio, log: log, watch: watch})
}

// completionRate is how fast a level's requests completed between its
// first and its last completion: for the throughput level, whose server
// queue stays full, the server's capacity, without the ramp before the first
// answer.
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

// liveRow is a level's sweep row: the measurements of sweep.Row from the
// run's tally, its steady state by steady.Check (the first token
// standing in for the scheduler the client cannot see). The rate is the
// offered one; the synchronous level stands at the rate it achieved, the
// throughput level reports the server's capacity as its throughput.
func liveRow(lv sweepLevel, out *levelOutcome) sweep.Row {
	t := out.tally
	dur := float64(t.lastDoneUS) / 1e6
	injected := t.ok + t.failed
	r := sweep.Row{RateRPS: lv.rate, Status: sweep.StatusOK, Injected: injected, Completed: t.ok, Failed: t.failed,
		DurationS: dur, ThroughputRPS: rate(t)}
	switch lv.kind {
	case "synchronous":
		r.RateRPS = rate(t)
	case "throughput":
		r.RateRPS, r.ThroughputRPS = 0, completionRate(t)
	}
	if dur > 0 {
		r.TokensPerSec, r.GoodputRPS = float64(t.outputTokens)/dur, float64(t.sloOK)/dur
	}
	if injected > 0 {
		r.SLOAttainment = float64(t.sloOK) / float64(injected)
	}
	stopped := ""
	if out.saturated {
		stopped = "stopped early, over-saturated: " + out.reason
	}
	steady := steady.Check(t.arrivals, t.starts)
	if sweep.Judge(&r, stopped, steady, t.ok, "no steady state: %.1f%% of the second half's arrivals piled up") {
		itl, _ := t.itlMs()
		r.TTFT, r.TPOT, r.ITL, r.E2E = latency(t.ttft), latency(t.tpot), latency(itl), latency(t.e2el)
	}
	return r
}

// latency is the statistics of a sweep row of values in ms.
func latency(xs []float64) *sweep.Latency {
	return &sweep.Latency{Mean: report.Mean(xs), P50: report.Percentile(xs, 50), P90: report.Percentile(xs, 90),
		P95: report.Percentile(xs, 95), P99: report.Percentile(xs, 99)}
}

// write puts the document where the flags say: the table on stdout, the
// JSON at --sweep-output (PREFIX.sweep.json), the page at --html. A sweep
// with an SLO that no level meets exits 3.
func (sw *liveSweep) write(d *sweep.Doc) error {
	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		return err
	}
	path := sw.cfg.sweep.output
	if path == "" {
		path = sw.cfg.traceOut + ".sweep.json"
	}
	if err := writeWhole(path, "--sweep-output", js.Bytes(), sw.stdio); err != nil {
		return err
	}
	if p := sw.cfg.sweep.html; p != "" {
		var page bytes.Buffer
		if err := report.WriteSweepHTML(&page, d); err != nil {
			return err
		}
		if err := writeWhole(p, "--html", page.Bytes(), sw.stdio); err != nil {
			return err
		}
	}
	if err := sweep.WriteTable(sw.stdio.Out, d, "text", report.SweepPages{}); err != nil {
		return err
	}
	if out := sw.outs["throughput"]; out != nil {
		sw.log.Info("the server's capacity (the throughput level's completion rate)", "rps", fmt.Sprintf("%.2f", completionRate(out.tally)))
	}
	return d.NotMet()
}
