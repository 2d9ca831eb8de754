package live

import (
	"fmt"
	"log/slog"

	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
)

// mergeTraces is observe --merge TRACE...: the per-worker traces of a
// sharded run merged by time onto the earliest worker's start
// (tracev2.Merge), written to out (- or a prefix). Nothing is sent.
func mergeTraces(paths []string, out string, blisHeader bool, stdio IO, log *slog.Logger) error {
	if len(paths) == 0 {
		return exitcode.Usagef("--merge: name the traces to merge (the per-worker traces of a --shard run)")
	}
	outs, err := tracev2.OutputFiles("--trace-output", out)
	if err != nil {
		return err
	}
	var inFiles []outfile.Named
	for _, p := range paths {
		inFiles = append(inFiles, tracev2.InputFiles(p)...)
	}
	if err := outfile.Check(outs, inFiles); err != nil {
		return err
	}
	ins := make([]tracev2.Input, len(paths))
	for i, p := range paths {
		ins[i] = tracev2.Input{Path: p, Stdin: stdio.In}
	}
	tr, info, err := tracev2.LoadMerged(ins, tracev2.Options{Warn: func(m string) { log.Warn(m) }})
	if err != nil {
		return err
	}
	for _, w := range info.Warnings {
		log.Warn(w)
	}
	if out == "" {
		return exitcode.Usagef("--trace-output: empty; use - for stdout or a PREFIX for PREFIX.yaml + PREFIX.csv")
	}
	tw, err := tracev2.Create(out, stdio.Out, tr.Header, tr.Columns, !blisHeader)
	if err != nil && out != "-" {
		err = exitcode.WithCode(exitcode.Failure, err) // a file that cannot be written is a runtime failure
	}
	if err != nil {
		return fmt.Errorf("--trace-output: %w", err)
	}
	for i := range tr.Records {
		if err := tw.Write(&tr.Records[i]); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	if err := tw.Close(nil); err != nil {
		return fmt.Errorf("finish trace: %w", err)
	}
	log.Info("merged", "inputs", len(paths), "rows", len(tr.Records))
	return nil
}
