package tracev2

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallDisk is a file on a disk with room bytes left: a write that does not
// fit writes what fits and fails with ENOSPC, as write(2) does; truncating
// gives the space back.
type smallDisk struct {
	*os.File
	room int64
}

func (d *smallDisk) Write(p []byte) (int, error) {
	if int64(len(p)) <= d.room {
		n, err := d.File.Write(p)
		d.room -= int64(n)
		return n, err
	}
	n, _ := d.File.Write(p[:d.room])
	d.room -= int64(n)
	return n, &os.PathError{Op: "write", Path: d.Name(), Err: syscall.ENOSPC}
}

func (d *smallDisk) Truncate(size int64) error {
	fi, err := d.Stat()
	if err != nil {
		return err
	}
	if err := d.File.Truncate(size); err != nil {
		return err
	}
	d.room += fi.Size() - size
	return nil
}

func newSmallDisk(t *testing.T, room int64) *smallDisk {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "trace"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &smallDisk{File: f, room: room}
}

// TestFullDiskLeavesWholeRows: when the disk fills in the middle of a row,
// the row is cut off again, every later write fails, and the trace is
// marked as cut short (x_ext.interrupted); it reads back whole.
func TestFullDiskLeavesWholeRows(t *testing.T) {
	h := sampleHeader(ModeReal)
	h.XExt.Interrupted = nil
	var stream strings.Builder
	tw, err := NewStreamWriter(&stream, h, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	rec := Record{RequestID: 0, ClientID: "c", Streaming: true, InputTokens: 10, OutputTokens: 5,
		ArrivalTimeUs: 100, SendTimeUs: 110, FirstChunkTimeUs: 150, LastChunkTimeUs: 300, NumChunks: 6, Status: "ok", FinishReason: "stop"}
	for i := range 3 {
		rec.RequestID = int64(i)
		if err := tw.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	whole := int64(len(stream.String()))

	// The same trace on a disk that fills 40 bytes into the third row.
	var rows []string
	for _, l := range strings.SplitAfter(stream.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	third := int64(len(rows[len(rows)-1]))
	d := newSmallDisk(t, whole-third+40)
	tw, err = NewStreamWriter(d, h, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec.RequestID = int64(i)
		err = tw.Write(&rec)
	}
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("third row: err %v, want ENOSPC", err)
	}
	rec.RequestID = 3
	if tw.Write(&rec) == nil {
		t.Error("a write after the failed one succeeded")
	}
	if err := tw.Close(nil); err != nil {
		t.Fatalf("close (the trailer fits in the space the cut gave back): %v", err)
	}
	b, err := os.ReadFile(d.Name())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Load(Input{Path: "-", Stdin: strings.NewReader(string(b))}, Options{Warn: noWarn(t)})
	if err != nil {
		t.Fatalf("the cut trace does not load: %v\n%s", err, b)
	}
	if len(tr.Records) != 2 || tr.Header.XExt == nil || tr.Header.XExt.Interrupted == nil || !*tr.Header.XExt.Interrupted {
		t.Errorf("%d rows, x_ext %+v: want 2 rows and interrupted: true\n%s", len(tr.Records), tr.Header.XExt, b)
	}
}

// TestITLFullDisk: a request's ITL rows are in the file whole or not at all.
func TestITLFullDisk(t *testing.T) {
	d := newSmallDisk(t, 200)
	w, err := NewITLWriter(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRequest(0, []int64{10, 20, 30}); err != nil {
		t.Fatal(err)
	}
	big := make([]int64, 100)
	for i := range big {
		big[i] = int64(1000 + i)
	}
	if err := w.WriteRequest(1, big); err == nil {
		t.Fatal("a request larger than the room left was written")
	}
	if err := w.WriteRequest(2, []int64{5}); err == nil {
		t.Error("a write after the failed one succeeded")
	}
	b, _ := os.ReadFile(d.Name())
	if want := "request_id,chunk_index,timestamp_us\n0,0,10\n0,1,20\n0,2,30\n"; string(b) != want {
		t.Errorf("file holds %q, want %q", b, want)
	}
}

// TestTornLastRow: a malformed last row without a line end is what a cut
// writer leaves; it is skipped with a warning. With a line end, or anywhere
// else, the same row is an error; a valid last row without one is read.
func TestTornLastRow(t *testing.T) {
	data := cols27 + "\n" + goodRow + "\n" + withField(0, "2") + "\n"
	torn := data + goodRow[:40]
	read := func(text string, opts Options) (*Trace, error) {
		r, err := NewReader(strings.NewReader(text), "trace.csv", opts)
		if err != nil {
			return nil, err
		}
		return ReadAll(r)
	}
	var warns []string
	tr, err := read(torn, Options{Warn: collect(&warns)})
	if err != nil {
		t.Fatalf("torn last row: %v", err)
	}
	want := "trace.csv:4: the last row is cut short (no line end: missing: the row has 16 fields, the column row 27); skipped"
	if len(tr.Records) != 2 || len(warns) != 1 || warns[0] != want {
		t.Errorf("%d rows, warnings %q; want 2 and %q", len(tr.Records), warns, want)
	}
	if _, err := read(torn+"\n", Options{}); err == nil {
		t.Error("a short row with a line end was accepted")
	}
	tr, err = read(data+withField(0, "3"), Options{Warn: noWarn(t)})
	if err != nil || len(tr.Records) != 3 {
		t.Errorf("a whole last row without a line end: %v, %d rows", err, len(tr.Records))
	}
}
