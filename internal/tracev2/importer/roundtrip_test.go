package importer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

// toTrace imports with imp and writes the single-stream TraceV2 form.
func toTrace(imp Importer, cols tracev2.Columns) ([]byte, []tracev2.Record, error) {
	var buf bytes.Buffer
	tw, err := tracev2.NewStreamWriter(&buf, imp.Header(), cols)
	if err != nil {
		return nil, nil, err
	}
	var recs []tracev2.Record
	for rec, err := range All(imp) {
		if err != nil {
			return nil, nil, err
		}
		if err := tw.Write(&rec); err != nil {
			return nil, nil, fmt.Errorf("write request %d: %w", rec.RequestID, err)
		}
		recs = append(recs, rec)
	}
	if err := tw.Close(nil); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), recs, nil
}

// fromTrace reads a single-stream trace back; warnings are returned.
func fromTrace(data []byte) ([]tracev2.Record, *tracev2.Header, []string, error) {
	var warns []string
	r, h, err := tracev2.Open(tracev2.Input{Path: "-", Stdin: bytes.NewReader(data)},
		tracev2.Options{Warn: func(m string) { warns = append(warns, m) }})
	if err != nil {
		return nil, nil, warns, err
	}
	defer r.Close()
	var recs []tracev2.Record
	for {
		var rec tracev2.Record
		err := r.Read(&rec)
		if err == io.EOF {
			return recs, h, warns, nil
		}
		if err != nil {
			return nil, nil, warns, err
		}
		recs = append(recs, rec)
	}
}

// canon makes an empty hash list nil: the CSV cannot tell them apart.
func canon(recs []tracev2.Record) []tracev2.Record {
	out := make([]tracev2.Record, len(recs))
	for i, r := range recs {
		if len(r.HashIDs) == 0 {
			r.HashIDs = nil
		}
		out[i] = r
	}
	return out
}

// Every sample, real and testdata, converts into a trace that reads back with
// equal records and header.
func TestSamplesRoundTripThroughTraceV2(t *testing.T) {
	tests := []struct {
		format Format
		path   string
		real   bool // under ../shared/data
		cols   tracev2.Columns
	}{
		{FormatAzure, "azure-llm-2023/data/AzureLLMInferenceTrace_code.csv", true, tracev2.Columns{}},
		{FormatAzure, "azure-llm-2023/data/AzureLLMInferenceTrace_conv.csv", true, tracev2.Columns{}},
		{FormatMooncake, "mooncake/FAST25-release/traces/conversation_trace.jsonl", true, tracev2.Columns{HashIDs: true}},
		{FormatMooncake, "mooncake/FAST25-release/traces/synthetic_trace.jsonl", true, tracev2.Columns{HashIDs: true}},
		{FormatAzure, "testdata/azure/AzureLLMInferenceTrace_code_head20.csv", false, tracev2.Columns{}},
		{FormatAzure, "testdata/azure/AzureLLMInferenceTrace_conv_head20.csv", false, tracev2.Columns{}},
		{FormatMooncake, "testdata/mooncake/conversation_trace_head20.jsonl", false, tracev2.Columns{HashIDs: true}},
		{FormatVidur, "testdata/vidur/azure_code_head20_vidur.csv", false, tracev2.Columns{}},
		{FormatVidur, "testdata/vidur/prefix_blocks.csv", false, tracev2.Columns{HashIDs: true}},
		{FormatVLLM, "testdata/vllm/bench_detailed.json", false, tracev2.Columns{}},
		{FormatVLLM, "testdata/vllm/bench_detailed_old.json", false, tracev2.Columns{}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			path := tt.path
			if tt.real {
				path = shareddata.Path(t, tt.path)
			}
			imp, err := Open(tt.format, path, openFile(t, path), Options{})
			if err != nil {
				t.Fatal(err)
			}
			data, want, err := toTrace(imp, tt.cols)
			if err != nil {
				t.Fatal(err)
			}
			got, h, warns, err := fromTrace(data)
			if err != nil {
				t.Fatalf("read back: %v", err)
			}
			if !reflect.DeepEqual(canon(got), canon(want)) {
				t.Fatalf("records differ after the round trip (%d read, %d written)", len(got), len(want))
			}
			if !reflect.DeepEqual(h, imp.Header()) {
				t.Errorf("header:\n got %+v\nwant %+v", h, imp.Header())
			}
			// The only warnings allowed: rows that are ok without a measured
			// first chunk (Azure, Mooncake, Vidur carry no latencies).
			if len(warns) > 0 {
				t.Logf("%d warnings, first: %s", len(warns), warns[0])
			}
			for _, w := range warns {
				if !strings.Contains(w, "first_chunk_time_us") && !strings.HasSuffix(w, "more row warnings not shown") {
					t.Errorf("unexpected warning: %s", w)
				}
			}
		})
	}
}

// Writing the Mooncake sample once gives a golden single-stream trace, so a
// change of mapping or format shows up in review.
func TestMooncakeSampleGolden(t *testing.T) {
	path := "testdata/mooncake/conversation_trace_head20.jsonl"
	imp, err := NewMooncake(path, openFile(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := toTrace(imp, tracev2.Columns{HashIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/golden/mooncake_head20.trace", data)
}

// golden compares data with the file at path, rewriting it under -update.
func golden(t *testing.T, path string, data []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("output differs from %s (run go test -update after checking the change)", path)
	}
}
