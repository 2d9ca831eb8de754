package main

import (
	"fmt"
	"log/slog"
	"slices"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/tracev2"
)

// mergeTraces is observe --merge TRACE...: the per-worker traces of a
// sharded run merged by time onto the earliest worker's start
// (tracev2.Merge), written to --trace-output. Every other flag is refused:
// nothing is sent.
func mergeTraces(c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	allowed := []string{"merge", "trace-output", "blis-compatible-header", "trace-ext", "quiet", "log-level"}
	for _, f := range c.Command.Flags {
		if n := f.Names()[0]; c.IsSet(n) && !slices.Contains(allowed, n) {
			return cli.Usagef("--merge only reads traces and writes one: --%s does not apply", n)
		}
	}
	paths := c.Args().Slice()
	if len(paths) == 0 {
		return cli.Usagef("--merge: name the traces to merge (the per-worker traces of a --shard run)")
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
	out := c.String("trace-output")
	if out == "" {
		return cli.Usagef("--trace-output: empty; use - for stdout or a PREFIX for PREFIX.yaml + PREFIX.csv")
	}
	tw, err := cli.CreateTrace(out, stdio, tr.Header, tr.Columns, !c.Bool("blis-compatible-header"))
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
