package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// asTraceV2 imports a foreign trace and writes it as a two-file TraceV2
// trace, whose replay reads it the usual way (sorted first, then read
// again); it returns the data file's path.
func asTraceV2(t *testing.T, format importer.Format, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := importer.Open(format, path, f, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []tracev2.Record
	var cols tracev2.Columns
	for rec, err := range importer.All(imp) {
		if err != nil {
			t.Fatal(err)
		}
		cols.HashIDs = cols.HashIDs || len(rec.HashIDs) > 0
		recs = append(recs, rec)
	}
	hp, dp, _ := tracev2.PrefixPaths(filepath.Join(t.TempDir(), "v2"))
	if err := tracev2.WriteFiles(hp, dp, imp.Header(), cols, true, recs); err != nil {
		t.Fatal(err)
	}
	return dp
}

// streamedRuns counts the simulations of a replay's debug log: the ones
// that read a streamed import and the ones that read a whole trace.
func streamedRuns(stderr string) (streamed, whole int) {
	return strings.Count(stderr, "streamed=true"), strings.Count(stderr, "streamed=false")
}

// replayBoth replays a foreign trace (streamed when it can be) and the
// same rows as a TraceV2 trace, with the same flags, and fails unless
// stdout and every file written are the same bytes; it returns the
// import's debug log.
func replayBoth(t *testing.T, format importer.Format, path string, stdin bool, flags ...string) string {
	t.Helper()
	v2 := asTraceV2(t, format, path)
	var outs [2]string
	var files [2]map[string]string
	var logs string
	for i, trace := range []string{path, v2} {
		dir := t.TempDir()
		args := []string{trace, "--from", string(format), "--log-level", "debug"}
		if i == 1 {
			args = []string{trace, "--log-level", "debug"}
		}
		var in *bytes.Reader
		if stdin && i == 0 {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in, args[0] = bytes.NewReader(b), "-"
		}
		for _, f := range flags {
			args = append(args, strings.ReplaceAll(f, "DIR", dir))
		}
		var r result
		if in != nil {
			r = replayIn(in, args...)
		} else {
			r = replayIn(nil, args...)
		}
		if r.err != nil {
			t.Fatalf("replay %v: %v\n%s", args, r.err, r.stderr)
		}
		outs[i], files[i] = r.stdout, map[string]string{}
		for _, name := range dirEntries(t, dir) {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files[i][name] = string(b)
		}
		if i == 0 {
			logs = r.stderr
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("%v: stdout differs (%d and %d bytes)", flags, len(outs[0]), len(outs[1]))
	}
	if len(files[0]) != len(files[1]) {
		t.Errorf("%v: files %d and %d", flags, len(files[0]), len(files[1]))
	}
	for name, b := range files[0] {
		if files[1][name] != b {
			t.Errorf("%v: %s differs", flags, name)
		}
	}
	return logs
}

// TestStreamedImportIsTheReplay: an import in injection order is replayed
// as it is read (once, beside the simulation), with the bytes of the
// usual replay of the same rows on every output: SimResults in both
// formats, the summary, the text table, a trace on stdout, a horizon that
// stops the simulation before the trace ends, --skip-failed, injection at
// arrival, and a capped client.
func TestStreamedImportIsTheReplay(t *testing.T) {
	traces := []struct {
		format importer.Format
		rel    string
	}{
		{importer.FormatAzure, "azure-llm-2023/AzureLLMInferenceTrace_conv_10min.csv"},
		{importer.FormatMooncake, "mooncake/conversation_trace_5min.jsonl"},
	}
	flagSets := [][]string{
		{"--metrics-out", "DIR/m.json"},
		{"--format", "jsonl", "--horizon", "2m", "--results-path", "DIR/r.jsonl"},
		{"--format", "text", "--skip-failed", "--inject-at", "arrival"},
		{"--trace-output", "-", "--results-path", "DIR/r.json", "--client-max-concurrency", "6"},
	}
	for _, tr := range traces {
		path := shareddata.Path(t, tr.rel)
		for i, flags := range flagSets {
			logs := replayBoth(t, tr.format, path, i == 1, flags...)
			if s, w := streamedRuns(logs); s != 1 || w != 0 {
				t.Errorf("%s %v: %d streamed and %d whole simulations, want one streamed", tr.rel, flags, s, w)
			}
		}
	}
}

// TestStreamedImportFallsBack: an import that breaks what streaming
// assumes — a row out of time order (before or after the horizon), a
// hash-id column that only starts after the first row — is replayed again
// the usual way, from the file or from the copy of stdin, and gives the
// same bytes as the usual replay alone; nothing of the abandoned attempt
// reaches stdout.
func TestStreamedImportFallsBack(t *testing.T) {
	dir := t.TempDir()
	azure := "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	for i := 0; i < 400; i++ {
		azure += "2023-11-16 18:" + pad(15+i/60) + ":" + pad(i%60) + ".000," + itoa(100+i%700) + "," + itoa(20+i%90) + "\n"
	}
	lines := strings.SplitAfter(azure, "\n")
	early := strings.Join(append(append(append([]string{}, lines[:300]...), lines[301], lines[300]), lines[302:]...), "")
	late := append([]string{}, lines...)
	late[380], late[390] = late[390], late[380]
	mooncake := `{"timestamp": 0, "input_length": 700, "output_length": 20, "hash_ids": []}` + "\n"
	for i := 1; i < 60; i++ {
		mooncake += `{"timestamp": ` + itoa(i*900) + `, "input_length": 1100, "output_length": 30, "hash_ids": [0, ` + itoa(i%5+1) + "]}\n"
	}
	cases := []struct {
		name, format, content string
		flags                 []string
	}{
		{"out of order", "azure", early, nil},
		{"out of order after the horizon", "azure", strings.Join(late, ""), []string{"--horizon", "5m"}},
		{"hash ids after the first row", "mooncake", mooncake, []string{"--format", "jsonl"}},
	}
	for _, tc := range cases {
		path := writeFile(t, filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")), tc.content)
		for _, stdin := range []bool{false, true} {
			logs := replayBoth(t, importer.Format(tc.format), path, stdin, tc.flags...)
			if s, w := streamedRuns(logs); s != 1 || w != 1 {
				t.Errorf("%s (stdin %v): %d streamed and %d whole simulations, want one of each", tc.name, stdin, s, w)
			}
		}
	}
}

// TestStreamedImportBadRow: a bad row found while the simulation runs is
// the error importing first gives (exit 2), with nothing on stdout and no
// output file left behind.
func TestStreamedImportBadRow(t *testing.T) {
	dir := t.TempDir()
	content := "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	for i := 0; i < 3000; i++ {
		n := itoa(100 + i%700)
		if i == 2900 {
			n = "lots"
		}
		content += "2023-11-16 18:15:" + pad(i/100) + "." + pad(i%100) + "0," + n + ",30\n"
	}
	path := writeFile(t, filepath.Join(dir, "bad.csv"), content)
	want := path + `:2902:2: field ContextTokens: "lots" is not an integer`
	for _, flags := range [][]string{nil, {"--format", "jsonl"}, {"--rate", "3"}} {
		out := t.TempDir()
		args := append([]string{path, "--log-level", "debug", "--metrics-out", filepath.Join(out, "m.json"),
			"--timeline", filepath.Join(out, "t.json")}, flags...)
		r := replayIn(nil, args...)
		if code := exitcode.Of(r.err); code != 2 || r.err.Error() != want {
			t.Errorf("%v: exit %d, error %v; want 2 and %q", flags, code, r.err, want)
		}
		if r.stdout != "" {
			t.Errorf("%v: %d bytes on stdout, want none", flags, len(r.stdout))
		}
		if left := dirEntries(t, out); len(left) != 0 {
			t.Errorf("%v: files left %v", flags, left)
		}
		// Without --rate the simulation ran beside the import.
		if s, _ := streamedRuns(r.stderr); (s == 1) != (flags == nil || flags[0] != "--rate") {
			t.Errorf("%v: %d streamed simulations", flags, s)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func pad(i int) string { return fmt.Sprintf("%02d", i) }

// TestStdinCopyRemovedOnBadImport: the copy of stdin kept to replay it
// again is removed when the import cannot even start (a bad column row or
// first line), as when it succeeds.
func TestStdinCopyRemovedOnBadImport(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, tc := range []struct{ from, content, want string }{
		{"azure", "garbage\n", "field TIMESTAMP"},
		{"mooncake", "garbage\n", "json syntax"},
	} {
		r := replayIn(strings.NewReader(tc.content), "--from", tc.from, "-", "--quiet")
		if code := exitcode.Of(r.err); code != 2 || !strings.Contains(fmt.Sprint(r.err), tc.want) {
			t.Errorf("--from %s: exit %d, error %v; want 2 naming %q", tc.from, code, r.err, tc.want)
		}
		if left := dirEntries(t, tmp); len(left) != 0 {
			t.Errorf("--from %s: temporary files left %v", tc.from, left)
		}
	}
}
