package calibrate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"servesim/internal/abtest"
	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/tracev2/input"
)

// Comparison is one run of calibrate compare, every flag already parsed.
type Comparison struct {
	// A and B name each side's traces: one, or the repeats of one
	// configuration separated by commas.
	A, B    string
	Options abtest.Options
	Gates   abtest.Gates
	Format  string // abtest.Formats
	Output  string // "" or "-" is Stdout

	Stdin  io.Reader
	Stdout io.Writer
	Log    *slog.Logger
}

// RunCompare compares two real runs (internal/abtest): it checks every
// argument, opens the output, reads the traces, compares, evaluates the
// gates, writes the result, and only then returns an error carrying exit
// code 3 when a gate failed.
func RunCompare(ctx context.Context, c Comparison) error {
	if !slices.Contains(abtest.Formats(), c.Format) {
		return exitcode.Usagef("--format %q: want one of %s", c.Format, strings.Join(abtest.Formats(), ", "))
	}
	if err := c.Options.Check(); err != nil {
		return err
	}
	if c.Gates.NeedsSLO() && c.Options.SLO.Empty() {
		return exitcode.Usagef("--assert names goodput, which needs --slo (e.g. --slo 'ttft.p99<500ms')")
	}
	sides, err := compareInputs(c.A, c.B)
	if err != nil {
		return err
	}
	var ins []outfile.Named
	for _, side := range sides {
		for _, p := range side {
			ins = append(ins, outfile.Named{What: "a trace", Path: p})
		}
	}
	if err := outfile.Check([]outfile.Named{{What: "--output", Path: c.Output}}, ins); err != nil {
		return err
	}
	out, err := outfile.Open(c.Output, c.Stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	var runs [2]abtest.Side
	for i, side := range sides {
		for _, p := range side {
			if err := ctx.Err(); err != nil {
				return err
			}
			tr, err := loadTrace(input.Config{Paths: []string{p}}, c.Stdin, c.Log)
			if err != nil {
				return err
			}
			runs[i] = append(runs[i], abtest.Run{Name: tr.Name, Header: tr.Header, Records: tr.Records})
		}
	}
	res, err := abtest.Compare(runs[0], runs[1], c.Options)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		c.Log.Warn(w)
	}
	c.Log.Info("compared", "mode", res.Mode, "why", res.ModeReason)
	failed := res.Apply(c.Gates)
	if err := res.Write(out, c.Format); err != nil {
		return fmt.Errorf("write %s: %w", outName(c.Output), err)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return exitcode.WithCode(exitcode.Assertion, fmt.Errorf("gate failed: %s", strings.Join(failed, "; ")))
	}
	return nil
}

func outName(p string) string {
	if p == "" || p == "-" {
		return "stdout"
	}
	return p
}

// compareInputs splits each side's argument into its traces: at most
// abtest.MaxRepeats each, stdin at most once, no file on both sides.
func compareInputs(a, b string) ([2][]string, error) {
	var sides [2][]string
	stdin := 0
	var seen []os.FileInfo
	var names []string
	for i, arg := range []string{a, b} {
		name := [2]string{"A", "B"}[i]
		for _, p := range strings.Split(arg, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				return sides, exitcode.Usagef("%s %q: an empty trace name (give TRACE or TRACE1,TRACE2,... for repeats)", name, arg)
			}
			if p == "-" {
				stdin++
			}
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				for j, s := range seen {
					if os.SameFile(s, st) {
						return sides, exitcode.Usagef("%s is the same trace as %s: each run is given once", p, names[j])
					}
				}
				seen, names = append(seen, st), append(names, p)
			}
			sides[i] = append(sides[i], p)
		}
		if len(sides[i]) > abtest.MaxRepeats {
			return sides, exitcode.Usagef("%s has %d traces: at most %d repeats a side", name, len(sides[i]), abtest.MaxRepeats)
		}
	}
	if stdin > 1 {
		return sides, exitcode.Usagef("stdin (-) can feed only one trace")
	}
	return sides, nil
}
