package workload

import (
	"os"
	"strings"
	"testing"
)

// TestListPresets: --list-workloads prints every preset's lengths from
// the preset table, and docs/workload.md lists the same numbers.
func TestListPresets(t *testing.T) {
	var b strings.Builder
	if err := ListPresets(&b); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/workload.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Presets() {
		prompt := lengths(p.PromptMean, p.PromptStdev, p.PromptMin, p.PromptMax)
		output := lengths(p.OutputMean, p.OutputStdev, p.OutputMin, p.OutputMax)
		found := false
		for _, line := range strings.Split(b.String(), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == p.Name {
				found = strings.Contains(line, prompt) && strings.Contains(line, output)
			}
		}
		if !found {
			t.Errorf("--list-workloads lacks %s with prompt %s, output %s:\n%s", p.Name, prompt, output, b.String())
		}
		row := " | " + prompt + " | " + output + " |"
		inDoc := false
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "| `"+p.Name+"`") && strings.HasSuffix(line, row) && strings.Contains(line, " | 0 |") == (p.PrefixTokens == 0) {
				inDoc = true
			}
		}
		if !inDoc {
			t.Errorf("docs/workload.md §11 lacks the row of %s: ...%s", p.Name, row)
		}
	}
	if want := "chatbot        0              256 / 100 / 2 / 800"; !strings.Contains(b.String(), want) {
		t.Errorf("--list-workloads lacks %q:\n%s", want, b.String())
	}
}
