package main

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/calibrate"
	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/report"
	"servesim/internal/tracev2/importer"
	"servesim/internal/workload"
)

func command() cli.Command {
	return cli.Command{
		Name:        "calibrate",
		Usage:       "compare real and simulated per-request latencies and grade the simulator",
		ArgsUsage:   "REAL [SIM] | REAL... SIM | real=PATH... sim=PATH",
		Description: calibrate.GradeHelp,
		Flags:       flags(),
		Subcommands: []cli.Command{fitCommand(), compareCommand()},
		Choices:     cli.JoinChoices(deploy.FlagChoices(), workload.FlagChoices(), importer.FlagChoices()),
		Action:      action,
	}
}

func flags() []ucli.Flag {
	inputs := cli.InCategory(flagspec.CatTrace,
		&ucli.StringFlag{Name: "trace-header", Usage: "trace header YAML of a two-file trace (with --trace-data, or for a data CSV given as REAL)"},
		&ucli.StringFlag{Name: "trace-data", Usage: "trace data CSV of a two-file trace (with --trace-header, or for a header YAML given as REAL)"},
		&ucli.StringFlag{Name: "sim-results", Usage: "SimResult JSON (array or JSON Lines), instead of SIM"},
		&ucli.StringFlag{Name: "itl-data", Usage: "ITL CSV (request_id,chunk_index,timestamp_us)", DefaultText: "NAME.itl.csv beside the trace, if it exists"},
		&ucli.StringFlag{Name: "sim-metrics", Usage: "replay's --metrics-out JSON: cache_hit_rate for the hit-rate verdict, the resolved \"deployment\" for the config verdict (config.match)"},
		&ucli.BoolFlag{Name: "interval", Usage: "also read the results of replay --interval beside SIM (sim.json: sim.lo.json, sim.hi.json) and report how often the real TTFT and E2E fall inside the simulated 90% intervals"},
	)
	settings := cli.InCategory(flagspec.CatGrading,
		&ucli.Int64Flag{Name: "warmup-requests", Value: -1, Usage: "exclude rows with request_id below N; -1 = the header's warm_up_requests"},
		&ucli.DurationFlag{Name: "warmup-duration", Usage: "also exclude rows that arrived before this time from the start, e.g. 30s"},
		&ucli.Int64Flag{Name: "network-rtt-us", Value: -1, Usage: "round trip added to the simulated side, µs; -1 = the header's network.measured_rtt_ms"},
		&ucli.Float64Flag{Name: "network-bandwidth-mbps", Usage: "link bandwidth for the payload delay (4 bytes per token), Mb/s; 0 = none"},
		&ucli.StringFlag{Name: "ttft-from", Value: report.TTFTFromFirstChunk, Usage: "real TTFT ends at the first chunk (first-chunk) or at ext_first_token_time_us where present (first-token)"},
		&ucli.StringFlag{Name: "slo-ttft", Usage: "goodput TTFT targets per SLO class, e.g. critical=250ms,standard=1s (override the header)"},
		&ucli.StringFlag{Name: "slo-itl", Usage: "goodput mean-ITL targets per SLO class, e.g. critical=30ms"},
		&ucli.StringFlag{Name: "slo-e2e", Usage: "goodput E2E targets per SLO class, e.g. critical=2s,standard=10s"},
		&ucli.Float64Flag{Name: "ttft-mape-threshold", Value: 0.15, Usage: "TTFT tolerance verdict: within when TTFT MAPE <= this fraction (never changes the exit code)"},
		&ucli.Float64Flag{Name: "hit-rate-tolerance-pp", Value: 5.0, Usage: "hit-rate verdict tolerance, percentage points (never changes the exit code)"},
	)
	outputs := append([]ucli.Flag{cli.FormatFlag("text", "what stdout carries: text, json or markdown", "text", "json", "markdown")}, cli.InCategory(flagspec.CatOutput,
		&ucli.StringFlag{Name: "report", Usage: "write the report JSON to this file (- = stdout instead of --format)"},
		&ucli.StringFlag{Name: "markdown", Usage: "write the Markdown report (for a CI job summary) to this file (- = stdout)"},
		&ucli.StringFlag{Name: "html", Usage: "write a self-contained HTML report with plots to this file (- = stdout)"},
	)...)
	gates := cli.InCategory(flagspec.CatGates,
		&ucli.StringFlag{Name: "assert", Usage: "gate expression, e.g. 'ttft.mape<0.15,e2e.pearson>0.9,grade>=good' (grammar below); exit 3 when one fails"},
		&ucli.StringFlag{Name: "fail-under", Usage: "gate: every gated metric's grade must be at least this (poor, fair, good, excellent)"},
		&ucli.StringFlag{Name: "max-mape", Usage: "gate: MAPE of every gated metric at most X, or per metric: ttft=0.1,e2e=0.2"},
		&ucli.StringFlag{Name: "min-pearson", Usage: "gate: Pearson r of every gated metric at least R"},
		&ucli.StringFlag{Name: "gate-metrics", Value: strings.Join(report.DefaultGateMetrics(), ","), Usage: "metrics that bare stats and the shorthand gates apply to"},
	)
	return append(append(append(inputs, settings...), outputs...), gates...)
}

// action is calibrate: validate every flag, then grade (calibrate.Run opens
// the outputs, reads the inputs, builds the report, evaluates the gates and
// writes every output before it reports a failed gate).
func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	cfg, err := config(c)
	if err != nil {
		return err
	}
	gates, err := parseGates(c)
	if err != nil {
		return err
	}
	return calibrate.Run(ctx, calibrate.Grade{
		Inputs: calibrate.InputArgs{
			Args:        c.Args().Slice(),
			TraceHeader: c.String("trace-header"),
			TraceData:   c.String("trace-data"),
			SimResults:  c.String("sim-results"),
			ITLData:     c.String("itl-data"),
			SimMetrics:  c.String("sim-metrics"),
			Interval:    c.Bool("interval"),
		},
		Outputs: calibrate.OutputArgs{
			Format:    c.String("format"),
			FormatSet: c.IsSet("format"),
			Report:    c.String("report"),
			Markdown:  c.String("markdown"),
			HTML:      c.String("html"),
		},
		Report: cfg, Gates: gates, SameModel: deploy.SameModel,
		Stdin: stdio.In, Stdout: stdio.Out, Log: log,
	})
}

// config maps the setting flags onto report.Config, rejecting bad values
// before any input is read.
func config(c *ucli.Context) (report.Config, error) {
	cfg := report.DefaultConfig()
	cfg.WarmupRequests = c.Int64("warmup-requests")
	if cfg.WarmupRequests < -1 {
		return cfg, exitcode.Usagef("--warmup-requests %d: want -1 (the header's value) or a count >= 0", cfg.WarmupRequests)
	}
	cfg.WarmupDuration = c.Duration("warmup-duration")
	if cfg.WarmupDuration < 0 {
		return cfg, exitcode.Usagef("--warmup-duration %s is negative", cfg.WarmupDuration)
	}
	cfg.NetworkRTTUs = c.Int64("network-rtt-us")
	if err := calibrate.CheckNetworkRTT(cfg.NetworkRTTUs); err != nil {
		return cfg, err
	}
	cfg.NetworkBandwidthMbps = c.Float64("network-bandwidth-mbps")
	if !finiteNonNeg(cfg.NetworkBandwidthMbps) {
		return cfg, exitcode.Usagef("--network-bandwidth-mbps %v: want a finite value >= 0", cfg.NetworkBandwidthMbps)
	}
	cfg.TTFTFrom = c.String("ttft-from")
	if cfg.TTFTFrom != report.TTFTFromFirstChunk && cfg.TTFTFrom != report.TTFTFromFirstToken {
		return cfg, exitcode.Usagef("--ttft-from %q: want %s or %s", cfg.TTFTFrom, report.TTFTFromFirstChunk, report.TTFTFromFirstToken)
	}
	cfg.TTFTMAPEThreshold = c.Float64("ttft-mape-threshold")
	if !finiteNonNeg(cfg.TTFTMAPEThreshold) {
		return cfg, exitcode.Usagef("--ttft-mape-threshold %v: want a finite fraction >= 0", cfg.TTFTMAPEThreshold)
	}
	cfg.HitRateTolerancePP = c.Float64("hit-rate-tolerance-pp")
	if !finiteNonNeg(cfg.HitRateTolerancePP) {
		return cfg, exitcode.Usagef("--hit-rate-tolerance-pp %v: want a finite value >= 0", cfg.HitRateTolerancePP)
	}
	slo, err := report.ParseSLOTargets(c.String("slo-ttft"), c.String("slo-itl"), c.String("slo-e2e"))
	if err != nil {
		return cfg, exitcode.Usagef("%v", err)
	}
	cfg.SLOOverrides = slo
	return cfg, nil
}

// parseGates parses every gate flag; a malformed --assert is shown with a
// caret under the offending column.
func parseGates(c *ucli.Context) (report.Gates, error) {
	g, err := report.ParseGateFlags(report.GateFlags{
		Assert:      c.String("assert"),
		FailUnder:   c.String("fail-under"),
		MaxMAPE:     c.String("max-mape"),
		MinPearson:  c.String("min-pearson"),
		GateMetrics: c.String("gate-metrics"),
	})
	if err == nil {
		return g, nil
	}
	var syn *report.GateSyntaxError
	if errors.As(err, &syn) && c.IsSet("assert") && syn.Expr == c.String("assert") {
		return g, exitcode.Usagef("--assert: %v\n%s", err, calibrate.Indent(syn.Caret(), "    "))
	}
	return g, exitcode.Usagef("%v", err)
}

func finiteNonNeg(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 }
