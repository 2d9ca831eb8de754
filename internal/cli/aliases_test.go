package cli

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/exitcode"
)

// parsed is what a command saw: the deployment and a few plain flags.
type parsed struct {
	dep         deploy.Config
	log, metric string
	ran         bool
}

// parse runs a command with the deployment flags, --metrics-out and the
// common flags on args.
func parse(t *testing.T, args ...string) (parsed, string, error) {
	t.Helper()
	var p parsed
	cmd := Command{Name: "t", Usage: "test",
		Flags: append(SpecFlags(append(deploy.Flags(), deploy.ListFlags()...)), &ucli.StringFlag{Name: "metrics-out"}),
		Action: func(_ context.Context, c *ucli.Context, _ IO, _ *slog.Logger) error {
			var err error
			p.dep, err = deploy.FromFlags(SpecValues(c, deploy.Flags()))
			p.log, p.metric, p.ran = c.String("log-level"), c.String("metrics-out"), true
			return err
		}}
	var out, errb bytes.Buffer
	err := Run(context.Background(), cmd, append([]string{"t"}, args...), IO{Out: &out, Err: &errb})
	return p, out.String(), err
}

// allAliases are the other names of the test command's flags: FlagAliases,
// and those the deployment's flag descriptions bring.
func allAliases() map[string][]string {
	out := FlagAliases()
	for _, f := range deploy.Flags() {
		if len(f.Aliases) > 0 {
			out[f.Name] = f.Aliases
		}
	}
	return out
}

// TestFlagAliases is a table test per alias: each other name sets what the
// flag's own name sets, and every alias of the table has a case.
func TestFlagAliases(t *testing.T) {
	values := map[string]string{
		"gpu": "A100-80", "hardware-file": "hw.json", "tensor-parallel": "2", "pipeline-parallel": "2", "data-parallel": "2",
		"max-num-seqs": "64", "max-num-batched-tokens": "4096", "block-size": "32",
		"log-level": "warn", "metrics-out": "m.json",
	}
	for flag, aliases := range allAliases() {
		v, ok := values[flag]
		if !ok {
			t.Errorf("--%s has aliases %v but no case here", flag, aliases)
			continue
		}
		want, _, err := parse(t, "--"+flag, v)
		if err != nil {
			t.Fatalf("--%s %s: %v", flag, v, err)
		}
		if reflect.DeepEqual(want.dep, deploy.Default()) && want.log == "info" && want.metric == "" {
			t.Fatalf("--%s %s changed nothing", flag, v)
		}
		for _, a := range aliases {
			t.Run(a, func(t *testing.T) {
				got, _, err := parse(t, "--"+a, v)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("--%s %s gives %+v, --%s %s gives %+v", a, v, got, flag, v, want)
				}
			})
		}
	}
	for _, want := range []string{"tensor-parallel-size", "pipeline-parallel-size", "hardware", "hardware-config",
		"max-num-running-reqs", "max-num-scheduled-tokens", "block-size-in-tokens", "metrics-path", "log"} {
		found := false
		for _, as := range allAliases() {
			found = found || strings.Contains(" "+strings.Join(as, " ")+" ", " "+want+" ")
		}
		if !found {
			t.Errorf("--%s, a name users type, is no alias", want)
		}
	}
}

// TestSwitchFlags: vLLM's --enable-X / --no-enable-X pairs.
func TestSwitchFlags(t *testing.T) {
	tests := []struct {
		args            []string
		prefix, chunked bool
		wantErr         string
	}{
		{nil, true, true, ""},
		{[]string{"--no-enable-prefix-caching"}, false, true, ""},
		{[]string{"--enable-prefix-caching=false"}, false, true, ""},
		{[]string{"--no-enable-chunked-prefill"}, true, false, ""},
		{[]string{"--enable-chunked-prefill=false", "--enable-prefix-caching"}, true, false, ""},
		{[]string{"--enable-prefix-caching", "--no-enable-prefix-caching"}, true, true, "contradict"},
	}
	for _, tt := range tests {
		got, _, err := parse(t, tt.args...)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || exitcode.Of(err) != exitcode.Usage {
				t.Errorf("%q: %v, want a usage error containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.dep.EnablePrefixCaching != tt.prefix || got.dep.EnableChunkedPrefill != tt.chunked {
			t.Errorf("%q: prefix caching %v chunked prefill %v (%v), want %v %v", tt.args,
				got.dep.EnablePrefixCaching, got.dep.EnableChunkedPrefill, err, tt.prefix, tt.chunked)
		}
	}
}

// TestDidYouMean: a mistyped flag is a usage error naming the nearest flag,
// and a word like no flag gets no guess.
func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct{ typed, want string }{
		{"--max-num-seq", "did you mean --max-num-seqs?"},
		{"--hardwre", "did you mean --hardware?"},
		{"--tensor-parallel-siz", "did you mean --tensor-parallel-size?"},
		{"--enable-prefix-cache", "did you mean --enable-prefix-caching?"},
		{"--quite", "did you mean --quiet?"},
		{"--xyzzy", "unknown flag --xyzzy (see --help)"},
	} {
		p, _, err := parse(t, tt.typed, "1")
		if p.ran || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v (exit %d), want exit 2 and %q", tt.typed, err, exitcode.Of(err), tt.want)
		}
	}
}

// TestListings: --list-models and --list-gpus print what each entry
// knows and nothing else runs.
func TestListings(t *testing.T) {
	p, out, err := parse(t, "--list-models")
	if err != nil || p.ran {
		t.Fatalf("--list-models: %v (the command ran: %v)", err, p.ran)
	}
	for _, m := range latency.KnownModels() {
		if !strings.Contains(out, m) {
			t.Errorf("--list-models does not list %s", m)
		}
	}
	// qwen3-14b: 40 layers, hidden 5120, 8 KV heads, 2·40·8·128·2 B = 160 KiB
	// per token, fits one H100.
	if !regexp.MustCompile(`(?m)^qwen3-14b\s+40\s+5120\s+8\s+160\.0\s+[0-9.]+\s+-\s+1\s*$`).MatchString(out) {
		t.Errorf("--list-models row of qwen3-14b is not 40 layers, 160 KiB/token, TP 1:\n%s", out)
	}
	// llama-3.1-70b needs two 80 GiB GPUs; on an L40S (48 GiB) four.
	if !regexp.MustCompile(`(?m)^llama-3\.1-70b-instruct\s.*\s2\s*$`).MatchString(out) {
		t.Errorf("llama-3.1-70b-instruct should need TP 2 on an H100:\n%s", out)
	}
	_, out, err = parse(t, "--list-models", "--gpu", "L40S")
	if err != nil || !regexp.MustCompile(`(?m)^llama-3\.1-70b-instruct\s.*\s4\s*$`).MatchString(out) || !strings.Contains(out, "TP on L40S") {
		t.Errorf("--list-models --gpu L40S (%v):\n%s", err, out)
	}
	_, out, err = parse(t, "--list-gpus")
	if err != nil || !regexp.MustCompile(`(?m)^H100\s+989\.5\s+1979\s+80\s+3\.35\s+NVLink 450 GB/s\s*$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^L40S\s.*\sPCIe 32 GB/s\s*$`).MatchString(out) {
		t.Errorf("--list-gpus (%v) lacks H100's figures or L40S's link:\n%s", err, out)
	}
	if _, _, err := parse(t, "--list-models", "--gpu", "TPU9"); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("--list-models with an unknown GPU: %v, want exit 2", err)
	}
}
