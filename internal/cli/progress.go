package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress is a progress bar on stderr that exists only when stderr is a
// terminal and --quiet is off; otherwise every method is a no-op, so callers
// never branch on it. A nil *Progress is valid and silent.
//
// It holds the bar's two operations as functions rather than the bar
// itself: commands hand a Progress to the library as an interface, and a
// type stored in an interface keeps every exported method of the types it
// holds in the binary (text/template, which urfave/cli uses, reaches
// methods by name) — progressbar's HTTP server and net/http with it, 3.7 MB.
type Progress struct {
	set    func(n int64, desc string)
	finish func()
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewProgress returns a bar of max steps (-1 for unknown) described by desc.
func NewProgress(w io.Writer, quiet bool, max int64, desc string) *Progress {
	if quiet || !IsTerminal(w) {
		return nil
	}
	// progressbar writes to stdout unless told otherwise; stdout carries data.
	bar := progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100_000_000), // 100 ms
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)
	return &Progress{
		set: func(n int64, desc string) {
			if desc != "" {
				bar.Describe(desc)
			}
			_ = bar.Set64(n)
		},
		finish: func() { _ = bar.Finish() },
	}
}

// Set moves the bar to n and updates its description.
func (p *Progress) Set(n int64, desc string) {
	if p == nil {
		return
	}
	p.set(n, desc)
}

// Finish clears the bar.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.finish()
}

// StepsProgress makes a progress bar for a job counted in steps: given the
// total, it returns the setter of the steps done (the bar reads "label: N
// unit") and the finish of the bar.
func StepsProgress(w io.Writer, quiet bool, label, unit string) func(total int) (func(done, total int), func()) {
	return func(total int) (func(done, total int), func()) {
		p := NewProgress(w, quiet, int64(total), label)
		return func(done, _ int) { p.Set(int64(done), fmt.Sprintf("%s: %d %s", label, done, unit)) }, p.Finish
	}
}
