package calibrate

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/report"
)

// output is one rendering of the report and where it goes.
type output struct {
	flag   string // what the user asked with, for messages
	path   string // "-" = stdout
	render func(*report.Report, io.Writer) error
	file   *outfile.File // nil for stdout
}

// plan is every output of one run. Files are written to hidden temporary
// siblings and renamed into place only when every rendering has succeeded,
// so a failed run never leaves a report that looks complete; stdout gets its
// bytes last, in one write.
type plan struct {
	outs   []*output
	stdout io.Writer
}

func renderer(format string) func(*report.Report, io.Writer) error {
	switch format {
	case "text":
		return (*report.Report).WriteText
	case "json":
		return (*report.Report).WriteJSON
	case "markdown":
		return (*report.Report).WriteMarkdown
	case "html":
		return (*report.Report).WriteHTML
	}
	return nil
}

// OutputArgs are the outputs of a grade as the command line asks for them.
type OutputArgs struct {
	Format    string // what stdout carries: text, json or markdown
	FormatSet bool   // --format was given
	Report    string // --report: the JSON report file ("-" = stdout)
	Markdown  string // --markdown
	HTML      string // --html
}

// planOutputs checks the outputs: at most one on stdout, no file named twice.
func planOutputs(a OutputArgs) (*plan, error) {
	format := a.Format
	if format != "text" && format != "json" && format != "markdown" {
		return nil, exitcode.Usagef("--format %q: want text, json or markdown", format)
	}
	p := &plan{}
	var onStdout []string
	for _, f := range []struct{ flag, kind, path string }{{"report", "json", a.Report}, {"markdown", "markdown", a.Markdown}, {"html", "html", a.HTML}} {
		path := f.path
		if path == "" {
			continue
		}
		if path == "-" {
			onStdout = append(onStdout, "--"+f.flag+" -")
		}
		p.outs = append(p.outs, &output{flag: "--" + f.flag, path: path, render: renderer(f.kind)})
	}
	switch {
	case len(onStdout) == 0:
		p.outs = append([]*output{{flag: "--format", path: "-", render: renderer(format)}}, p.outs...)
	case a.FormatSet:
		onStdout = append([]string{"--format " + format}, onStdout...)
	}
	if len(onStdout) > 1 {
		return nil, exitcode.Usagef("only one output can go to stdout, but %s all ask for it", joinAnd(onStdout))
	}
	seen := map[string]string{}
	for _, o := range p.outs {
		if o.path == "-" {
			continue
		}
		abs, err := filepath.Abs(o.path)
		if err != nil {
			abs = o.path
		}
		if other, ok := seen[abs]; ok {
			return nil, exitcode.Usagef("%s and %s both write %s", other, o.flag, o.path)
		}
		seen[abs] = o.flag
	}
	return p, nil
}

// check refuses, before any input is read, an output that cannot be
// written or would replace an input (outfile.Check).
func (p *plan) check(srcs sources) error {
	var outs []outfile.Named
	for _, o := range p.outs {
		outs = append(outs, outfile.Named{What: o.flag, Path: o.path})
	}
	ins := append(srcs.real.Files(), outfile.Named{What: "the simulated results", Path: srcs.sim},
		outfile.Named{What: "--itl-data", Path: srcs.itl}, outfile.Named{What: "--sim-metrics", Path: srcs.simMetrics})
	return outfile.Check(outs, ins)
}

// open creates the temporary files before any input is read, so an
// unwritable destination fails fast.
func (p *plan) open(stdout io.Writer) error {
	p.stdout = stdout
	for _, o := range p.outs {
		if o.path == "-" {
			continue
		}
		f, err := outfile.Create(o.path)
		if err != nil {
			p.abort() // the files opened before this one
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		o.file = f
	}
	return nil
}

// write renders every output; files are committed only if all succeed.
func (p *plan) write(r *report.Report) error {
	var std bytes.Buffer
	for _, o := range p.outs {
		if o.file == nil {
			if err := o.render(r, &std); err != nil {
				return fmt.Errorf("render %s: %w", o.flag, err)
			}
			continue
		}
		bw := bufio.NewWriterSize(o.file, 256<<10)
		err := o.render(r, bw)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", o.path, err)
		}
	}
	for _, o := range p.outs {
		if o.file == nil {
			continue
		}
		err := o.file.Commit()
		o.file = nil
		if err != nil {
			return err
		}
	}
	if std.Len() > 0 {
		if _, err := p.stdout.Write(std.Bytes()); err != nil {
			return fmt.Errorf("write stdout: %w", err)
		}
	}
	return nil
}

// abort removes every uncommitted file; it is safe after write.
func (p *plan) abort() {
	for _, o := range p.outs {
		if o.file != nil {
			o.file.Abort()
			o.file = nil
		}
	}
}
