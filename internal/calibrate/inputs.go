package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/report"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// InputArgs names the inputs of a grade as the command line gives them: the
// positional arguments (REAL [SIM], REAL... SIM with three or more, or
// real=PATH sim=PATH in any order, real= repeatable) and the input flags.
type InputArgs struct {
	Args        []string
	TraceHeader string // --trace-header
	TraceData   string // --trace-data
	SimResults  string // --sim-results
	ITLData     string // --itl-data
	SimMetrics  string // --sim-metrics
	// Interval reads the results of replay --interval beside the
	// simulated results (tracev2.IntervalResultPaths) for the coverage.
	Interval bool
}

// sources names every input of a grade; "-" is stdin.
type sources struct {
	// real is the real trace, or several of the same run merged by time;
	// readInputs fills in Stdin and Log.
	real       input.Config
	sim        string
	itl        string
	itlFound   bool // itl was found beside the trace, not named by --itl-data
	simMetrics string
	// simLo and simHi are the results of the interval's runs ("" = none).
	simLo, simHi string
}

// splitArgs sorts the positional arguments into the real traces and the
// simulated results.
func splitArgs(a InputArgs) (reals []string, sim *string, err error) {
	var bare []string
	for _, arg := range a.Args {
		key, val, keyed := strings.Cut(arg, "=")
		switch {
		case keyed && (key == "real" || key == "sim"):
			if val == "" {
				return nil, nil, exitcode.Usagef("%s= needs a path (- for stdin)", key)
			}
			if key == "real" {
				reals = append(reals, val)
				break
			}
			if sim != nil {
				return nil, nil, exitcode.Usagef("sim= is given twice")
			}
			sim = &val
		default:
			bare = append(bare, arg)
		}
	}
	switch {
	case len(bare) >= 3 && sim == nil && a.SimResults == "":
		last := bare[len(bare)-1]
		return append(reals, bare[:len(bare)-1]...), &last, nil
	case len(bare) >= 3:
		return nil, nil, exitcode.Usagef("too many arguments: %s (the simulated results are already given)", strings.Join(a.Args, " "))
	}
	for _, arg := range bare {
		switch {
		case len(reals) == 0:
			reals = append(reals, arg)
		case sim == nil:
			sim = &arg
		default:
			return nil, nil, exitcode.Usagef("argument %q: the real trace and the simulated results are already given", arg)
		}
	}
	return reals, sim, nil
}

// resolveInputs checks the inputs of a grade. Several real traces are the
// per-worker traces of one run, merged by time.
func resolveInputs(a InputArgs) (sources, error) {
	var s sources
	reals, sim, err := splitArgs(a)
	if err != nil {
		return s, err
	}
	hp, dp := a.TraceHeader, a.TraceData
	switch {
	case len(reals) > 0 && hp != "" && dp != "":
		return s, exitcode.Usagef("the real trace is given twice: %q and --trace-header/--trace-data", reals[0])
	case len(reals) > 1 && (hp != "" || dp != "" || a.ITLData != ""):
		return s, exitcode.Usagef("several real traces: --trace-header, --trace-data and --itl-data take one (the traces' own .itl.csv are used)")
	case len(reals) == 0 && hp == "" && dp == "":
		return s, exitcode.Usagef("no real trace: give REAL (a trace file, or - for stdin) or --trace-header and --trace-data")
	}
	s.real = input.Config{Paths: reals, HeaderPath: hp, DataPath: dp}

	switch {
	case sim != nil && a.SimResults != "":
		return s, exitcode.Usagef("the simulated results are given twice: %q and --sim-results %q", *sim, a.SimResults)
	case sim != nil:
		s.sim = *sim
	case a.SimResults != "":
		s.sim = a.SimResults
	default:
		return s, exitcode.Usagef("no simulated results: give SIM (replay's SimResult JSON, or - for stdin) or --sim-results")
	}
	s.simMetrics = a.SimMetrics
	if a.Interval {
		if s.sim == "-" {
			return s, exitcode.Usagef("--interval reads the interval's results beside the simulated results: give them as a file, not stdin")
		}
		s.simLo, s.simHi = tracev2.IntervalResultPaths(s.sim)
	}
	s.itl = a.ITLData
	if s.itl == "" {
		if p := s.real.ITLBeside(); p != "" {
			s.itl, s.itlFound = p, true
		}
	}
	return s, s.oneStdin()
}

// oneStdin rejects more than one input on stdin.
func (s sources) oneStdin() error {
	var fromStdin []string
	first, more := "", []string(nil)
	if len(s.real.Paths) > 0 {
		first, more = s.real.Paths[0], s.real.Paths[1:]
	}
	ins := []struct{ name, path string }{
		{"the real trace", first}, {"--trace-header", s.real.HeaderPath}, {"--trace-data", s.real.DataPath},
		{"the simulated results", s.sim}, {"--itl-data", s.itl}, {"--sim-metrics", s.simMetrics},
	}
	for _, m := range more {
		ins = append(ins, struct{ name, path string }{"a real trace", m})
	}
	for _, in := range ins {
		if in.path == "-" {
			fromStdin = append(fromStdin, in.name)
		}
	}
	if len(fromStdin) > 1 {
		return exitcode.Usagef("stdin (-) can feed only one input, but %s read it", joinAnd(fromStdin))
	}
	return nil
}

// gradeReads holds what readInputs has read so far.
type gradeReads struct {
	s     sources
	stdin io.Reader
	log   *slog.Logger
	in    report.Input
	tr    *input.Loaded
}

// readTrace reads the real trace, or merges the real traces by time.
func (g *gradeReads) readTrace() error {
	cfg := g.s.real
	cfg.Stdin, cfg.Log = g.stdin, g.log
	tr, err := input.Load(cfg)
	if err != nil {
		return err
	}
	g.tr = tr
	if tr.Merge != nil {
		g.log.Info("merged the real traces by time", "inputs", len(cfg.Paths), "rows", len(tr.Records))
		return nil
	}
	g.log.Debug("read the real trace", "file", tr.Name, "rows", len(tr.Records))
	return nil
}

func (g *gradeReads) readSim() error {
	sims, locs, err := readSimResults(g.s.sim, g.stdin)
	g.in.Sim, g.in.SimLocs = sims, locs
	var te *tracev2.Error
	if errors.As(err, &te) && te.Line == 1 && te.Column == 1 && strings.HasPrefix(te.Msg, "want a JSON array ('[') or JSON Lines ('{'), got 'r'") {
		// A CSV that starts with request_id: a second real trace.
		return fmt.Errorf("%w; to compare two real runs, see calibrate compare --help", err)
	}
	return err
}

// readInterval reads the results of the interval's runs, when asked.
func (g *gradeReads) readInterval() error {
	if g.s.simLo == "" {
		return nil
	}
	var err error
	if g.in.SimLo, _, err = readSimResults(g.s.simLo, nil); err != nil {
		return err
	}
	g.in.SimHi, _, err = readSimResults(g.s.simHi, nil)
	return err
}

func (g *gradeReads) readMetrics() error {
	if g.s.simMetrics == "" {
		return nil
	}
	m, err := readSimMetrics(g.s.simMetrics, g.stdin)
	g.in.SimMetrics = m
	return err
}

// steps orders the reads: an input on stdin is read first, as in
// `... | tee cap.trace | replay - ... | calibrate cap.trace -` the file is
// complete only once stdin ends.
func (g *gradeReads) steps() []func() error {
	s := g.s
	switch {
	case s.sim == "-":
		return []func() error{g.readSim, g.readTrace, g.readMetrics}
	case s.simMetrics == "-":
		return []func() error{g.readMetrics, g.readTrace, g.readSim}
	case !slices.Contains(s.real.Paths, "-") && s.real.HeaderPath != "-" && s.real.DataPath != "-":
		// No input on stdin: the two large inputs are read at the same time
		// (a million requests each take about a second). The trace's error
		// is reported first, as if read in order.
		return []func() error{concurrently(g.readTrace, g.readSim), g.readMetrics}
	}
	return []func() error{g.readTrace, g.readSim, g.readMetrics}
}

// readInputs reads every input of a grade into a report.Input.
func readInputs(ctx context.Context, s sources, stdin io.Reader, log *slog.Logger) (report.Input, error) {
	g := &gradeReads{s: s, stdin: stdin, log: log}
	for _, step := range append(g.steps(), g.readInterval) {
		if err := ctx.Err(); err != nil {
			return g.in, err
		}
		if err := step(); err != nil {
			return g.in, err
		}
	}
	tr, in := g.tr, &g.in
	if tr.Header != nil && tr.Header.Mode != "" && tr.Header.Mode != "real" {
		log.Warn("the trace is not a measured one; calibrate compares a real run with its replay", "file", tr.Name, "mode", tr.Header.Mode)
	}
	in.Header = report.HeaderFrom(tr.Header)
	in.Trace = tr.Records
	in.TraceName, in.SimName = tr.Name, g.s.sim
	if g.s.sim == "-" {
		in.SimName = tracev2.StdinName
	}
	if dupIndex(len(tr.Records), func(i int) int64 { return tr.Records[i].RequestID }) {
		// Only an input about to be rejected pays for naming every row.
		in.TraceLocs = make([]string, len(tr.Records))
		for i, line := range tr.Lines {
			in.TraceLocs[i] = tr.Name + ":" + strconv.Itoa(line)
		}
	}
	rows, given, err := g.readITL()
	in.ITL, in.ITLGiven = rows, given
	return *in, err
}

// readITL reads the ITL data of a grade: the files beside merged traces, or
// the one named or found beside the trace.
func (g *gradeReads) readITL() ([]tracev2.ITLRow, bool, error) {
	if m := g.tr.Merge; m != nil {
		rows, missing, err := g.tr.MergedITL()
		switch {
		case err != nil:
			return nil, false, err
		case missing > 0:
			g.log.Warn("ITL data beside some real traces but not all; ITL is not compared", "missing", m.Parts[missing].Name)
			return nil, false, nil
		case missing == 0:
			return nil, false, nil
		}
		g.log.Info("using the ITL data found beside the real traces", "files", len(m.Parts))
		return rows, rows != nil, nil
	}
	if g.s.itl == "" {
		return nil, false, nil
	}
	if g.s.itlFound {
		g.log.Info("using the ITL data found beside the trace (--itl-data to choose another)", "file", g.s.itl)
	}
	rows, err := g.tr.ReadITL(g.s.itl, g.stdin)
	if err != nil {
		return nil, false, err
	}
	return rows, true, nil
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

// FitArgs names the traces of a fit as the command line gives them.
type FitArgs struct {
	Args        []string // each REAL
	TraceHeader string   // --trace-header
	TraceData   string   // --trace-data
	ITLData     string   // --itl-data
	ITLDataSet  bool     // --itl-data was given, even empty
}

// fitTraceInputs are the traces as the arguments name them: each REAL, or
// the two-file form of --trace-header and --trace-data (one trace).
func fitTraceInputs(a FitArgs) ([]input.Config, error) {
	hp, dp := a.TraceHeader, a.TraceData
	switch {
	case len(a.Args) > 0 && (hp != "" || dp != ""):
		return nil, exitcode.Usagef("give the real traces either as arguments or as --trace-header and --trace-data, not both")
	case len(a.Args) > 1 && a.ITLDataSet:
		return nil, exitcode.Usagef("--itl-data names the ITL file of one trace; with several, each is found beside its trace (NAME.itl.csv)")
	case len(a.Args) > 0:
		var ins []input.Config
		stdin := 0
		for _, arg := range a.Args {
			if arg == "-" {
				stdin++
			}
			ins = append(ins, input.Config{Paths: []string{arg}})
		}
		if stdin > 1 {
			return nil, exitcode.Usagef("stdin (-) can be read only once")
		}
		return ins, nil
	case hp == "" && dp == "":
		return nil, exitcode.Usagef("no real trace: give REAL [REAL...] (trace files, or - for stdin) or --trace-header and --trace-data")
	}
	return []input.Config{{HeaderPath: hp, DataPath: dp}}, nil
}

// loadTrace opens one real trace (input.Load) and refuses one whose
// request ids repeat: a fit's replay and a comparison's pairs key
// requests by id.
func loadTrace(cfg input.Config, stdin io.Reader, log *slog.Logger) (*input.Loaded, error) {
	cfg.Stdin, cfg.Log = stdin, log
	tr, err := input.Load(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := tr.IndexByID(); err != nil {
		return nil, err
	}
	return tr, nil
}

// readFitTrace reads a trace of a fit (normalised) and its ITL rows, if
// any: from itlPath, else from the file found beside the trace.
func readFitTrace(cfg input.Config, itlPath string, stdin io.Reader, log *slog.Logger) (*tracev2.Trace, []tracev2.ITLRow, error) {
	tr, err := loadTrace(cfg, stdin, log)
	if err != nil {
		return nil, nil, err
	}
	var st tracev2.StatusTally
	for i := range tr.Records {
		st.Add(tr.Records[i].Status, tr.Lines[i])
	}
	if w := st.Warning(tr.Name); w != "" {
		log.Warn(w + " (not fitted)")
	}
	if itlPath == "" {
		if itlPath = cfg.ITLBeside(); itlPath != "" {
			log.Info("using the ITL data found beside the trace (--itl-data to choose another)", "file", itlPath)
		}
	}
	if itlPath == "" {
		return tr.Trace, nil, nil
	}
	rows, err := tr.ReadITL(itlPath, stdin)
	if err != nil {
		return nil, nil, err
	}
	return tr.Trace, rows, nil
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	s := xs[0]
	for _, x := range xs[1 : len(xs)-1] {
		s += ", " + x
	}
	return s + " and " + xs[len(xs)-1]
}
