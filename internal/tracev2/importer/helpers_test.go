package importer

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// openFile opens path for the test and closes it at the end.
func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// collect drains imp, checking every record with checkRecord.
func collect(t *testing.T, imp Importer) []tracev2.Record {
	t.Helper()
	var recs []tracev2.Record
	for rec, err := range All(imp) {
		if err != nil {
			t.Fatalf("record %d: %v", len(recs), err)
		}
		if err := checkRecord(rec); err != nil {
			t.Fatalf("record %d invalid: %v (%+v)", len(recs), err, rec)
		}
		recs = append(recs, rec)
	}
	// Exhausted importers keep returning io.EOF.
	if _, err := imp.Next(); err != io.EOF {
		t.Fatalf("Next after the end: got %v, want io.EOF", err)
	}
	return recs
}

// checkRecord applies the TraceV2 value rules (docs/tracev2.md §4.7) that an imported
// record must meet.
func checkRecord(r tracev2.Record) error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"request_id", r.RequestID}, {"input_tokens", int64(r.InputTokens)},
		{"output_tokens", int64(r.OutputTokens)}, {"arrival_time_us", r.ArrivalTimeUs},
		{"send_time_us", r.SendTimeUs}, {"first_chunk_time_us", r.FirstChunkTimeUs},
		{"last_chunk_time_us", r.LastChunkTimeUs}, {"num_chunks", int64(r.NumChunks)},
		{"prefix_length", int64(r.PrefixLength)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s = %d is negative", f.name, f.v)
		}
	}
	switch {
	case r.Status == "":
		return errors.New("empty status")
	case r.ClientID == "":
		return errors.New("empty client_id")
	case r.SendTimeUs > 0 && r.SendTimeUs < r.ArrivalTimeUs:
		return errors.New("send before arrival")
	case r.FirstChunkTimeUs > 0 && r.FirstChunkTimeUs < r.SendTimeUs:
		return errors.New("first chunk before send")
	case r.LastChunkTimeUs > 0 && r.LastChunkTimeUs < r.FirstChunkTimeUs:
		return errors.New("last chunk before first chunk")
	case (r.FirstChunkTimeUs == 0) != (r.NumChunks == 0):
		return errors.New("num_chunks and first_chunk_time_us disagree")
	case strings.ContainsAny(r.ErrorMessage, "\r\n"):
		return errors.New("multi-line error_message")
	}
	return nil
}

// errText runs an importer over input to its first error and returns the
// error text ("" if none); it also checks the error's exit code.
func errText(t *testing.T, format Format, name, input string, opts Options) string {
	t.Helper()
	imp, err := Open(format, name, strings.NewReader(input), opts)
	if err == nil {
		for {
			_, err = imp.Next()
			if err != nil {
				break
			}
		}
	}
	if err == io.EOF {
		return ""
	}
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %v (%T) is not an *importer.Error", err, err)
	}
	if ie.ExitCode() != 2 {
		t.Fatalf("ExitCode() = %d, want 2", ie.ExitCode())
	}
	return err.Error()
}

// firstLast checks the count and the first and last records of recs.
func firstLast(t *testing.T, recs []tracev2.Record, n int, first, last tracev2.Record) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("got %d records, want %d", len(recs), n)
	}
	if !reflect.DeepEqual(recs[0], first) {
		t.Errorf("first record:\n got %+v\nwant %+v", recs[0], first)
	}
	if !reflect.DeepEqual(recs[n-1], last) {
		t.Errorf("last record:\n got %+v\nwant %+v", recs[n-1], last)
	}
}

var update = flag.Bool("update", false, "rewrite golden files under testdata/")
