package input

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// TestLoadForms: a TraceV2 trace from its file, from stdin and from a
// pipe, and several merged, each read whole into memory once.
func TestLoadForms(t *testing.T) {
	dir := t.TempDir()
	data := stream(t, records(t, 40))
	file := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(other, stream(t, records(t, 60)[40:]), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cfg    Config
		rows   int
		merged bool
	}{
		{"file", Config{Paths: []string{file}}, 40, false},
		{"stdin", Config{Paths: []string{"-"}, Stdin: bytes.NewReader(data)}, 40, false},
		{"pipe", Config{Paths: []string{fifo(t, data)}}, 40, false},
		{"merged", Config{Paths: []string{file, other}}, 60, true},
	} {
		l, err := Load(tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(l.Records) != tc.rows || len(l.Lines) != tc.rows {
			t.Errorf("%s: %d records, %d lines, want %d", tc.name, len(l.Records), len(l.Lines), tc.rows)
		}
		if (l.Merge != nil) != tc.merged {
			t.Errorf("%s: merge info %v, want merged %v", tc.name, l.Merge, tc.merged)
		}
	}
}

// TestLoadRefuses: a trace named twice, or an import, is bad usage
// (exit 2); a bad row is located; duplicated ids are left to the caller.
func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	dup := filepath.Join(dir, "dup.csv")
	recs := records(t, 3)
	recs[2].RequestID = recs[0].RequestID
	if err := os.WriteFile(dup, stream(t, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Paths: []string{"a", "b"}, DataPath: "d"}, "merged by time"},
		{Config{Paths: []string{"x"}, HeaderPath: "h", DataPath: "d"}, "not both"},
		{Config{Paths: []string{azure}, From: importer.FormatAzure}, "read row by row"},
		{Config{Paths: []string{filepath.Join(dir, "missing.csv")}}, "missing.csv"},
		{Config{Paths: []string{azure}}, "AzureLLMInferenceTrace_conv_10min.csv:1:1: header"},
	} {
		_, err := Load(tc.cfg)
		var coded interface{ ExitCode() int }
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &coded) || coded.ExitCode() != 2 {
			t.Errorf("%+v: %v; want exit 2 naming %q", tc.cfg, err, tc.want)
		}
	}
	l, err := Load(Config{Paths: []string{dup}})
	if err != nil {
		t.Fatalf("duplicated ids: %v", err)
	}
	if _, err := l.IndexByID(); err == nil || !strings.Contains(err.Error(), "dup.csv:9:1: column request_id: 0 is duplicated (first on line 7)") {
		t.Errorf("IndexByID: %v", err)
	}
}

// TestITLBeside: NAME.itl.csv is found beside a trace named by its path,
// its data path or its header path, never for stdin or several traces.
func TestITLBeside(t *testing.T) {
	dir := t.TempDir()
	itl := filepath.Join(dir, "cap.itl.csv")
	if err := os.WriteFile(itl, []byte("request_id,chunk_index,timestamp_us\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace, yaml := filepath.Join(dir, "cap.csv"), filepath.Join(dir, "cap.yaml")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Paths: []string{trace}}, itl},
		{Config{Paths: []string{trace + ".gz"}}, itl},
		{Config{HeaderPath: yaml, DataPath: trace}, itl},
		{Config{HeaderPath: yaml}, itl},
		{Config{Paths: []string{itl}}, ""},
		{Config{Paths: []string{"-"}}, ""},
		{Config{Paths: []string{trace, trace}}, ""},
		{Config{Paths: []string{filepath.Join(dir, "other.csv")}}, ""},
	} {
		if got := tc.cfg.ITLBeside(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// TestMergedITL: the ITL files beside merged traces are read on each
// trace's origin and shift, all of them or none.
func TestMergedITL(t *testing.T) {
	dir := t.TempDir()
	recs := records(t, 4)
	var paths []string
	for w, part := range [][]tracev2.Record{recs[:2], recs[2:]} {
		p := filepath.Join(dir, []string{"a", "b"}[w])
		if err := os.WriteFile(p+".csv", stream(t, part), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p+".csv")
		itl := "request_id,chunk_index,timestamp_us\n" + strconv.FormatInt(part[0].RequestID, 10) + ",0,5\n"
		if err := os.WriteFile(p+".itl.csv", []byte(itl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(Config{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	rows, missing, err := l.MergedITL()
	if err != nil || missing != -1 || len(rows) != 2 {
		t.Fatalf("both: %d rows, missing %d, %v; want 2, -1, nil", len(rows), missing, err)
	}
	for i, part := range l.Merge.Parts {
		if want := 5 + part.ShiftUs; rows[i].TimestampUs != want {
			t.Errorf("part %d: timestamp %d, want %d", i, rows[i].TimestampUs, want)
		}
	}
	if err := os.Remove(strings.TrimSuffix(paths[1], ".csv") + ".itl.csv"); err != nil {
		t.Fatal(err)
	}
	if rows, missing, err := l.MergedITL(); err != nil || missing != 1 || rows != nil {
		t.Errorf("one missing: %d rows, missing %d, %v; want none, 1, nil", len(rows), missing, err)
	}
}
