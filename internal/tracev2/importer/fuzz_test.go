package importer

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// Native fuzz targets, one per importer. Each checks that the importer never
// panics, that every error is one located line with exit code 2 (or an I/O
// error), that every record is valid, and that a fully imported input
// encodes through the tracev2 writer, decodes to equal records, and encodes
// again to the same bytes. Seed corpora: testdata/fuzz/Fuzz<Name>/.

// maxFuzzRecords bounds the records checked per input.
const maxFuzzRecords = 2000

func fuzzImport(t *testing.T, format Format, data []byte, cols tracev2.Columns) {
	imp, err := Open(format, "fuzz.in", bytes.NewReader(data), Options{})
	fuzzCheck(t, imp, err, cols)
}

// fuzzCheck drains an importer (or checks its constructor's error err).
func fuzzCheck(t *testing.T, imp Importer, err error, cols tracev2.Columns) {
	var recs []tracev2.Record
	for err == nil && len(recs) < maxFuzzRecords {
		var rec tracev2.Record
		rec, err = imp.Next()
		if err == nil {
			if cerr := checkRecord(rec); cerr != nil {
				t.Fatalf("record %d invalid: %v (%+v)", len(recs), cerr, rec)
			}
			recs = append(recs, rec)
		}
	}
	if err != nil && err != io.EOF {
		checkLocated(t, err)
		return
	}
	if err == nil { // stopped at maxFuzzRecords
		return
	}
	// Import -> encode -> decode -> encode: equal records, equal bytes.
	first := encodeRecords(t, imp.Header(), cols, recs)
	got, _, _, rerr := fromTrace(first)
	if rerr != nil {
		t.Fatalf("reading back the imported trace: %v\n%s", rerr, first)
	}
	if !reflect.DeepEqual(canon(got), canon(recs)) {
		t.Fatalf("records changed in the round trip:\n got %+v\nwant %+v", got, recs)
	}
	if second := encodeRecords(t, imp.Header(), cols, got); !bytes.Equal(first, second) {
		t.Fatalf("second encoding differs:\n%s\n---\n%s", first, second)
	}
}

// checkLocated fails unless err is one located line with exit code 2.
func checkLocated(t *testing.T, err error) {
	t.Helper()
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %q (%T) is not an *importer.Error", err, err)
	}
	if ie.ExitCode() != 2 || ie.Line < 1 || ie.Column < 1 || strings.ContainsAny(err.Error(), "\r\n") {
		t.Fatalf("bad error: %q (line %d, column %d)", err, ie.Line, ie.Column)
	}
}

func encodeRecords(t *testing.T, h *tracev2.Header, cols tracev2.Columns, recs []tracev2.Record) []byte {
	var buf bytes.Buffer
	if err := tracev2.WriteStream(&buf, h, cols, recs); err != nil {
		t.Fatalf("write imported records: %v", err)
	}
	return buf.Bytes()
}

func FuzzAzure(f *testing.F) {
	f.Add([]byte(azHead + azRow))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, FormatAzure, data, tracev2.Columns{}) })
}

func FuzzVidur(f *testing.F) {
	f.Add([]byte("arrived_at,num_prefill_tokens,num_decode_tokens,block_hash_ids\n0.5,10,2,\"[1, 2]\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, FormatVidur, data, tracev2.Columns{HashIDs: true}) })
}

func FuzzMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, FormatMooncake, data, tracev2.Columns{HashIDs: true})
		// The fast path must agree with the token path on every line it takes.
		m := &Mooncake{file: "fuzz.in", client: "c"}
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if flat, ok := m.parseFlat(line); ok {
				agreesWithTokenPath(t, m, "flat", line, flat)
			}
		}
	})
}

func FuzzVLLM(f *testing.F) {
	f.Add([]byte(vllmDoc(`[1]`, `[3]`, `[0.1]`, `[[0.01]]`, `[""]`)))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, FormatVLLM, data, tracev2.Columns{}) })
}

func FuzzLLMServingSim(f *testing.F) {
	f.Add([]byte(`{"request_id": "bench-0", "input_toks": 3, "output_toks": 2, "arrival_time": 1787267980.08, "queued_ts": 27536.66, "scheduled_ts": 27536.67, "first_token_ts": 27537.35, "last_token_ts": 27554.23}`+"\n"),
		[]byte(`{"model": "m", "engine_kwargs": {"tensor_parallel_size": 2, "max_num_seqs": 128, "max_model_len": null}, "kv_cache": {"num_gpu_blocks": 10, "block_size": 16}}`))
	f.Fuzz(func(t *testing.T, requests, meta []byte) {
		m, err := ParseLLMServingSimMeta("meta.json", meta)
		if err != nil {
			checkLocated(t, err)
			m = nil
		}
		imp, err := NewLLMServingSim("fuzz.in", bytes.NewReader(requests), m, Options{})
		fuzzCheck(t, imp, err, tracev2.Columns{XRequestID: true})
	})
}

// agreesWithTokenPath fails t unless the token path (parse) accepts line
// with the record a fast path (named path) gave.
func agreesWithTokenPath(t *testing.T, m *Mooncake, path string, line []byte, rec tracev2.Record) {
	t.Helper()
	slow, err := m.parse(line)
	if err != nil {
		t.Fatalf("%s path accepted %q, token path says %v", path, line, err)
	}
	rec.RequestID, slow.RequestID = 0, 0
	if !reflect.DeepEqual(rec, slow) {
		t.Fatalf("%s and token paths differ on %q:\n%s   %+v\ntoken %+v", path, line, path, rec, slow)
	}
}
