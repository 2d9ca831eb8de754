package tracev2

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestOriginRules(t *testing.T) {
	const e = blisE0
	row := func(arr, send, first, last int64) string {
		f := strings.Split(goodRow, ",")
		f[19], f[20], f[21], f[22] = itoa(arr), itoa(send), itoa(first), itoa(last)
		return strings.Join(f, ",")
	}
	tests := []struct {
		name string
		rows []string
		want Origin
		// normalised (arrival, send) of each row
		norm [][2]int64
	}{
		{"offsets only", []string{row(100, 110, 150, 300), row(0, 5, 0, 0)}, Origin{Rule: RuleOffsets},
			[][2]int64{{100, 110}, {0, 5}}},
		{"epoch send, offset arrival", []string{row(100, e+130, e+150, e+300), row(0, e+20, e+40, e+90)},
			Origin{Rule: RuleEpochSend, E0: e + 20}, [][2]int64{{100, 110}, {0, 0}}},
		{"epoch arrival (converted)", []string{row(e+500, e+510, e+600, e+700), row(e+100, e+100, 0, 0)},
			Origin{Rule: RuleEpochArrival, E0: e + 100}, [][2]int64{{400, 410}, {0, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(cols27+"\n"+strings.Join(tc.rows, "\n")+"\n"), "t.csv", Options{})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Origin != tc.want {
				t.Errorf("origin: got %+v, want %+v", tr.Origin, tc.want)
			}
			for i, w := range tc.norm {
				if got := [2]int64{tr.Records[i].ArrivalTimeUs, tr.Records[i].SendTimeUs}; got != w {
					t.Errorf("row %d: (arrival, send) = %v, want %v", i, got, w)
				}
			}
		})
	}
}

// TestStreamingNormalisation: a first pass gives the origin, a second pass
// normalises while streaming, with the same result as ReadAll.
func TestStreamingNormalisation(t *testing.T) {
	in := Input{Path: "testdata/blis/real.csv"}
	o, err := ScanOrigin(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := Open(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Normalize(o)
	streamed := readAllRecords(t, r)
	whole, err := Load(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(streamed, whole.Records) {
		t.Errorf("streamed records differ from ReadAll's")
	}
	if _, err := (&Reader{}).Origin(); err == nil {
		t.Error("Origin before the end gave no error")
	}
}

func TestOffsetsOnly(t *testing.T) {
	if !sampleHeader(ModeGenerated).OffsetsOnly() || DefaultHeader().OffsetsOnly() {
		t.Error("OffsetsOnly: want true for x_ext.time_origin relative, false without x_ext")
	}
}

func TestITL(t *testing.T) {
	var b strings.Builder
	w, err := NewITLWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRequest(3, []int64{291800, 291826, 299050}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRequest(2, []int64{170100}); err != nil {
		t.Fatal(err)
	}
	want := "request_id,chunk_index,timestamp_us\n3,0,291800\n3,1,291826\n3,2,299050\n2,0,170100\n"
	if b.String() != want {
		t.Fatalf("written:\n%s\nwant\n%s", b.String(), want)
	}
	rows, err := ReadITL(strings.NewReader(b.String()), "x.itl.csv", Origin{})
	if err != nil {
		t.Fatal(err)
	}
	if wantRows := []ITLRow{{3, 0, 291800}, {3, 1, 291826}, {3, 2, 299050}, {2, 0, 170100}}; !reflect.DeepEqual(rows, wantRows) {
		t.Errorf("read back %v, want %v", rows, wantRows)
	}
	if err := w.WriteRequest(4, []int64{-1}); err == nil {
		t.Error("negative timestamp accepted")
	}
	// Columns bound by name, in any order, unknown columns ignored.
	rows, err = ReadITL(strings.NewReader("\xEF\xBB\xBFtimestamp_us,extra,request_id,chunk_index\r\n5,x,1,0\r\n"), "x", Origin{})
	if err != nil || !reflect.DeepEqual(rows, []ITLRow{{1, 0, 5}}) {
		t.Errorf("reordered columns: got %v, %v", rows, err)
	}
}

func TestITLMalformed(t *testing.T) {
	const h = "request_id,chunk_index,timestamp_us\n"
	tests := []struct{ name, data, want string }{
		{"negative", h + "1,0,5\n1,-1,6\n", `i.csv:3:2: column chunk_index: "-1" is negative`},
		{"non-numeric", h + "1,0,0x10\n", `i.csv:2:3: column timestamp_us: "0x10" is not an integer`},
		{"empty", h + "1,,5\n", `i.csv:2:2: column chunk_index: empty, want an integer`},
		{"short row", h + "1,0\n", `i.csv:2:1: row: wrong number of fields: every row must have as many as the column row`},
		{"bare quote", h + "1,0,5\"\n", `i.csv:2:6: csv syntax: bare " in unquoted field`},
		{"missing column", "request_id,timestamp_us\n1,5\n", `i.csv:1:1: column chunk_index: missing from the column row`},
		{"empty file", "", `i.csv:1:1: csv: no column row: the data is empty`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadITL(strings.NewReader(tc.data), "i.csv", Origin{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%T is not an *Error", err)
			}
		})
	}
}

func TestOpenITLFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.itl.csv")
	os.WriteFile(p, []byte("request_id,chunk_index,timestamp_us\n1,0,1772359200000100\n"), 0o644)
	r, err := OpenITL(p, nil, Origin{Rule: RuleEpochSend, E0: 1772359200000000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var row ITLRow
	if err := r.Read(&row); err != nil || row != (ITLRow{1, 0, 100}) || r.Line() != 2 {
		t.Errorf("got %+v line %d err %v; want {1 0 100} on line 2", row, r.Line(), err)
	}
	if err := r.Read(&row); !errors.Is(err, io.EOF) {
		t.Errorf("want io.EOF, got %v", err)
	}
}

func TestIndexByID(t *testing.T) {
	data := cols27 + "\n" + goodRow + "\n" + withField(0, "2") + "\n" + goodRow + "\n"
	r, err := NewReader(strings.NewReader(data), "t.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.IndexByID()
	if want := "t.csv:4:1: column request_id: 1 is duplicated (first on line 2)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	tr.Records = tr.Records[:2]
	idx, err := tr.IndexByID()
	if err != nil || !reflect.DeepEqual(idx, map[int64]int{1: 0, 2: 1}) {
		t.Errorf("got %v, %v", idx, err)
	}
}
