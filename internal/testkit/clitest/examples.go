package clitest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
)

// Binaries are the names of the four commands, which --help examples call.
var binaries = []string{"observe", "replay", "calibrate", "run"}

// Examples are the command lines of cmd's --help examples that call cmd
// itself (ExamplesOf).
func Examples(cmd cli.Command) [][]string { return ExamplesOf(cmd, cmd.Name) }

// ExamplesOf are the command lines of cmd's --help examples (its
// description's and its subcommands') that call the binary named, each as
// its words: continuation lines joined, pipelines split, environment
// assignments and the GNU parallel prefix dropped, quotes removed, the
// binary's name first.
func ExamplesOf(cmd cli.Command, binary string) [][]string {
	var out [][]string
	for _, c := range append([]cli.Command{cmd}, cmd.Subcommands...) {
		for _, line := range exampleLines(c.Description) {
			for _, seg := range splitOutsideQuotes(line, '|') {
				words := shellWords(seg)
				for len(words) > 0 && (strings.Contains(words[0], "=") || words[0] == "parallel") {
					words = words[1:]
				}
				if i := indexOf(words, ":::"); i >= 0 {
					words = words[:i]
				}
				if len(words) > 0 && words[0] == binary {
					out = append(out, words)
				}
			}
		}
	}
	return out
}

// CheckExamples parses every example command line of cmd's --help with
// cmd's own flag parser, each action replaced by one that does nothing: an
// unknown flag, a value of the wrong type, a subcommand that does not
// exist fails tb. It returns how many lines it checked.
func CheckExamples(tb testing.TB, cmd cli.Command) int {
	tb.Helper()
	dry := dryRun(cmd)
	n := 0
	for _, words := range Examples(cmd) {
		n++
		var errb strings.Builder
		err := cli.Run(context.Background(), dry, words, cli.IO{In: strings.NewReader(""), Out: io.Discard, Err: &errb})
		if err != nil {
			tb.Errorf("%s --help example does not parse: %s\n  %v", cmd.Name, strings.Join(words, " "), err)
		}
	}
	if n == 0 {
		tb.Errorf("%s --help has no example that calls it", cmd.Name)
	}
	return n
}

// dryRun is cmd with every action (its subcommands' too) replaced by one
// that does nothing: the flags are parsed, nothing runs.
func dryRun(cmd cli.Command) cli.Command {
	cmd.Action = func(context.Context, *ucli.Context, cli.IO, *slog.Logger) error { return nil }
	subs := make([]cli.Command, len(cmd.Subcommands))
	for i, s := range cmd.Subcommands {
		subs[i] = dryRun(s)
	}
	cmd.Subcommands = subs
	return cmd
}

// exampleLines are the indented lines of a help text that start with a
// binary's name, with continuation lines ending in a backslash joined.
func exampleLines(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], " ") { // prose; examples are indented
			continue
		}
		l := strings.TrimSpace(lines[i])
		first, _, _ := strings.Cut(l, " ")
		if indexOf(binaries, first) < 0 && first != "parallel" && !strings.Contains(first, "=") {
			continue
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		out = append(out, l)
	}
	return out
}

// splitOutsideQuotes splits s at sep where it is not quoted.
func splitOutsideQuotes(s string, sep rune) []string {
	var out []string
	var quote rune
	start := 0
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote = r
		case quote == 0 && r == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// shellWords splits a command line into words as a shell does for plain
// words and single or double quotes (no escapes, no expansions).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
