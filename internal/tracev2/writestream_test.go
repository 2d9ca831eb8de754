package tracev2

import (
	"bytes"
	"reflect"
	"testing"
)

// TestWriteStream: a whole trace written in one call reads back as written;
// a nil writer is an error, not a panic.
func TestWriteStream(t *testing.T) {
	for _, mode := range []string{ModeReal, ModeGenerated} {
		t.Run(mode, func(t *testing.T) {
			recs := sampleRecords(mode)
			var b bytes.Buffer
			if err := WriteStream(&b, sampleHeader(mode), sampleColumns(mode), recs); err != nil {
				t.Fatal(err)
			}
			tr, err := Load(Input{Path: "-", Stdin: bytes.NewReader(b.Bytes())}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tr.Records, recs) || tr.Header.Mode != mode {
				t.Errorf("read back mode %q, records %+v; want %q, %+v", tr.Header.Mode, tr.Records, mode, recs)
			}
		})
	}
	if err := WriteStream(nil, sampleHeader(ModeReal), Columns{}, nil); err == nil {
		t.Error("WriteStream(nil writer) = nil, want an error")
	}
}
