package input

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

const azure = "../../../testdata/azure-llm-2023/AzureLLMInferenceTrace_conv_10min.csv"

// records are the first n rows of the Azure slice, as its importer gives them.
func records(t *testing.T, n int) []tracev2.Record {
	t.Helper()
	f, err := os.Open(azure)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := importer.Open(importer.FormatAzure, azure, f, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []tracev2.Record
	for len(out) < n {
		rec, err := imp.Next()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// stream is recs as a single-stream TraceV2 trace.
func stream(t *testing.T, recs []tracev2.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeGenerated
	h.CreatedAt = "2026-03-01T10:00:00.000000Z"
	w, err := tracev2.NewStreamWriter(&b, h, tracev2.Columns{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readAll reads rows once through.
func readAll(t *testing.T, rows Rows) []int64 {
	t.Helper()
	rd, err := rows.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var ids []int64
	for {
		var rec tracev2.Record
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.RequestID)
	}
}

// TestForms: a TraceV2 trace from its file, from stdin and from a pipe,
// several merged, and a foreign one detected, each read whole and then
// again as often as asked; Close leaves no temporary file.
func TestForms(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	data := stream(t, records(t, 40))
	file := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.csv")
	more := records(t, 60)[40:]
	if err := os.WriteFile(other, stream(t, more), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		rows  int
		named string
	}{
		{"file", Config{Paths: []string{file}}, 40, file},
		{"stdin", Config{Paths: []string{"-"}, Stdin: bytes.NewReader(data)}, 40, tracev2.StdinName},
		{"pipe", Config{Paths: []string{fifo(t, data)}}, 40, "trace.fifo"},
		{"merged", Config{Paths: []string{file, other}}, 60, ""},
		{"azure", Config{Paths: []string{azure}}, 0, azure},
		{"azure forced", Config{Paths: []string{azure}, From: importer.FormatAzure}, 0, azure},
	} {
		tr, err := Open(tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.rows > 0 && tr.N != tc.rows {
			t.Errorf("%s: %d rows, want %d", tc.name, tr.N, tc.rows)
		}
		if !strings.Contains(tr.Name, tc.named) {
			t.Errorf("%s: named %q, want %q in it", tc.name, tr.Name, tc.named)
		}
		first, second := readAll(t, tr.Rows), readAll(t, tr.Rows)
		if len(first) != tr.N || len(second) != tr.N {
			t.Errorf("%s: read %d then %d rows, want %d", tc.name, len(first), len(second), tr.N)
		}
		tr.Close()
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%s: temporary files left: %v", tc.name, left)
		}
	}
}

// TestStreamThenSpool: a foreign trace left open is read once as a
// stream, and spooled afterwards gives the same rows from the start.
func TestStreamThenSpool(t *testing.T) {
	tr, err := Open(Config{Paths: []string{azure}, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Stream == nil || tr.Rows != nil {
		t.Fatalf("an Azure trace was not left open to stream")
	}
	n := 0
	var rec tracev2.Record
	for tr.Stream.Read(&rec) == nil {
		n++
	}
	if n != tr.Stream.Rows() || n == 0 || tr.Stream.Err() != nil {
		t.Fatalf("streamed %d rows, counted %d, error %v", n, tr.Stream.Rows(), tr.Stream.Err())
	}
	if _, _, ok := tr.Stream.Again(); ok {
		t.Errorf("rows without hash ids are read again")
	}
	if err := tr.Spool(); err != nil {
		t.Fatal(err)
	}
	if got := len(readAll(t, tr.Rows)); got != n || tr.N != n || tr.Stream != nil {
		t.Errorf("spooled %d rows (N %d), streamed %d", got, tr.N, n)
	}
}

// TestUsageErrors: what cannot be opened is bad usage (exit 2), named.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	dup := filepath.Join(dir, "dup.csv")
	recs := records(t, 3)
	recs[2].RequestID = recs[0].RequestID
	if err := os.WriteFile(dup, stream(t, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(empty, stream(t, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no trace"},
		{Config{Paths: []string{"a", "b"}, From: importer.FormatAzure}, "merged by time"},
		{Config{From: importer.FormatAzure}, "name the file to import"},
		{Config{Paths: []string{"x"}, From: "nope"}, `--from "nope"`},
		{Config{Paths: []string{"x"}, HeaderPath: "h", DataPath: "d"}, "not both"},
		{Config{Paths: []string{azure}, DataPath: "d"}, "give it alone"},
		{Config{Paths: []string{filepath.Join(dir, "missing.csv")}}, "missing.csv"},
		{Config{Paths: []string{dir}}, dir},
		{Config{Paths: []string{dup}}, "dup.csv:9:1: column request_id: 0 is duplicated (first on line 7)"},
		{Config{Paths: []string{empty}}, "no requests"},
		{Config{Paths: []string{"-"}, Stdin: strings.NewReader("what,is\nthis,1\n")}, "--from FORMAT forces one"},
	} {
		_, err := Open(tc.cfg)
		var coded interface{ ExitCode() int }
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &coded) || coded.ExitCode() != 2 {
			t.Errorf("%+v: %v; want exit 2 naming %q", tc.cfg, err, tc.want)
		}
	}
}

// TestPipeNamed: a bad row read through a pipe is located in the pipe's
// path, never in its stand-in.
func TestPipeNamed(t *testing.T) {
	data := stream(t, records(t, 5))
	bad := bytes.Replace(data, []byte("\n"), []byte("\nnot,a,row\n"), bytes.Count(data, []byte("\n")))
	path := fifo(t, bad)
	tr, err := Open(Config{Paths: []string{path}})
	if err == nil {
		tr.Close()
		t.Fatal("a bad row was read")
	}
	if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), tracev2.StdinName) {
		t.Errorf("error %q does not name %s alone", err, path)
	}
}

// fifo is a named pipe that gives content once.
func fifo(t *testing.T, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(content)
	}()
	return path
}
