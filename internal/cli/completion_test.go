package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/exitcode"
)

// compTestCommand is a binary "tool" with a flag of each kind, choices for
// --model, and a subcommand "sub" whose flag has another name.
func compTestCommand() Command {
	return Command{Name: "tool", Usage: "test tool",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "model", Usage: "model name or config.json path"},
			&ucli.StringFlag{Name: "deployment", Usage: "deployment YAML"},
			&ucli.Float64Flag{Name: "rate", Usage: "requests per second [req/s]: it's a 'rate'"},
			&ucli.BoolFlag{Name: "streaming", Usage: "stream"},
			&ucli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output file"},
			FormatFlag("json", "stdout format", "json", "text"),
		},
		Subcommands: []Command{{Name: "tool sub", Usage: "the subcommand",
			Flags: []ucli.Flag{&ucli.IntFlag{Name: "max-num-seqs", Aliases: []string{"max-num-running-reqs"}, Usage: "batch slots"}}}},
		Choices: map[string][]string{"model": {"llama-3.1-8b-instruct", "qwen3-14b"}},
	}
}

func script(t *testing.T, shell string) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCompletion(&b, shell, "tool", compTestCommand()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCompletionSyntax: each script is valid for its shell (checked by
// the shell itself where it is installed).
func TestCompletionSyntax(t *testing.T) {
	for _, shell := range Shells() {
		t.Run(shell, func(t *testing.T) {
			s := script(t, shell)
			if !strings.Contains(s, "--max-num-running-reqs") && shell != "fish" || shell == "fish" && !strings.Contains(s, "-l max-num-running-reqs") {
				t.Errorf("the subcommand's flag aliases are missing:\n%s", s)
			}
			bin, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed: syntax not checked", shell)
			}
			path := filepath.Join(t.TempDir(), "tool."+shell)
			if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s\n%s", shell, err, out, s)
			}
		})
	}
	if err := WriteCompletion(&bytes.Buffer{}, "powershell", "tool", compTestCommand()); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("an unknown shell: %v, want a usage error", err)
	}
}

// TestBashCompletion runs the bash script's function on command lines.
func TestBashCompletion(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tool.bash")
	if err := os.WriteFile(path, []byte(script(t, "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		words []string
		want  []string
	}{
		{[]string{"tool", "--mo"}, []string{"--model"}},
		{[]string{"tool", "--model", "qwen3-1"}, []string{"qwen3-14b"}},
		{[]string{"tool", "--deployment", "dep"}, []string{"deploy.yaml"}},
		{[]string{"tool", "--rate", ""}, nil},
		{[]string{"tool", "-"}, []string{"--model", "--deployment", "--rate", "--streaming", "--output", "--format", "--quiet", "--log-level", "--log", "--completion", "-o", "-q"}},
		{[]string{"tool", "--format", ""}, []string{"json", "text"}},
		{[]string{"tool", "s"}, []string{"sub"}},
		{[]string{"tool", "sub", "--max"}, []string{"--max-num-seqs", "--max-num-running-reqs"}},
		{[]string{"tool", "--max"}, nil},
	} {
		prog := `source ` + path + `; COMP_WORDS=(` + quoteAll(tt.words) + `); COMP_CWORD=` + strconv.Itoa(len(tt.words)-1) +
			`; _servesim_tool_dispatch; printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command("bash", "-c", prog)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tt.words, err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q completes to %q, want %q", tt.words, got, want)
		}
	}
}

// TestFishCompletion asks fish (where installed) what it completes.
func TestFishCompletion(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed")
	}
	path := filepath.Join(t.TempDir(), "tool.fish")
	if err := os.WriteFile(path, []byte(script(t, "fish")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ line, want, not string }{
		{"bin/tool --mo", "--model\tmodel name or config.json path", ""},
		{"bin/tool --model qwen3-1", "qwen3-14b", ""},
		{"bin/tool sub --max-num-r", "--max-num-running-reqs\tbatch slots", ""},
		{"bin/tool --max-num", "", "--max-num-seqs"},
		{"bin/tool ", "sub\tthe subcommand", ""},
		{"bin/tool --rate ", "", "sub"},
		{"tool --mo", "", "--model"},
	} {
		out, err := exec.Command("fish", "--no-config", "-c", "source "+path+"; complete -C'"+tt.line+"'").CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tt.line, err, out)
		}
		if tt.want != "" && !strings.Contains(string(out), tt.want) {
			t.Errorf("%q completes to %q, want %q among them", tt.line, out, tt.want)
		}
		if tt.not != "" && strings.Contains(string(out), tt.not) {
			t.Errorf("%q completes to %q, which should not hold %q", tt.line, out, tt.not)
		}
	}
}

// TestCompletionClaimsNoBareName: the scripts complete the binary called
// by a path ending in bin/NAME (and, in bash, its own path), never the bare
// name, which another program may own.
func TestCompletionClaimsNoBareName(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCompletion(&b, "bash", "tool", compTestCommand(), "/opt/servesim/bin/tool"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tool.bash")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string]bool{"tool": false, "bin/tool": true, "./bin/tool": true, "/opt/servesim/bin/tool": true} {
		err := exec.Command("bash", "-c", "source "+path+"; complete -p "+word).Run()
		if got := err == nil; got != want {
			t.Errorf("bash completes %q: %v, want %v", word, got, want)
		}
	}
	for shell, want := range map[string]string{"zsh": "#compdef -p '*bin/tool'\n", "fish": "complete -p '*bin/tool' "} {
		s := script(t, shell)
		if !strings.HasPrefix(s, want) && !strings.Contains(s, "\n"+want) {
			t.Errorf("%s script lacks %q", shell, want)
		}
		if strings.Contains(s, "compdef _servesim_tool tool") || strings.Contains(s, "complete -c tool") {
			t.Errorf("%s script claims the bare name tool", shell)
		}
	}
}

func quoteAll(words []string) string {
	var q []string
	for _, w := range words {
		q = append(q, "'"+w+"'")
	}
	return strings.Join(q, " ")
}
