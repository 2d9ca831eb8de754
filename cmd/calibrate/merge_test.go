package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"servesim/internal/tracev2"
)

// TestCalibrateSeveralTraces: the real trace split into two workers'
// slices (the second on its own clock, started 2 ms later, each with its
// own ITL file) is graded exactly as the whole: calibrate merges REAL...
// by time, and their ITL files with them.
func TestCalibrateSeveralTraces(t *testing.T) {
	tr, err := tracev2.Load(tracev2.Input{Path: realCSV}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(realITL)
	if err != nil {
		t.Fatal(err)
	}
	itl, err := tracev2.ReadITL(f, realITL, tr.Origin)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var parts []string
	for w := range 2 {
		h := tr.Header.Clone()
		shift := int64(0)
		if w == 1 {
			h.CreatedAt, shift = "2026-03-01T10:00:00.002000Z", -2000
		}
		slice := func(id int64) bool { return id%2 == int64(w) }
		var recs []tracev2.Record
		for _, r := range tr.Records {
			if slice(r.RequestID) {
				r.Shift(shift)
				recs = append(recs, r)
			}
		}
		prefix := filepath.Join(dir, "w"+strconv.Itoa(w))
		if err := tracev2.WriteFiles(prefix+".yaml", prefix+".csv", h, tr.Columns, false, recs); err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(prefix + ".itl.csv")
		if err != nil {
			t.Fatal(err)
		}
		iw, err := tracev2.NewITLWriter(out)
		if err != nil {
			t.Fatal(err)
		}
		var id int64 = -1
		var stamps []int64
		flush := func() {
			if id >= 0 && slice(id) {
				if err := iw.WriteRequest(id, stamps); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, row := range itl {
			if row.RequestID != id {
				flush()
				id, stamps = row.RequestID, nil
			}
			stamps = append(stamps, row.TimestampUs+shift)
		}
		flush()
		out.Close()
		parts = append(parts, prefix+".csv")
	}
	want, stderr, code := runCmd(t, "", realCSV, simJSON, "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("whole: exit %d\n%s", code, stderr)
	}
	got, stderr, code := runCmd(t, "", parts[0], parts[1], simJSON, "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("slices: exit %d\n%s", code, stderr)
	}
	if got != want {
		t.Errorf("the two slices are graded differently from the whole:\n%s\nwant\n%s", got, want)
	}
}
