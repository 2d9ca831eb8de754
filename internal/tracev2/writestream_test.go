package tracev2

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWriteWhole: a whole trace written in one call, in either form, reads
// back as written; a nil writer or an empty path is an error, not a panic.
func TestWriteWhole(t *testing.T) {
	for _, mode := range []string{ModeReal, ModeGenerated} {
		recs := sampleRecords(mode)
		var b bytes.Buffer
		if err := WriteStream(&b, sampleHeader(mode), sampleColumns(mode), recs); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		hdr, data := filepath.Join(dir, "t.yaml"), filepath.Join(dir, "t.csv")
		if err := WriteFiles(hdr, data, sampleHeader(mode), sampleColumns(mode), false, recs); err != nil {
			t.Fatal(err)
		}
		for _, in := range []Input{{Path: "-", Stdin: bytes.NewReader(b.Bytes())}, {Path: data}} {
			tr, err := Load(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tr.Records, recs) || tr.Header.Mode != mode {
				t.Errorf("%s %s: read back mode %q, records %+v; want %q, %+v", mode, in.Path, tr.Header.Mode, tr.Records, mode, recs)
			}
		}
	}
	if err := WriteStream(nil, sampleHeader(ModeReal), Columns{}, nil); err == nil {
		t.Error("WriteStream(nil writer) = nil, want an error")
	}
	if err := WriteFiles("", "x.csv", sampleHeader(ModeReal), Columns{}, false, nil); err == nil {
		t.Error("WriteFiles(empty header path) = nil, want an error")
	}
}
