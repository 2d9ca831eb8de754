package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/report"
	"servesim/internal/tracev2"
)

// sources names every input as the command line gives it; "-" is stdin.
type sources struct {
	trace      tracev2.Input   // Stdin is filled in by readInputs
	more       []tracev2.Input // further real traces of the same run, merged with trace by time
	sim        string
	itl        string
	itlFound   bool // itl was found beside the trace, not named by --itl-data
	simMetrics string
}

// resolveInputs reads the positional arguments (REAL [SIM], REAL... SIM
// with three or more, or real=PATH sim=PATH in any order, real= repeatable)
// and the input flags. Several real traces are the per-worker traces of one
// run, merged by time.
func resolveInputs(c *ucli.Context) (sources, error) {
	var s sources
	args := c.Args().Slice()
	var reals []string
	var sim *string
	var bare []string
	for _, a := range args {
		key, val, keyed := strings.Cut(a, "=")
		switch {
		case keyed && (key == "real" || key == "sim"):
			if val == "" {
				return s, cli.Usagef("%s= needs a path (- for stdin)", key)
			}
			if key == "real" {
				reals = append(reals, val)
				break
			}
			if sim != nil {
				return s, cli.Usagef("sim= is given twice")
			}
			sim = &val
		default:
			bare = append(bare, a)
		}
	}
	switch {
	case len(bare) >= 3 && sim == nil && c.String("sim-results") == "":
		last := bare[len(bare)-1]
		reals, sim = append(reals, bare[:len(bare)-1]...), &last
	case len(bare) >= 3:
		return s, cli.Usagef("too many arguments: %s (the simulated results are already given)", strings.Join(args, " "))
	default:
		for _, a := range bare {
			switch {
			case len(reals) == 0:
				reals = append(reals, a)
			case sim == nil:
				sim = &a
			default:
				return s, cli.Usagef("argument %q: the real trace and the simulated results are already given", a)
			}
		}
	}

	hp, dp := c.String("trace-header"), c.String("trace-data")
	switch {
	case len(reals) > 0 && hp != "" && dp != "":
		return s, cli.Usagef("the real trace is given twice: %q and --trace-header/--trace-data", reals[0])
	case len(reals) > 1 && (hp != "" || dp != "" || c.String("itl-data") != ""):
		return s, cli.Usagef("several real traces: --trace-header, --trace-data and --itl-data take one (the traces' own .itl.csv are used)")
	case len(reals) > 0:
		s.trace = tracev2.Input{Path: reals[0], HeaderPath: hp, DataPath: dp}
		for _, r := range reals[1:] {
			s.more = append(s.more, tracev2.Input{Path: r})
		}
	case hp == "" && dp == "":
		return s, cli.Usagef("no real trace: give REAL (a trace file, or - for stdin) or --trace-header and --trace-data")
	default:
		s.trace = tracev2.Input{HeaderPath: hp, DataPath: dp}
	}

	flagSim := c.String("sim-results")
	switch {
	case sim != nil && flagSim != "":
		return s, cli.Usagef("the simulated results are given twice: %q and --sim-results %q", *sim, flagSim)
	case sim != nil:
		s.sim = *sim
	case flagSim != "":
		s.sim = flagSim
	default:
		return s, cli.Usagef("no simulated results: give SIM (replay's SimResult JSON, or - for stdin) or --sim-results")
	}
	s.simMetrics = c.String("sim-metrics")
	s.itl = c.String("itl-data")
	if s.itl == "" && len(s.more) == 0 {
		if p := siblingITL(s.trace); p != "" {
			s.itl, s.itlFound = p, true
		}
	}

	var fromStdin []string
	ins := []struct{ name, path string }{
		{"the real trace", s.trace.Path}, {"--trace-header", s.trace.HeaderPath}, {"--trace-data", s.trace.DataPath},
		{"the simulated results", s.sim}, {"--itl-data", s.itl}, {"--sim-metrics", s.simMetrics},
	}
	for _, m := range s.more {
		ins = append(ins, struct{ name, path string }{"a real trace", m.Path})
	}
	for _, in := range ins {
		if in.path == "-" {
			fromStdin = append(fromStdin, in.name)
		}
	}
	if len(fromStdin) > 1 {
		return s, cli.Usagef("stdin (-) can feed only one input, but %s read it", joinAnd(fromStdin))
	}
	return s, nil
}

// siblingITL is NAME.itl.csv beside the trace (the name observe gives it with
// --trace-output NAME), when it exists as a regular file; "" otherwise.
func siblingITL(in tracev2.Input) string {
	base := in.Path
	if in.DataPath != "" {
		base = in.DataPath
	} else if base == "" {
		base = in.HeaderPath
	}
	if base == "" || base == "-" {
		return ""
	}
	dir, file := filepath.Split(base)
	file = strings.TrimSuffix(file, ".gz")
	if strings.HasSuffix(file, ".itl.csv") {
		return ""
	}
	if ext := filepath.Ext(file); ext != "" {
		file = strings.TrimSuffix(file, ext)
	}
	p := filepath.Join(dir, file+".itl.csv")
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// readInputs reads every input into a report.Input. An input on stdin is read
// first: in `... | tee cap.trace | replay - ... | calibrate cap.trace -` the
// file is complete only once stdin ends.
func readInputs(ctx context.Context, s sources, stdin io.Reader, log *slog.Logger) (report.Input, error) {
	var in report.Input
	var tr *tracev2.Trace
	var traceName string
	var merged *tracev2.MergeInfo
	readTrace := func() error {
		ti := s.trace
		ti.Stdin = stdin
		opts := tracev2.Options{Warn: func(msg string) { log.Warn(msg) }}
		if len(s.more) > 0 {
			ins := append([]tracev2.Input{ti}, s.more...)
			for i := range ins {
				ins[i].Stdin = stdin
			}
			var err error
			if tr, merged, err = tracev2.LoadMerged(ins, opts); err != nil {
				return err
			}
			for _, w := range merged.Warnings {
				log.Warn(w)
			}
			traceName = tr.Name
			log.Info("merged the real traces by time", "inputs", len(ins), "rows", len(tr.Records))
			return nil
		}
		r, _, err := tracev2.Open(ti, opts)
		if err != nil {
			return err
		}
		defer r.Close()
		if tr, err = tracev2.ReadAll(r); err != nil {
			return err
		}
		traceName = r.Name()
		log.Debug("read the real trace", "file", traceName, "rows", len(tr.Records))
		return nil
	}
	readSim := func() error {
		sims, locs, err := readSimResults(s.sim, stdin)
		in.Sim, in.SimLocs = sims, locs
		return err
	}
	readMetrics := func() error {
		if s.simMetrics == "" {
			return nil
		}
		m, err := readSimMetrics(s.simMetrics, stdin)
		in.SimMetrics = m
		return err
	}
	steps := []func() error{readTrace, readSim, readMetrics}
	switch {
	case s.sim == "-":
		steps = []func() error{readSim, readTrace, readMetrics}
	case s.simMetrics == "-":
		steps = []func() error{readMetrics, readTrace, readSim}
	case s.trace.Path != "-" && s.trace.HeaderPath != "-" && s.trace.DataPath != "-":
		// No input on stdin: the two large inputs are read at the same time
		// (a million requests each take about a second). The trace's error
		// is reported first, as if read in order.
		steps = []func() error{concurrently(readTrace, readSim), readMetrics}
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return in, err
		}
		if err := step(); err != nil {
			return in, err
		}
	}

	if tr.Header != nil && tr.Header.Mode != "" && tr.Header.Mode != "real" {
		log.Warn("the trace is not a measured one; calibrate compares a real run with its replay", "file", traceName, "mode", tr.Header.Mode)
	}
	in.Header = report.HeaderFrom(tr.Header)
	in.SameModel = deploy.SameModel
	in.Trace = tr.Records
	if dupIndex(len(tr.Records), func(i int) int64 { return tr.Records[i].RequestID }) {
		// Only an input about to be rejected pays for naming every row.
		in.TraceLocs = make([]string, len(tr.Records))
		for i, line := range tr.Lines {
			in.TraceLocs[i] = traceName + ":" + itoa(line)
		}
	}

	if merged != nil {
		rows, err := mergedITL(merged, s, log)
		if err != nil {
			return in, err
		}
		in.ITL, in.ITLGiven = rows, rows != nil
		return in, nil
	}
	if s.itl != "" {
		if s.itlFound {
			log.Info("using the ITL data found beside the trace (--itl-data to choose another)", "file", s.itl)
		}
		rc, name, err := cli.OpenInput(s.itl, stdin)
		if err != nil {
			return in, err
		}
		defer rc.Close()
		rows, err := tracev2.ReadITL(rc, name, tr.Origin)
		if err != nil {
			return in, err
		}
		in.ITL, in.ITLGiven = rows, true
	}
	return in, nil
}

// mergedITL reads the ITL files beside merged real traces (each worker's
// PREFIX.itl.csv), each on its trace's origin and shift; nil when any trace
// has none (an ITL comparison over part of the run would mislead).
func mergedITL(m *tracev2.MergeInfo, s sources, log *slog.Logger) ([]tracev2.ITLRow, error) {
	ins := append([]tracev2.Input{s.trace}, s.more...)
	var all []tracev2.ITLRow
	for i, part := range m.Parts {
		p := siblingITL(ins[i])
		if p == "" {
			if i > 0 || len(all) > 0 {
				log.Warn("ITL data beside some real traces but not all; ITL is not compared", "missing", part.Name)
			}
			return nil, nil
		}
		rc, name, err := cli.OpenInput(p, nil)
		if err != nil {
			return nil, err
		}
		rows, err := tracev2.ReadITL(rc, name, part.Origin)
		rc.Close()
		if err != nil {
			return nil, err
		}
		for k := range rows {
			rows[k].TimestampUs += part.ShiftUs
		}
		all = append(all, rows...)
	}
	log.Info("using the ITL data found beside the real traces", "files", len(m.Parts))
	return all, nil
}

// concurrently runs a and b at the same time and returns a's error, else b's.
func concurrently(a, b func() error) func() error {
	return func() error {
		done := make(chan error, 1)
		go func() { done <- b() }()
		errA := a()
		errB := <-done
		if errA != nil {
			return errA
		}
		return errB
	}
}

// readSimResults reads a SimResult file. Locations are returned only when two
// results share a request_id, for the error that will name both.
func readSimResults(path string, stdin io.Reader) ([]tracev2.SimResult, []string, error) {
	var data []byte // stdin cannot be read twice: keep it for the locations
	rc, name, err := cli.OpenInput(path, stdin)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	var r io.Reader = rc
	if name == cli.StdinName {
		if data, err = io.ReadAll(rc); err != nil {
			return nil, nil, cli.WithCode(cli.ExitFailure, err)
		}
		r = bytes.NewReader(data)
	}
	sims, err := tracev2.ReadSimResults(r, name)
	if err != nil {
		return nil, nil, err
	}
	if !dupIndex(len(sims), func(i int) int64 { return sims[i].RequestID }) {
		return sims, nil, nil
	}
	if data == nil {
		if data, err = os.ReadFile(path); err != nil {
			return sims, nil, nil // the report still names the results by position
		}
	}
	locs := simLocations(data, name)
	if len(locs) != len(sims) {
		locs = nil
	}
	return sims, locs, nil
}

// dupIndex reports whether two of the n ids are equal.
func dupIndex(n int, id func(int) int64) bool {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = id(i)
	}
	slices.Sort(ids)
	for i := 1; i < n; i++ {
		if ids[i] == ids[i-1] {
			return true
		}
	}
	return false
}

func finiteNonNeg(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 }
