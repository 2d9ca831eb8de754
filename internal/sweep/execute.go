package sweep

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
	"time"

	"servesim/internal/outfile"
)

// Shard is the slice of a fanned-out sweep this process runs: case k is
// ours when Owns(k). The command line's shard (cli.Shard) is one.
type Shard interface {
	Owns(k int64) bool
	Sharded() bool
	String() string // "I/N"
}

// Job is a sweep ready to run: what the flags said, how a case runs (Run:
// the simulator, or a live server), and what the document records beside
// the rows. Execute runs it and writes what it found.
type Job struct {
	Command   string // "run sweep", "replay sweep"
	Options   Options
	Shard     Shard // nil: every case
	Run       RunFunc
	ProbeRate float64  // see Plan
	LoadKeys  []string // the swept keys that set the load
	Base      []Param  // what every case shares, for the reader
	// Inputs are what the fingerprint covers besides the command and the
	// spec: the base deployment, the workload or the trace, the client.
	Inputs []any
	Pages  Pages
	// Vary runs a case under a variant of its interval (Options.Interval);
	// nil when the runner cannot vary its step times and seeds.
	Vary   VariantFunc
	Stdout io.Writer // the table when Options.Outputs.Output is "-"
	Log    *slog.Logger
	// Progress, if set, starts following total runs (−1 when a max-rate
	// search does not know them in advance): tick is told the runs done,
	// finish is called once they are.
	Progress func(total int) (tick func(done, total int), finish func())
}

// Execute runs the job's cases (this shard's only) on Options.Jobs
// goroutines, then writes the table, the page and the answer (Write).
func Execute(ctx context.Context, j Job) error {
	start := time.Now()
	spec := j.Options.Spec
	parts := append(append([]any{j.Command}, j.Inputs...), SpecFingerprint(spec))
	iv := j.Options.Interval
	if iv.On() {
		parts = append(parts, iv)
	}
	fp, err := Fingerprint(parts...)
	if err != nil {
		return err
	}
	grid := j.Options.Grid
	plan := &Plan{Spec: spec, Grid: grid, Jobs: j.Options.Jobs, ProbeRate: j.ProbeRate, Interval: iv, Vary: j.Vary}
	sharded := j.Shard != nil && j.Shard.Sharded()
	if sharded {
		plan.Owns = j.Shard.Owns
	}
	finish := func() {}
	if j.Progress != nil {
		total := len(plan.Cases())
		if spec.Find == FindMaxRate {
			total = -1
		}
		plan.Progress, finish = j.Progress(total)
	}
	rows, ivRows, err := plan.RunAll(ctx, j.Run)
	finish()
	if err != nil {
		return err
	}
	d := &Doc{Command: j.Command, Fingerprint: fp, Cases: grid.Len(), Keys: grid.Keys(), LoadKeys: j.LoadKeys,
		Base: j.Base, SLO: spec.SLO.String(), Find: spec.Find, Rows: rows}
	if iv.On() {
		d.Interval, d.IntervalRows = &iv, ivRows
	}
	if sharded {
		d.Shard = j.Shard.String()
	}
	if spec.Find == FindMaxRate {
		d.Precision = spec.Precision
	}
	d.Finish(spec.Prices)
	wall := time.Since(start).Seconds()
	j.Log.Info("swept", "cases", d.Cases, "runs", len(d.Rows)+len(d.IntervalRows), "wall_s", fmt.Sprintf("%.2f", wall),
		"runs_per_s", fmt.Sprintf("%.1f", float64(len(d.Rows)+len(d.IntervalRows))/max(wall, 1e-9)))
	return Write(d, j.Options.Outputs, j.Pages, j.Stdout, j.Log)
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
func SpecFingerprint(s Spec) any {
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
		Prices    []Price
	}{axes, s.SLO.String(), s.Find, s.Precision, s.Prices.List()}
}

// SummaryFunc receives every run of a sweep (its case, and the rate a
// max-rate search asked for, 0 for a grid case) with a function that
// writes its summary. It is called from several goroutines at once.
type SummaryFunc func(c Case, rate float64, write func(io.Writer) error) error

// Summaries returns the SummaryFunc of --summaries: each run's summary in
// dir, case-0007.json for a grid case, case-0007-rate-23.45.json for a run
// of a max-rate search.
func Summaries(dir string) (SummaryFunc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--summaries: %w", err)
	}
	return func(cs Case, rate float64, write func(io.Writer) error) error {
		name := fmt.Sprintf("case-%04d.json", cs.Index)
		if rate > 0 {
			name = fmt.Sprintf("case-%04d-rate-%s.json", cs.Index, strconv.FormatFloat(rate, 'g', -1, 64))
		}
		out, err := outfile.Open(filepath.Join(dir, name), nil)
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
