package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// input is a whole trace, read and validated before anything is written.
type input struct {
	name   string
	header *tracev2.Header
	cols   tracev2.Columns
	recs   []tracev2.Record // on the file's time origin (tracev2.md §5)
}

// loadInput reads the trace the command line names: a TraceV2 trace in any
// form, or a foreign trace with --from.
func loadInput(c *ucli.Context, stdio cli.IO, log *slog.Logger) (*input, error) {
	args, err := cli.Positional(c, 1)
	if err != nil {
		return nil, err
	}
	path := ""
	if len(args) == 1 {
		path = args[0]
	}
	hp, dp := c.String("trace-header"), c.String("trace-data")
	if from := c.String("from"); from != "" {
		if hp != "" || dp != "" {
			return nil, cli.Usagef("--from reads one file: give it as TRACE, not --trace-header/--trace-data")
		}
		if path == "" {
			return nil, cli.Usagef("--from %s: name the file to import, or - for stdin", from)
		}
		return importTrace(importer.Format(from), path, stdio.In, log)
	}
	if path == "" && hp == "" && dp == "" {
		return nil, cli.Usagef("no trace: give TRACE, - for stdin, or --trace-header and --trace-data (see --help)")
	}
	if path != "" && hp != "" && dp != "" {
		return nil, cli.Usagef("give either TRACE or --trace-header with --trace-data, not both")
	}
	warn := func(m string) { log.Warn(m) }
	tr, err := tracev2.Load(tracev2.Input{Path: path, HeaderPath: hp, DataPath: dp, Stdin: stdio.In},
		tracev2.Options{Lenient: c.Bool("lenient"), Strict: c.Bool("strict"), Warn: warn})
	if err != nil {
		return nil, err
	}
	if tr.Skipped > 0 {
		log.Warn("malformed rows skipped (--lenient)", "rows", tr.Skipped)
	}
	if len(tr.Records) == 0 {
		return nil, cli.Usagef("%s: the trace has no requests", tr.Name)
	}
	// SimResults are keyed by request_id: a duplicate would be ambiguous.
	if _, err := tr.IndexByID(); err != nil {
		return nil, err
	}
	return &input{name: tr.Name, header: tr.Header, cols: tr.Columns, recs: tr.Records}, nil
}

// importTrace reads a foreign trace through its importer. Importers write
// offsets from the trace's own start, so no normalisation is needed.
func importTrace(format importer.Format, path string, stdin io.Reader, log *slog.Logger) (*input, error) {
	if !slices.Contains(importer.Formats(), format) {
		return nil, cli.Usagef("--from %q: want one of %v", format, importer.Formats())
	}
	r, name, err := cli.OpenInput(path, stdin)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	src, err := maybeGunzip(r, name)
	if err != nil {
		return nil, err
	}
	imp, err := importer.Open(format, name, src, importer.Options{})
	if err != nil {
		return nil, err
	}
	in := &input{name: name, header: imp.Header()}
	for {
		rec, err := imp.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec.HashIDs) > 0 {
			in.cols.HashIDs = true
		}
		in.recs = append(in.recs, rec)
	}
	for _, w := range imp.Warnings() {
		log.Warn(w)
	}
	if len(in.recs) == 0 {
		return nil, cli.Usagef("%s: the trace has no requests", name)
	}
	return in, nil
}

// maybeGunzip decompresses gzip input (detected by its magic bytes). A
// plain file is passed on as it is, so importers that read at offsets
// (vllm-bench) can.
func maybeGunzip(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		if f, ok := r.(*os.File); ok {
			// Nothing was consumed from the file itself beyond the buffer:
			// rewind it so the importer gets the *os.File.
			if _, err := f.Seek(0, io.SeekStart); err == nil {
				return f, nil
			}
		}
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, cli.Usagef("%s: gzip: %v", name, err)
	}
	return zr, nil
}

// describe is a one-line account of the input for the log.
func (in *input) describe() string {
	mode := in.header.Mode
	if mode == "" {
		mode = "unknown mode"
	}
	return fmt.Sprintf("%s: %d rows (%s)", in.name, len(in.recs), mode)
}
