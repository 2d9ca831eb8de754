package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInstallCompletion: `make install-completion` writes a bash, a zsh and
// a fish script for each binary where the shells look under PREFIX, and
// each names every flag the binary's --help lists.
func TestInstallCompletion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	out, err := exec.Command("make", "-s", "-C", "../..", "install-completion", "PREFIX="+tmp, "BIN="+bin).CombinedOutput()
	if err != nil {
		t.Fatalf("make install-completion: %v\n%s", err, out)
	}
	flagLine := regexp.MustCompile(`(?m)^\s+(-[-\w, ]*?)\s+(value\s+)?\S`)
	for _, b := range []string{"observe", "replay", "calibrate", "run"} {
		help, err := exec.Command(filepath.Join(bin, b), "--help").Output()
		if err != nil {
			t.Fatalf("%s --help: %v", b, err)
		}
		_, opts, ok := strings.Cut(string(help), "OPTIONS:")
		if !ok {
			t.Fatalf("%s --help has no OPTIONS section", b)
		}
		var names []string
		for _, m := range flagLine.FindAllStringSubmatch(opts, -1) {
			for _, n := range strings.Split(m[1], ",") {
				if n = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(n), " value")); strings.HasPrefix(n, "--") {
					names = append(names, strings.TrimPrefix(n, "--"))
				}
			}
		}
		if len(names) < 10 {
			t.Fatalf("%s --help lists only %d flags: %q", b, len(names), names)
		}
		for _, s := range []struct{ path, form string }{
			{filepath.Join(tmp, "share", "bash-completion", "completions", b), "--%s"},
			{filepath.Join(tmp, "share", "zsh", "site-functions", "_"+b), "--%s"},
			{filepath.Join(tmp, "share", "fish", "vendor_completions.d", b+".fish"), "-l %s"},
		} {
			script, err := os.ReadFile(s.path)
			if err != nil {
				t.Errorf("%s: %v", b, err)
				continue
			}
			for _, n := range names {
				if n == "help" || n == "version" {
					continue // urfave/cli's own
				}
				if want := strings.ReplaceAll(s.form, "%s", n); !strings.Contains(string(script), want) {
					t.Errorf("%s does not name %s", s.path, want)
				}
			}
		}
	}
}
