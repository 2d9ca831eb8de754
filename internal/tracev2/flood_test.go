package tracev2

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestWarningsAreCapped: a column row of 100,000 unknown names, or a
// header of 100,000 unknown keys, gives a bounded number of warnings, each
// name quoted so that none can forge a line.
func TestWarningsAreCapped(t *testing.T) {
	cols := []string{cols27, "\"evil\rlevel=ERROR msg=spoofed\""}
	for i := range 100_000 {
		cols = append(cols, "x"+strings.Repeat("y", i%7))
	}
	var warns []string
	r, err := NewReader(strings.NewReader(strings.Join(cols, ",")+"\n"+goodRow+strings.Repeat(",", 100_001)+"\n"), "t.csv", Options{Warn: collect(&warns)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll(r); err != nil {
		t.Fatal(err)
	}
	if len(warns) != maxWarnings+1 || warns[len(warns)-1] != "t.csv:1: 99981 more unknown columns ignored" {
		t.Errorf("%d warnings, the last %q; want %d, the last the count", len(warns), warns[len(warns)-1], maxWarnings+1)
	}
	if want := `t.csv:1:28: column "evil\rlevel=ERROR msg=spoofed": unknown column, ignored`; warns[0] != want {
		t.Errorf("first warning %q, want %q", warns[0], want)
	}

	var hdr strings.Builder
	hdr.WriteString("trace_version: 3\ntime_unit: us\nmode: real\n\"evil\\nlevel=ERROR\": 1\n")
	for i := range 100_000 {
		hdr.WriteString("k" + strconv.Itoa(i) + ": 1\n")
	}
	warns = nil
	if _, err := ReadHeader(strings.NewReader(hdr.String()), "h.yaml", Options{Warn: collect(&warns)}); err != nil {
		t.Fatal(err)
	}
	if len(warns) != maxWarnings+1 || warns[maxWarnings] != "h.yaml: 99981 more unknown keys ignored" {
		t.Errorf("%d warnings for the unknown header keys, the last %q; want %d, the last the count", len(warns), warns[len(warns)-1], maxWarnings+1)
	}
	if len(warns) == 0 || warns[0] != `h.yaml:4:1: key "evil\nlevel=ERROR": unknown key, ignored` {
		t.Errorf("first warning %q", warns[0])
	}
}

// endless is an input without a line end, ever (/dev/zero).
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestEndlessLineEnds: data without a line end (a device such as
// /dev/zero named as the trace) is refused after a bounded read, naming
// where, instead of being read forever to find the line's end.
func TestEndlessLineEnds(t *testing.T) {
	for _, data := range []io.Reader{endless{}, io.MultiReader(strings.NewReader(cols27+"\n"), endless{})} {
		r, err := NewReader(data, "zero.csv", Options{Lenient: true})
		if err == nil {
			_, err = ReadAll(r)
		}
		if err == nil || !strings.Contains(err.Error(), "zero.csv:") || !strings.Contains(err.Error(), "longer than") {
			t.Errorf("an endless line: %v; want a located error", err)
		}
	}
}
