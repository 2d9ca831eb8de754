package cli

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
)

// Shell completion. Every binary prints its own script (--completion bash,
// zsh or fish), listing its flags with their other names and help, the
// values of the flags that take one of a known set, and its subcommands;
// `make install-completion` writes them where the shells look. The scripts
// are written here rather than by urfave/cli: its bash and zsh support asks
// the binary at every <TAB> and lists no flag in the script, and its fish
// generator turns long aliases into short options and refuses file names
// to flags that take a file.

// Shells lists the shells --completion writes for.
func Shells() []string { return []string{"bash", "zsh", "fish"} }

// completionFlag names --completion.
const completionFlag = "completion"

// CompletionFlag is --completion SHELL, which every binary has.
func CompletionFlag() ucli.Flag {
	return &ucli.StringFlag{Name: completionFlag, Category: flagspec.CatGeneral, Usage: "print the shell completion script (bash, zsh or fish) and exit; make install-completion installs them. It completes the binary called by a path ending in bin/NAME (bin/run, ./bin/run, ~/servesim/bin/run) or its own path, never a bare name such as run, which other programs own"}
}

// compFlag is a flag as the completion scripts see it.
type compFlag struct {
	long, short []string // names of two or more characters, and of one
	usage       string
	value       bool     // takes a value
	files       bool     // the value is a file name
	choices     []string // the value is one of these (nil: any)
}

// flagChoices are the values the completion offers for flags that take
// one of a known set, by flag name (whatever the command): the command's
// Choices, and the values of the flags every binary has.
func flagChoices(cmd Command) map[string][]string {
	out := map[string][]string{
		"log-level":  {"debug", "info", "warn", "error"},
		"completion": Shells(),
	}
	for name, values := range cmd.Choices {
		out[name] = values
	}
	return out
}

// JoinChoices joins the completion choices of several owners into one
// map for Command.Choices.
func JoinChoices(owners ...map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, m := range owners {
		for name, values := range m {
			out[name] = values
		}
	}
	return out
}

func compFlags(flags []ucli.Flag, choices map[string][]string) []compFlag {
	fileUsage := regexp.MustCompile(`file|path|PREFIX|YAML|JSON|CSV|director`) // the help of a flag that takes a file
	var out []compFlag
	for _, f := range flags {
		if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() {
			continue // hidden from --help, so from completion too
		}
		c := compFlag{}
		for _, n := range f.Names() {
			if len(n) == 1 {
				c.short = append(c.short, n)
			} else {
				c.long = append(c.long, n)
			}
		}
		if d, ok := f.(ucli.DocGenerationFlag); ok {
			c.usage, c.value = d.GetUsage(), d.TakesValue()
		}
		_, str := f.(*ucli.StringFlag)
		c.files = str && fileUsage.MatchString(c.usage)
		if len(c.long) > 0 {
			c.choices = choices[c.long[0]]
		}
		if cf, ok := f.(*ChoiceFlag); ok && cf.Values != nil {
			c.choices = cf.Values
		}
		out = append(out, c)
	}
	return out
}

// compCommand is a (sub)command as the scripts see it: its words after the
// binary's name ("" for the binary itself, "fit" for `calibrate fit`).
type compCommand struct {
	sub   string
	usage string
	flags []compFlag
}

func compCommands(cmd Command) []compCommand {
	choices := flagChoices(cmd)
	out := []compCommand{{usage: cmd.Usage, flags: compFlags(cmd.AllFlags(), choices)}}
	for _, s := range cmd.Subcommands {
		word := s.Name[strings.LastIndex(s.Name, " ")+1:] // "calibrate fit" -> "fit"
		out = append(out, compCommand{sub: word, usage: s.Usage, flags: compFlags(s.AllFlags(), choices)})
	}
	return out
}

// WriteCompletion writes the completion script of the binary prog, whose
// command is cmd, for shell. The script completes prog only where it is
// called by a path ending in bin/PROG (bin/run, ./bin/run, ~/servesim/bin/run;
// bash: those two and the paths given, the binary's own), never a bare
// `run`: the four names are common words another program may own.
func WriteCompletion(w io.Writer, shell, prog string, cmd Command, paths ...string) error {
	cmds := compCommands(cmd)
	var s string
	switch shell {
	case "bash":
		s = bashScript(prog, cmds, paths)
	case "zsh":
		s = zshScript(prog, cmds)
	case "fish":
		s = fishScript(prog, cmds)
	default:
		return exitcode.Usagef("--completion %q: want bash, zsh or fish", shell)
	}
	_, err := io.WriteString(w, s)
	return err
}

// ident makes prog usable in a shell function name.
func ident(prog string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, prog)
}

func completionHeader(shell, prog string) string {
	return fmt.Sprintf("# %s completion for %s (servesim %s), written by `%s --completion %s`.\n", shell, prog, Version, prog, shell)
}

// typed returns the names of f as typed: --long and -s.
func (f compFlag) typed() []string {
	var out []string
	for _, n := range f.long {
		out = append(out, "--"+n)
	}
	for _, n := range f.short {
		out = append(out, "-"+n)
	}
	return out
}

func subNames(cmds []compCommand) []string {
	var out []string
	for _, c := range cmds[1:] {
		out = append(out, c.sub)
	}
	return out
}

func bashScript(prog string, cmds []compCommand, paths []string) string {
	fn := "_servesim_" + ident(prog)
	var b strings.Builder
	b.WriteString(completionHeader("bash", prog))
	for _, c := range cmds {
		name := fn
		if c.sub != "" {
			name += "_" + ident(c.sub)
		}
		var all, files, values []string
		fmt.Fprintf(&b, "%s() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n\tcase $prev in\n", name)
		for _, f := range c.flags {
			all = append(all, f.typed()...)
			switch {
			case f.choices != nil:
				fmt.Fprintf(&b, "\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", strings.Join(f.typed(), "|"), strings.Join(f.choices, " "))
			case f.files:
				files = append(files, f.typed()...)
			case f.value:
				values = append(values, f.typed()...)
			}
		}
		if len(files) > 0 {
			fmt.Fprintf(&b, "\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", strings.Join(files, "|"))
		}
		if len(values) > 0 {
			fmt.Fprintf(&b, "\t%s) COMPREPLY=(); return ;;\n", strings.Join(values, "|"))
		}
		b.WriteString("\tesac\n\tif [[ $cur == -* ]]; then\n")
		fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(all, " "))
		b.WriteString("\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n")
		if c.sub == "" && len(cmds) > 1 {
			fmt.Fprintf(&b, "\t\t(( COMP_CWORD == 1 )) && COMPREPLY+=($(compgen -W %q -- \"$cur\"))\n", strings.Join(subNames(cmds), " "))
		}
		b.WriteString("\tfi\n}\n")
	}
	if len(cmds) > 1 {
		fmt.Fprintf(&b, "%s_dispatch() {\n", fn)
		for _, c := range cmds[1:] {
			fmt.Fprintf(&b, "\tif (( COMP_CWORD > 1 )) && [[ ${COMP_WORDS[1]} == %s ]]; then %s_%s; return; fi\n", c.sub, fn, ident(c.sub))
		}
		fmt.Fprintf(&b, "\t%s\n}\n", fn)
		fn += "_dispatch"
	}
	words := []string{"bin/" + prog, "./bin/" + prog}
	for _, p := range paths {
		if !slices.Contains(words, p) && !strings.ContainsAny(p, " \t\n'\"$`\\") {
			words = append(words, p)
		}
	}
	fmt.Fprintf(&b, "complete -o filenames -o bashdefault -F %s %s\n", fn, strings.Join(words, " "))
	return b.String()
}

// zshQuote puts s in single quotes for zsh.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// zshText escapes s for an _arguments explanation ([...]).
func zshText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

func zshScript(prog string, cmds []compCommand) string {
	fn := "_servesim_" + ident(prog)
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef -p '*bin/%s'\n%s", prog, completionHeader("zsh", prog))
	for _, c := range cmds {
		name := fn + "_main"
		if c.sub != "" {
			name = fn + "_" + ident(c.sub)
		}
		fmt.Fprintf(&b, "%s() {\n\t_arguments -s -S \\\n", name)
		for _, f := range c.flags {
			names := f.typed()
			excl := ""
			if len(names) > 1 {
				excl = zshQuote("(" + strings.Join(names, " ") + ")")
			}
			spec := "[" + zshText(f.usage) + "]"
			if f.value {
				switch {
				case f.choices != nil:
					spec += ":" + f.long[0] + ":(" + strings.Join(f.choices, " ") + ")"
				case f.files:
					spec += ":" + f.long[0] + ":_files"
				default:
					spec += ":" + f.long[0] + ": "
				}
			}
			for i, n := range names {
				if f.value && strings.HasPrefix(n, "--") {
					names[i] = n + "="
				}
			}
			opts := names[0]
			if len(names) > 1 {
				opts = "{" + strings.Join(names, ",") + "}"
			}
			fmt.Fprintf(&b, "\t\t%s%s%s \\\n", excl, opts, zshQuote(spec))
		}
		if c.sub == "" && len(cmds) > 1 {
			fmt.Fprintf(&b, "\t\t%s \\\n", zshQuote("1: :->first"))
		}
		fmt.Fprintf(&b, "\t\t%s", zshQuote("*:file:_files"))
		if c.sub == "" && len(cmds) > 1 {
			fmt.Fprintf(&b, " && return 0\n\t[[ $state == first ]] && _alternative %s %s\n}\n",
				zshQuote("subcommands:subcommand:("+strings.Join(subNames(cmds), " ")+")"), zshQuote("files:file:_files"))
		} else {
			b.WriteString("\n}\n")
		}
	}
	fmt.Fprintf(&b, "%s() {\n", fn)
	for _, c := range cmds[1:] {
		fmt.Fprintf(&b, "\tif (( CURRENT > 2 )) && [[ ${words[2]} == %s ]]; then\n\t\tshift words\n\t\t(( CURRENT-- ))\n\t\t%s_%s\n\t\treturn\n\tfi\n", c.sub, fn, ident(c.sub))
	}
	fmt.Fprintf(&b, "\t%s_main\n}\n", fn)
	// Autoloaded from $fpath, the file is the completion function's body;
	// sourced, it registers the function.
	fmt.Fprintf(&b, "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n\t%s \"$@\"\nelse\n\tcompdef %s -p '*bin/%s'\nfi\n", fn, fn, prog)
	return b.String()
}

// fishQuote puts s in single quotes for fish.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func fishScript(prog string, cmds []compCommand) string {
	var b strings.Builder
	b.WriteString(completionHeader("fish", prog))
	target := "-p " + fishQuote("*bin/"+prog) // a path, never the bare name
	subs := strings.Join(subNames(cmds), " ")
	for _, c := range cmds {
		cond := ""
		switch {
		case c.sub != "":
			cond = " -n " + fishQuote("__fish_seen_subcommand_from "+c.sub)
		case len(cmds) > 1:
			cond = " -n " + fishQuote("not __fish_seen_subcommand_from "+subs)
			for _, s := range cmds[1:] {
				fmt.Fprintf(&b, "complete %s -n __fish_use_subcommand -a %s -d %s\n", target, s.sub, fishQuote(s.usage))
			}
		}
		for _, f := range c.flags {
			arg := ""
			switch {
			case f.choices != nil:
				arg = " -x -a " + fishQuote(strings.Join(f.choices, " "))
			case f.files:
				arg = " -r -F"
			case f.value:
				arg = " -x"
			}
			for i, n := range f.long {
				short := ""
				if i == 0 {
					for _, s := range f.short {
						short += " -s " + s
					}
				}
				fmt.Fprintf(&b, "complete %s%s%s -l %s%s -d %s\n", target, cond, short, n, arg, fishQuote(f.usage))
			}
		}
	}
	return b.String()
}
