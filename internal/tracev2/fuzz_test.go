package tracev2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// maxFuzzRows bounds the rows a fuzz input may yield.
const maxFuzzRows = 10000

// decodeAll reads every record, or returns the first error.
func decodeAll(r *Reader) ([]Record, error) {
	var out []Record
	for len(out) < maxFuzzRows {
		var rec Record
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return nil, errors.New("too many rows")
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(cols27 + "\n" + goodRow + "\n"))
	f.Add([]byte(cols27 + "\r\n" + withField(25, "\"a,\"\"b\"\"\nc\"") + "\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "f.csv", Options{})
		if err != nil {
			return
		}
		recs, err := decodeAll(r)
		// The one-pass path and the split path must agree on every input.
		slow, _ := NewReader(bytes.NewReader(data), "f.csv", Options{})
		slow.slowOnly = true
		srecs, serr := decodeAll(slow)
		if fmt.Sprint(err) != fmt.Sprint(serr) || !reflect.DeepEqual(recs, srecs) {
			t.Fatalf("fast and split paths differ:\n%v\n%v\n%+v\n%+v", err, serr, recs, srecs)
		}
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, r.Columns())
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatalf("re-encoding a record that was read: %v", err)
			}
		}
		r2, err := NewReader(&buf, "f2.csv", Options{})
		if err != nil {
			t.Fatalf("re-reading: %v\n%s", err, buf.String())
		}
		recs2, err := decodeAll(r2)
		if err != nil {
			t.Fatalf("re-reading: %v\n%q", err, buf.String())
		}
		if !reflect.DeepEqual(recs, recs2) {
			t.Fatalf("decode -> encode -> decode changed the records:\n%+v\n%+v", recs, recs2)
		}
	})
}

func FuzzHeader(f *testing.F) {
	f.Add([]byte("trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\n"))
	f.Add([]byte("trace_version: 2\ntime_unit: microseconds\nnetwork: {}\nserver: {model: m}\n"))
	f.Add([]byte("trace_version: 3\nx_ext:\n    deployment: {model: m, alpha_coeffs: [1, 2.5], class_priorities: {a: 1}, d: 50ms}\n" +
		"    client: {max_concurrency: 4, users: 2}\n    sources: {deployment.model: measured}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHeader(bytes.NewReader(data), "f.yaml", Options{})
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := EncodeHeader(&buf, h); err != nil {
			t.Fatalf("re-encoding a header that was read: %v", err)
		}
		h2, err := ReadHeader(bytes.NewReader(buf.Bytes()), "f2.yaml", Options{})
		if err != nil {
			t.Fatalf("re-reading: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(h, h2) {
			t.Fatalf("decode -> encode -> decode changed the header:\n%+v\n%+v\n%s", h, h2, buf.String())
		}
	})
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte("# trace_version: 3\n# mode: generated\n" + cols27 + "\n" + goodRow + "\n#+ x_ext:\n#+     interrupted: true\n"))
	f.Add([]byte(cols27 + "\n" + goodRow + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, h, err := Open(Input{Path: "-", Stdin: bytes.NewReader(data)}, Options{})
		if err != nil {
			return
		}
		recs, err := decodeAll(r)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		tw, err := NewStreamWriter(&buf, h, r.Columns())
		if err != nil {
			t.Fatalf("re-encoding a header that was read: %v", err)
		}
		for i := range recs {
			if err := tw.Write(&recs[i]); err != nil {
				t.Fatalf("re-encoding a record that was read: %v", err)
			}
		}
		if err := tw.Close(nil); err != nil {
			t.Fatal(err)
		}
		r2, h2, err := Open(Input{Path: "-", Stdin: &buf}, Options{})
		if err != nil {
			t.Fatalf("re-reading: %v\n%s", err, buf.String())
		}
		recs2, err := decodeAll(r2)
		if err != nil {
			t.Fatalf("re-reading: %v\n%q", err, buf.String())
		}
		if !reflect.DeepEqual(recs, recs2) || !reflect.DeepEqual(h, h2) {
			t.Fatalf("decode -> encode -> decode changed the trace:\n%+v\n%+v\n%+v\n%+v", h, h2, recs, recs2)
		}
	})
}

// TestWriteFuzzCorpus rewrites the seed corpora under testdata/fuzz/ from
// the golden traces and the spec's examples (with -update).
func TestWriteFuzzCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz/")
	}
	put := func(target, name string, data []byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, mode := range modes {
		put("FuzzReader", mode, read(filepath.Join("testdata", "golden", mode+".csv")))
		put("FuzzHeader", mode, read(filepath.Join("testdata", "golden", mode+"-ext.yaml")))
		put("FuzzDetect", mode+"-stream", read(filepath.Join("testdata", "golden", mode+".trace")))
		put("FuzzDetect", mode+"-yaml", read(filepath.Join("testdata", "golden", mode+".yaml")))
	}
	put("FuzzReader", "blis-real", read("testdata/blis/real.csv"))
	put("FuzzHeader", "blis-real", read("testdata/blis/real.yaml"))
	put("FuzzDetect", "blis-real", read("testdata/blis/real.csv"))
	put("FuzzReader", "layout22", []byte("request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message\n7,c,t,standard,s,1,g,true,10,5,10,0,0,0,0.25,100,110,150,300,6,ok,\n"))
	put("FuzzReader", "quoted", []byte(cols27+"\r\n"+strings.Replace(goodRow, ",stop", ",\"st\"\"o\np\"", 1)+"\r\n"))
	put("FuzzDetect", "garbage", []byte("\x00\x01\x02\xff\xfe"))
	put("FuzzDetect", "gzip-magic", []byte("\x1f\x8b\x08\x00"))
}

// FuzzITL: reading any ITL CSV never panics; a failure is one located line
// with exit code 2; what reads writes back (request by request) and reads
// again to the same rows.
func FuzzITL(f *testing.F) {
	f.Add([]byte("request_id,chunk_index,timestamp_us\n0,0,10\n0,1,20\n3,0,7\n"))
	f.Add([]byte("timestamp_us,request_id,chunk_index\n1772359200000150,0,0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadITL(bytes.NewReader(data), "i.csv", Origin{})
		if err != nil {
			var e *Error
			if errors.As(err, &e) && (e.ExitCode() != 2 || strings.ContainsAny(err.Error(), "\r\n")) {
				t.Fatalf("error %q: want one line with exit code 2", err)
			}
			return
		}
		var buf bytes.Buffer
		w, err := NewITLWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		var want []ITLRow
		for i := 0; i < len(rows); {
			j := i
			var ts []int64
			for ; j < len(rows) && rows[j].RequestID == rows[i].RequestID; j++ {
				ts = append(ts, rows[j].TimestampUs)
			}
			if err := w.WriteRequest(rows[i].RequestID, ts); err != nil {
				return // a negative time (an epoch shift) cannot be written
			}
			for k, v := range ts {
				want = append(want, ITLRow{RequestID: rows[i].RequestID, ChunkIndex: k, TimestampUs: v})
			}
			i = j
		}
		back, err := ReadITL(&buf, "back.csv", Origin{})
		if err != nil {
			t.Fatalf("read back: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(back, want) && len(want) > 0 {
			t.Fatalf("round trip:\n got %+v\nwant %+v", back, want)
		}
	})
}
