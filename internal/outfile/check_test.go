package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	hard := filepath.Join(dir, "hard.csv")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	inputs := []Named{{"the input", in}, {"--deployment", ""}, {"stdin", "-"}, {"--model", "qwen3-14b"}, {"a device", "/dev/null"}}
	for _, c := range []struct {
		out  []Named
		want string
	}{
		{[]Named{{"--results-path", filepath.Join(dir, "new.json")}, {"--html", "-"}, {"--x", ""}, {"--null", "/dev/null"}}, ""},
		{[]Named{{"--results-path", in}}, "--results-path " + in + " is the same file as the input " + in + ": writing it would destroy what is read; name another file"},
		{[]Named{{"-o", filepath.Join(dir, ".", "in.csv")}}, "is the same file as the input " + in},
		{[]Named{{"-o", link}}, "-o " + link + " is the same file as the input " + in},
		{[]Named{{"-o", hard}}, "-o " + hard + " is the same file as the input " + in},
		{[]Named{{"-o", dir}}, "-o " + dir + " is a directory: name a file"},
		{[]Named{{"-o", filepath.Join(dir, "no", "x.json")}}, "-o " + filepath.Join(dir, "no", "x.json") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{[]Named{{"-o", filepath.Join(dir, "a.json")}, {"--html", filepath.Join(dir, "a.json")}}, "-o and --html both write " + filepath.Join(dir, "a.json")},
	} {
		err := Check(c.out, inputs)
		got := ""
		if err != nil {
			got = err.Error()
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("%v: exit %d, want 2", c.out, exitcode.Of(err))
			}
		}
		if (c.want == "") != (got == "") || (c.want != "" && !strings.Contains(got, c.want)) {
			t.Errorf("%v: got %q, want %q", c.out, got, c.want)
		}
	}
}
