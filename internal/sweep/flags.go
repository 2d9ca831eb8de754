package sweep

import (
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/outfile"
)

// The names of the sweep's flags, shared by `run sweep` and `replay sweep`.
const (
	FlagSweep     = "sweep"
	FlagGrid      = "grid"
	FlagSLO       = "slo"
	FlagFind      = "find"
	FlagPrecision = "precision"
	FlagPrices    = "prices"
	FlagJobs      = "jobs"
	FlagFormat    = "format"
	FlagOutput    = "output"
	FlagHTML      = "html"
	FlagSummaries = "summaries"
	FlagInterval  = "interval"
	FlagSeeds     = "seeds"
)

// MaxSeeds bounds --seeds: each seed is a run of every case (two with
// --interval).
const MaxSeeds = 100

// MaxJobs bounds --jobs: more simulations at once than cores only costs
// memory.
const MaxJobs = 1024

// Flags describe the flags of a sweep command: what the sweep varies and
// asks, how many cases run at once, and where its tables go. The shard
// of a fanned-out sweep (--shard) is the command line's own flag.
func Flags() []flagspec.Flag {
	sw := flagspec.CatSweep
	return []flagspec.Flag{
		{Name: FlagSweep, Category: sw, Kind: flagspec.String, Usage: "sweep file (YAML: grid, slo, find, precision, prices; see the description)"},
		{Name: FlagGrid, Category: sw, Kind: flagspec.Strings, Usage: "KEY=VALUES to sweep (repeatable): a deployment key (num_instances, tensor_parallel, gpu, max_num_seqs, latency_model, pd_split P:D, ...) or a load key (rate, ...); VALUES is a list and ranges: 1,2,4  1..8  5..50:5  1..64*2, or a YAML list [\"a:1,b:2\", ...]"},
		{Name: FlagSLO, Category: sw, Kind: flagspec.String, Usage: "SLO every case is judged by, e.g. 'ttft.p99<500ms,itl.p99<50ms' (metrics ttft, tpot, itl, e2e; stats mean, p50, p90, p95, p99)"},
		{Name: FlagFind, Category: sw, Kind: flagspec.String, Usage: "answer directly: max-rate (the highest rate each deployment sustains under the SLO), min-cost or min-gpus (the cheapest or smallest deployment of the grid meeting it), min-shed (the setting of the grid meeting it that rejects the fewest requests: a gateway's admission policy at overload)"},
		{Name: FlagPrecision, Category: sw, Kind: flagspec.String, Usage: "max-rate: relative precision of the search (default 1%)"},
		{Name: FlagPrices, Category: sw, Kind: flagspec.String, Usage: "YAML map of GPU name to USD per GPU-hour, over the built-in list prices (H100 3.95, A100-80 2.50, L40S 1.95)"},
		{Name: FlagInterval, Category: sw, Kind: flagspec.Bool, Usage: "90% intervals: run every case also with its step times × (1 ± 1.645σ), σ the deployment's step_time_sigma (a fitted file's), else the model's documented σ (19% for physics); each row's latencies, each max rate and each min-cost answer get their interval; about 3 times the runs"},
		{Name: FlagSeeds, Category: sw, Kind: flagspec.Int, Default: 1, Usage: "run every case with N seeds (the workload's seed, +1, ...); their spread widens the interval (with --interval: 2N runs beside each case's own)"},
		{Name: FlagJobs, Aliases: []string{"j"}, Category: sw, Kind: flagspec.Int, DefaultText: "every core", Usage: "runs simulated at once"},
		{Name: FlagFormat, Kind: flagspec.String, Default: "text", Choices: formats(), Usage: "stdout format: text (a table and the answer), csv (one line per run) or json (the document sweep merge reads)"},
		{Name: FlagOutput, Aliases: []string{"o"}, Kind: flagspec.String, Default: "-", Usage: "write the table here instead of stdout"},
		{Name: FlagHTML, Category: flagspec.CatOutput, Kind: flagspec.String, Usage: "write a self-contained HTML report of the sweep to this file"},
		{Name: FlagSummaries, Category: flagspec.CatOutput, Kind: flagspec.String, Usage: "write every run's full summary JSON (what run or replay --metrics-out print for it) into this directory"},
	}
}

// MergeFlags describe the flags of `sweep merge`.
func MergeFlags() []flagspec.Flag {
	return []flagspec.Flag{
		{Name: FlagFormat, Kind: flagspec.String, Default: "text", Choices: formats(), Usage: "stdout format: text, csv or json"},
		{Name: FlagOutput, Aliases: []string{"o"}, Kind: flagspec.String, Default: "-", Usage: "write the table here instead of stdout"},
		{Name: FlagHTML, Category: flagspec.CatOutput, Kind: flagspec.String, Usage: "write the sweep's HTML report to this file"},
	}
}

// MergeUsage and MergeDescription are the help of `sweep merge`.
const (
	MergeUsage       = "join the JSON outputs of a sweep's shards into the table one machine prints"
	MergeDescription = `merge reads the JSON documents of every shard of one sweep (each run with
--shard I/N --format json) and prints exactly what the sweep prints when it runs
whole: the same rows in the same order, and the answer computed from all of them.
Shards of another sweep (another grid, workload, trace, deployment, SLO or price
table), a shard given twice, or a missing shard are errors. A whole sweep's JSON
merges alone: a way to print it again as text or CSV, or to draw its page.

Example, with GNU parallel on 8 local slots (or 8 machines with --sshlogin):

   parallel run sweep --sweep capacity.yaml --workload chatbot --num-requests 10000 \
       --shard {}/8 --format json -o shard-{}.json ::: 0 1 2 3 4 5 6 7
   run sweep merge shard-*.json --html capacity.html`
)

// Options are what the sweep's flags say: the spec (what is varied and
// asked), the grid it makes, how many cases run at once, and the outputs.
type Options struct {
	Spec      Spec
	Grid      *Grid
	Jobs      int // 0: every core
	Outputs   Outputs
	Summaries string // a directory for every run's summary; "" = none
	Interval  Interval
}

// Outputs are where a finished sweep goes: its table on Output ("-" is
// stdout) in Format, its page to HTML ("" = none).
type Outputs struct {
	Format string // text, csv or json
	Output string
	HTML   string
}

// Files are the files the outputs write, for outfile.Check.
func (o Outputs) Files() []outfile.Named {
	return []outfile.Named{{What: "--" + FlagOutput, Path: o.Output}, {What: "--" + FlagHTML, Path: o.HTML}}
}

// OutputsFrom reads the output flags (MergeFlags) from the values given,
// with their defaults, and checks the format.
func OutputsFrom(v flagspec.Values) (Outputs, error) {
	o := Outputs{Format: "text", Output: "-"}
	if s, ok := v[FlagFormat].(string); ok {
		o.Format = s
	}
	if s, ok := v[FlagOutput].(string); ok {
		o.Output = s
	}
	o.HTML, _ = v[FlagHTML].(string)
	return o, checkFormat(o.Format)
}

// Prepare reads and validates the sweep flags before any work, in this
// order: --format, the outputs against the inputs (the sweep file, the
// prices and inputs, the command's: outfile.Check), --jobs, the spec (SpecFrom), then the spec as a whole
// with the key a max-rate search varies (Spec.Check).
func Prepare(v flagspec.Values, rateKey string, inputs ...outfile.Named) (Options, error) {
	var o Options
	var err error
	if o.Outputs, err = OutputsFrom(v); err != nil {
		return o, err
	}
	sweepFile, _ := v[FlagSweep].(string)
	prices, _ := v[FlagPrices].(string)
	inputs = append(inputs, outfile.Named{What: "--" + FlagSweep, Path: sweepFile}, outfile.Named{What: "--" + FlagPrices, Path: prices})
	if err := outfile.Check(o.Outputs.Files(), inputs); err != nil {
		return o, err
	}
	o.Jobs, _ = v[FlagJobs].(int)
	if o.Jobs < 0 || o.Jobs > MaxJobs {
		return o, exitcode.Usagef("--jobs %d is outside [0, %d] (0: every core)", o.Jobs, MaxJobs)
	}
	o.Summaries, _ = v[FlagSummaries].(string)
	o.Interval.Model, _ = v[FlagInterval].(bool)
	o.Interval.Seeds = 1
	if n, ok := v[FlagSeeds].(int); ok {
		if n < 1 || n > MaxSeeds {
			return o, exitcode.Usagef("--seeds %d is outside [1, %d]", n, MaxSeeds)
		}
		o.Interval.Seeds = n
	}
	if o.Spec, err = SpecFrom(v); err != nil {
		return o, err
	}
	o.Grid, err = o.Spec.Check(rateKey)
	return o, err
}

// SpecFrom reads what the sweep varies and asks: the --sweep file, then
// --grid axes, --slo, --find, --precision and --prices over it.
func SpecFrom(v flagspec.Values) (Spec, error) {
	s := NewSpec()
	prices, _ := v[FlagPrices].(string)
	if prices != "" {
		var err error
		if s.Prices, err = LoadPrices(prices, s.Prices); err != nil {
			return s, err
		}
	}
	if p, _ := v[FlagSweep].(string); p != "" {
		var err error
		if s, err = LoadSpec(p, s); err != nil {
			return s, err
		}
		if prices != "" { // the flag wins over the file
			if s.Prices, err = LoadPrices(prices, s.Prices); err != nil {
				return s, err
			}
		}
	}
	grid, _ := v[FlagGrid].([]string)
	for _, g := range grid {
		ax, err := ParseGridFlag(g)
		if err != nil {
			return s, err
		}
		s.Axes = append(s.Axes, ax)
	}
	if slo, ok := v[FlagSLO].(string); ok {
		parsed, err := ParseSLO(slo)
		if err != nil {
			return s, err
		}
		s.SLO = parsed
	}
	if find, ok := v[FlagFind].(string); ok {
		s.SetFind(find)
	}
	if prec, ok := v[FlagPrecision].(string); ok {
		p, err := ParsePrecision(prec, Pos{File: "--precision"})
		if err != nil {
			return s, err
		}
		s.Precision = p
	}
	return s, nil
}

// HelpTail ends the description of a sweep command: a commented sweep
// file and the SLO grammar.
func HelpTail() string {
	indent := func(s string) string { return "   " + strings.ReplaceAll(s, "\n", "\n   ") }
	return "A sweep file holds what the flags say, and more:\n\n" + indent(SpecExample) + "\n\n" + indent(SLOGrammar)
}
