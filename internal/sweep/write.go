package sweep

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"

	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/infile"
	"servesim/internal/outfile"
)

// Pages render a finished sweep for people: the text table with the
// answer, and the self-contained HTML page (internal/report draws both).
type Pages interface {
	Text(w io.Writer, d *Doc) error
	HTML(w io.Writer, d *Doc) error
}

// formats are the formats of a sweep's table (--format).
func formats() []string { return []string{"text", "csv", "json"} }

func checkFormat(f string) error {
	for _, ok := range formats() {
		if f == ok {
			return nil
		}
	}
	return exitcode.Usagef("--format %q: want text, csv or json", f)
}

// WriteTable writes a sweep's document as a text table with its answer
// (pages.Text), CSV (one line per row) or JSON (the document, which
// `sweep merge` reads).
func WriteTable(w io.Writer, d *Doc, format string, pages Pages) error {
	switch format {
	case "json":
		return d.WriteJSON(w)
	case "csv":
		return d.WriteCSV(w)
	case "text":
		return pages.Text(w, d)
	}
	return fmt.Errorf("sweep: unknown format %q (want text, csv or json)", format)
}

// Write writes a finished sweep document where the outputs say: the table
// on Output in Format (stdout when "-"), the page to HTML. Files appear
// only when complete. Infeasible cases are logged as warnings. It returns
// the sweep's NotMetError (exit 3) when it has an SLO that no case meets.
func Write(d *Doc, o Outputs, pages Pages, stdout io.Writer, log *slog.Logger) error {
	out, err := outfile.Open(o.Output, stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	var page *outfile.Output
	if o.HTML != "" {
		if o.HTML == "-" {
			return exitcode.Usagef("--html needs a file (stdout carries the table)")
		}
		if page, err = outfile.Open(o.HTML, nil); err != nil {
			return err
		}
		defer page.Abort()
		if err := pages.HTML(page, d); err != nil {
			return err
		}
	}
	if err := WriteTable(out, d, o.Format, pages); err != nil {
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
		if r.Status == StatusInfeasible {
			log.Warn("infeasible case", "case", r.Case, "params", ParamText(r.Params), "why", r.Reason)
		}
	}
	return d.NotMet()
}

// MergeCommand is `sweep merge`, described for any command line: its flags
// choose the outputs, its arguments are the shards' files, and pages
// renders the HTML page when one is asked for.
func MergeCommand(pages Pages) flagspec.Command {
	return flagspec.Command{Name: "merge", Usage: MergeUsage, ArgsUsage: "SHARD.json...", Description: MergeDescription, Flags: MergeFlags(),
		Run: func(v flagspec.Values, names []string, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
			o, err := OutputsFrom(v)
			if err != nil {
				return err
			}
			return MergeFiles(names, stdin, o, pages, stdout, log)
		}}
}

// MergeFiles is `sweep merge`: it reads the JSON documents of a sweep's
// shards (a name "-" is stdin) and writes what the sweep writes when it
// runs whole (Merge, then Write).
func MergeFiles(names []string, stdin io.Reader, o Outputs, pages Pages, stdout io.Writer, log *slog.Logger) error {
	inputs := make([]outfile.Named, len(names))
	for i, name := range names {
		inputs[i] = outfile.Named{What: "the shard", Path: name}
	}
	if err := outfile.Check(o.Files(), inputs); err != nil {
		return err
	}
	docs := make([]*Doc, len(names))
	for i, name := range names {
		data, err := readAll(name, stdin)
		if err != nil {
			return err
		}
		if docs[i], err = DecodeDoc(name, data); err != nil {
			return err
		}
	}
	d, err := Merge(names, docs)
	if err != nil {
		return err
	}
	return Write(d, o, pages, stdout, log)
}

// MaxDocBytes bounds a sweep's JSON document read whole (a shard to merge,
// an --overlay): about a million cases.
const MaxDocBytes = 256 << 20

// readAll reads a whole input, within MaxDocBytes; "" and "-" are stdin. A
// file that cannot be opened, or a longer one, is a usage error (exit 2).
func readAll(name string, stdin io.Reader) ([]byte, error) {
	if name == "" || name == "-" {
		return infile.Read(stdin, stdinName, MaxDocBytes)
	}
	data, err := infile.ReadFile(name, MaxDocBytes)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, exitcode.AsUsage(err)
	}
	return data, err
}

// stdinName is how errors name standard input (as cli.StdinName).
const stdinName = "<stdin>"
