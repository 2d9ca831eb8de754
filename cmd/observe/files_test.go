package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output that is one of the inputs is refused before anything is sent
// or written: the played trace under --dry-run, a merged trace onto one of
// its shards. Exit 2, one line; the input is left as it was.
func TestOutputIsNoInput(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "in")
	if o := observeIn(testCtx(t), "--dry-run", "--quiet", "--workload", "chatbot", "--rate", "5", "--num-requests", "10", "-o", prefix); o.Err != nil {
		t.Fatalf("the plan: %v\n%s", o.Err, o.Stderr)
	}
	in := prefix + ".csv"
	before, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dry-run", "--trace", in, "--trace-output", prefix}, "--trace-output (header) " + prefix + ".yaml is the same file as the input " + prefix + ".yaml"},
		{[]string{"--merge", in, "-o", prefix}, "--trace-output (header) " + prefix + ".yaml is the same file as the input"},
		{[]string{"--dry-run", "--trace", in, "--trace-output", dir + "/"}, "names a directory"},
	} {
		o := observeIn(testCtx(t), append([]string{"--quiet"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(o.Stderr), "\n")
		if o.Code != 2 || o.Stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line with %q", tc.args, o.Code, o.Stderr, tc.want)
		}
		if after, _ := os.ReadFile(in); string(after) != string(before) {
			t.Fatalf("%v: the input changed", tc.args)
		}
	}
}
