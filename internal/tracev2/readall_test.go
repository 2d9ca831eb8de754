package tracev2

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadAllSizing reads the same trace through every sizing path of
// ReadAll: a file whose size gives a good estimate, a file whose first rows
// are much longer than the rest (estimate too small: chunks), a gzip file
// (estimate from the compressed size), and stdin (no estimate). All must give
// the same records and lines.
func TestReadAllSizing(t *testing.T) {
	const n = 3000
	write := func(longFirst bool) []byte {
		var buf bytes.Buffer
		w, err := NewStreamWriter(&buf, sampleHeader(ModeReal), Columns{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			rec := benchRecord(i)
			rec.XRequestID, rec.FirstTokenTimeUs, rec.CachedTokens, rec.VLLMPriority = "", 0, 0, 0
			if longFirst && i < 300 {
				rec.ErrorMessage = strings.Repeat("e", 2000)
			}
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(nil); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	dir := t.TempDir()
	for _, longFirst := range []bool{false, true} {
		data := write(longFirst)
		want, err := Load(Input{Path: "-", Stdin: bytes.NewReader(data)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Records) != n || len(want.Lines) != n {
			t.Fatalf("stdin: %d records, %d lines, want %d", len(want.Records), len(want.Lines), n)
		}
		plain := filepath.Join(dir, "t.trace")
		if err := os.WriteFile(plain, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(data)
		zw.Close()
		zipped := filepath.Join(dir, "t.trace.gz")
		if err := os.WriteFile(zipped, gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{plain, zipped} {
			got, err := Load(Input{Path: p}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Records, want.Records) || !reflect.DeepEqual(got.Lines, want.Lines) {
				t.Errorf("long first rows %v, %s: records or lines differ from stdin's", longFirst, filepath.Base(p))
			}
		}
	}
}
