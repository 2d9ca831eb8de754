package sweepcmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/flagspec"
	"servesim/internal/report"
	"servesim/internal/sweep"
)

// gridFlag collects repeated --grid values without splitting them at
// commas (urfave's slice flags would: a grid value is itself a list).
type gridFlag struct{ values []string }

func (g *gridFlag) Set(v string) error { g.values = append(g.values, v); return nil }
func (g *gridFlag) String() string     { return strings.Join(g.values, " ") }

// Flags are the flags of `run sweep` and `replay sweep`: what the
// sweep varies and asks, how it fans out, and where its tables go.
func Flags() []ucli.Flag {
	sweepFlags := cli.InCategory(flagspec.CatSweep,
		&ucli.StringFlag{Name: "sweep", Usage: "sweep file (YAML: grid, slo, find, precision, prices; see the description)"},
		&ucli.GenericFlag{Name: "grid", Value: &gridFlag{}, Usage: "KEY=VALUES to sweep (repeatable): a deployment key (num_instances, tensor_parallel, gpu, max_num_seqs, latency_model, pd_split P:D, ...) or a load key (rate, ...); VALUES is a list and ranges: 1,2,4  1..8  5..50:5  1..64*2, or a YAML list [\"a:1,b:2\", ...]"},
		&ucli.StringFlag{Name: "slo", Usage: "SLO every case is judged by, e.g. 'ttft.p99<500ms,itl.p99<50ms' (metrics ttft, tpot, itl, e2e; stats mean, p50, p90, p95, p99)"},
		&ucli.StringFlag{Name: "find", Usage: "answer directly: max-rate (the highest rate each deployment sustains under the SLO), min-cost or min-gpus (the cheapest or smallest deployment of the grid meeting it)"},
		&ucli.StringFlag{Name: "precision", Usage: "max-rate: relative precision of the search (default 1%)"},
		&ucli.StringFlag{Name: "prices", Usage: "YAML map of GPU name to USD per GPU-hour, over the built-in list prices (H100 3.95, A100-80 2.50, L40S 1.95)"},
		&ucli.IntFlag{Name: "jobs", Aliases: []string{"j"}, DefaultText: "every core", Usage: "runs simulated at once"},
		cli.ShardFlag(),
	)
	return append(sweepFlags,
		cli.FormatFlag("text", "stdout format: text (a table and the answer), csv (one line per run) or json (the document sweep merge reads)"),
		cli.OutputFlag("write the table here instead of stdout"),
		&ucli.StringFlag{Name: "html", Category: flagspec.CatOutput, Usage: "write a self-contained HTML report of the sweep to this file"},
		&ucli.StringFlag{Name: "summaries", Category: flagspec.CatOutput, Usage: "write every run's full summary JSON (what run or replay --metrics-out print for it) into this directory"},
	)
}

// Spec reads what the sweep varies and asks: the --sweep file, then
// --grid axes, --slo, --find, --precision and --prices over it.
func Spec(c *ucli.Context) (sweep.Spec, error) {
	s := sweep.NewSpec()
	if p := c.String("prices"); p != "" {
		var err error
		if s.Prices, err = sweep.LoadPrices(p, s.Prices); err != nil {
			return s, err
		}
	}
	if p := c.String("sweep"); p != "" {
		var err error
		if s, err = sweep.LoadSpec(p, s); err != nil {
			return s, err
		}
		if p := c.String("prices"); p != "" { // the flag wins over the file
			if s.Prices, err = sweep.LoadPrices(p, s.Prices); err != nil {
				return s, err
			}
		}
	}
	if g, ok := c.Generic("grid").(*gridFlag); ok {
		for _, v := range g.values {
			ax, err := sweep.ParseGridFlag(v)
			if err != nil {
				return s, err
			}
			s.Axes = append(s.Axes, ax)
		}
	}
	if c.IsSet("slo") {
		slo, err := sweep.ParseSLO(c.String("slo"))
		if err != nil {
			return s, err
		}
		s.SLO = slo
	}
	if c.IsSet("find") {
		s.SetFind(c.String("find"))
	}
	if c.IsSet("precision") {
		p, err := sweep.ParsePrecision(c.String("precision"), sweep.Pos{File: "--precision"})
		if err != nil {
			return s, err
		}
		s.Precision = p
	}
	return s, nil
}

// MaxJobs bounds --jobs: more simulations at once than cores only costs
// memory.
const MaxJobs = 1024

// Prepare validates the sweep flags before any work: --format, the spec
// (Spec, then its Check with the key a max-rate search varies) and --shard.
func Prepare(c *ucli.Context, rateKey string) (sweep.Spec, *sweep.Grid, cli.Shard, error) {
	if err := CheckFormat(c); err != nil {
		return sweep.Spec{}, nil, cli.Shard{}, err
	}
	if j := c.Int("jobs"); j < 0 || j > MaxJobs {
		return sweep.Spec{}, nil, cli.Shard{}, cli.Usagef("--jobs %d is outside [0, %d] (0: every core)", j, MaxJobs)
	}
	spec, err := Spec(c)
	if err != nil {
		return spec, nil, cli.Shard{}, err
	}
	grid, err := spec.Check(rateKey)
	if err != nil {
		return spec, nil, cli.Shard{}, err
	}
	shard, err := ReadShard(c)
	return spec, grid, shard, err
}

// ReadShard reads --shard (the index from the environment when only N is
// given).
func ReadShard(c *ucli.Context) (cli.Shard, error) {
	return cli.ParseShard(c.String("shard"), os.Getenv)
}

// Fingerprint is a short hash of a sweep's inputs (each part as JSON):
// shards merge only when theirs agree.
func Fingerprint(parts ...any) (string, error) {
	h := sha256.New()
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			return "", fmt.Errorf("fingerprint: %w", err)
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// SpecFingerprint is the part of a fingerprint that describes the spec.
func SpecFingerprint(s sweep.Spec) any {
	type axis struct {
		Key    string
		Values []string
	}
	axes := make([]axis, len(s.Axes))
	for i, ax := range s.Axes {
		axes[i].Key = ax.Key
		for _, v := range ax.Values {
			axes[i].Values = append(axes[i].Values, v.Text)
		}
	}
	return struct {
		Axes      []axis
		SLO, Find string
		Precision float64
		Prices    []sweep.Price
	}{axes, s.SLO.String(), s.Find, s.Precision, s.Prices.List()}
}

// NewProgress is a progress bar over a sweep's runs.
func NewProgress(stdio cli.IO, quiet bool, total int) (*cli.Progress, func(done, total int)) {
	p := cli.NewProgress(stdio.Err, quiet, int64(total), "sweeping")
	return p, func(done, _ int) { p.Set(int64(done), fmt.Sprintf("sweeping: %d runs", done)) }
}

// Write writes a finished sweep document where the flags say: the
// table on -o in --format, the page to --html. Files appear only when
// complete. It returns the sweep's NotMetError (exit 3) when it has an
// SLO that no case meets.
func Write(c *ucli.Context, stdio cli.IO, d *sweep.Doc, log *slog.Logger) error {
	format := c.String("format")
	out, err := cli.CreateOutput(c.String("output"), stdio.Out)
	if err != nil {
		return err
	}
	defer out.Abort()
	var page *cli.Output
	if p := c.String("html"); p != "" {
		if p == "-" {
			return cli.Usagef("--html needs a file (stdout carries the table)")
		}
		if page, err = cli.CreateOutput(p, nil); err != nil {
			return err
		}
		defer page.Abort()
		if err := report.WriteSweepHTML(page, d); err != nil {
			return err
		}
	}
	if err := report.WriteSweep(out, d, format); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if page != nil {
		if err := page.Commit(); err != nil {
			return err
		}
	}
	for _, r := range d.Rows {
		if r.Status == sweep.StatusInfeasible {
			log.Warn("infeasible case", "case", r.Case, "params", sweep.ParamText(r.Params), "why", r.Reason)
		}
	}
	return d.NotMet()
}

// CheckFormat validates --format before any work is done.
func CheckFormat(c *ucli.Context) error {
	f := c.String("format")
	for _, ok := range report.SweepFormats {
		if f == ok {
			return nil
		}
	}
	return cli.Usagef("--format %q: want text, csv or json", f)
}

// MergeCommand is `sweep merge`: it joins the JSON documents of a sweep's
// shards into the tables and page the sweep prints when run whole.
func MergeCommand() cli.Command {
	flags := []ucli.Flag{
		cli.FormatFlag("text", "stdout format: text, csv or json"),
		cli.OutputFlag("write the table here instead of stdout"),
		&ucli.StringFlag{Name: "html", Category: flagspec.CatOutput, Usage: "write the sweep's HTML report to this file"},
	}
	return cli.Command{
		Name:      "merge",
		Usage:     "join the JSON outputs of a sweep's shards into the table one machine prints",
		ArgsUsage: "SHARD.json...",
		Description: `merge reads the JSON documents of every shard of one sweep (each run with
--shard I/N --format json) and prints exactly what the sweep prints when it runs
whole: the same rows in the same order, and the answer computed from all of them.
Shards of another sweep (another grid, workload, trace, deployment, SLO or price
table), a shard given twice, or a missing shard are errors. A whole sweep's JSON
merges alone: a way to print it again as text or CSV, or to draw its page.

Example, with GNU parallel on 8 local slots (or 8 machines with --sshlogin):

   parallel run sweep --sweep capacity.yaml --workload chatbot --num-requests 10000 \
       --shard {}/8 --format json -o shard-{}.json ::: 0 1 2 3 4 5 6 7
   run sweep merge shard-*.json --html capacity.html`,
		Flags: flags,
		Action: func(_ context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
			if err := CheckFormat(c); err != nil {
				return err
			}
			names := c.Args().Slice()
			docs := make([]*sweep.Doc, len(names))
			for i, name := range names {
				data, err := readAll(name, stdio.In)
				if err != nil {
					return err
				}
				if docs[i], err = sweep.DecodeDoc(name, data); err != nil {
					return err
				}
			}
			d, err := sweep.Merge(names, docs)
			if err != nil {
				return err
			}
			return Write(c, stdio, d, log)
		},
	}
}

func readAll(name string, stdin io.Reader) ([]byte, error) {
	r, name, err := cli.OpenInput(name, stdin)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// Job is a sweep a command has prepared; Execute runs it and writes what
// it found. Only how a case runs (Run) differs between the sweeps.
type Job struct {
	Command   string // "run sweep", "replay sweep"
	Spec      sweep.Spec
	Grid      *sweep.Grid
	Shard     cli.Shard
	Run       sweep.RunFunc
	ProbeRate float64       // see sweep.Plan
	LoadKeys  []string      // the swept keys that set the load
	Base      []sweep.Param // what every case shares, for the reader
	// Inputs are what the fingerprint covers besides the command and the
	// spec: the base deployment, the workload or the trace, the client.
	Inputs []any
}

// Execute runs the job's cases on --jobs cores (this shard's only), with a
// progress bar, then writes the table, the page and the answer (Write).
func Execute(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger, j Job) error {
	start := time.Now()
	fp, err := Fingerprint(append(append([]any{j.Command}, j.Inputs...), SpecFingerprint(j.Spec))...)
	if err != nil {
		return err
	}
	plan := &sweep.Plan{Spec: j.Spec, Grid: j.Grid, Jobs: c.Int("jobs"), ProbeRate: j.ProbeRate}
	if j.Shard.Sharded() {
		plan.Owns = j.Shard.Owns
	}
	total := len(plan.Cases())
	if j.Spec.Find == sweep.FindMaxRate {
		total = -1
	}
	progress, tick := NewProgress(stdio, c.Bool("quiet"), total)
	plan.Progress = tick
	rows, err := plan.Run(ctx, j.Run)
	progress.Finish()
	if err != nil {
		return err
	}
	d := &sweep.Doc{Command: j.Command, Fingerprint: fp, Cases: j.Grid.Len(), Keys: j.Grid.Keys(), LoadKeys: j.LoadKeys,
		Base: j.Base, SLO: j.Spec.SLO.String(), Find: j.Spec.Find, Rows: rows}
	if j.Shard.Sharded() {
		d.Shard = j.Shard.String()
	}
	if j.Spec.Find == sweep.FindMaxRate {
		d.Precision = j.Spec.Precision
	}
	d.Finish(j.Spec.Prices)
	done(log, start, d)
	return Write(c, stdio, d, log)
}

// done logs how long a sweep took.
func done(log *slog.Logger, start time.Time, d *sweep.Doc) {
	wall := time.Since(start).Seconds()
	log.Info("swept", "cases", d.Cases, "runs", len(d.Rows), "wall_s", fmt.Sprintf("%.2f", wall),
		"runs_per_s", fmt.Sprintf("%.1f", float64(len(d.Rows))/max(wall, 1e-9)))
}

// Summaries returns the writer of --summaries: each run's summary in dir,
// case-0007.json for a grid case, case-0007-rate-23.45.json for a run of a
// max-rate search; write renders the summary.
func Summaries(dir string, stdio cli.IO) (func(c sweep.Case, rate float64, write func(io.Writer) error) error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--summaries: %w", err)
	}
	return func(cs sweep.Case, rate float64, write func(io.Writer) error) error {
		name := fmt.Sprintf("case-%04d.json", cs.Index)
		if rate > 0 {
			name = fmt.Sprintf("case-%04d-rate-%s.json", cs.Index, strconv.FormatFloat(rate, 'g', -1, 64))
		}
		out, err := cli.CreateOutput(filepath.Join(dir, name), stdio.Out)
		if err != nil {
			return err
		}
		defer out.Abort()
		if err := write(out); err != nil {
			return err
		}
		return out.Commit()
	}, nil
}

// HelpTail ends the description of a sweep command: a commented sweep
// file and the SLO grammar.
func HelpTail() string {
	indent := func(s string) string { return "   " + strings.ReplaceAll(s, "\n", "\n   ") }
	return "A sweep file holds what the flags say, and more:\n\n" + indent(sweep.SpecExample) + "\n\n" + indent(sweep.SLOGrammar)
}
