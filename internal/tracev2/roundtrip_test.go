package tracev2

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"servesim/internal/testkit/blistest"
)

var modes = []string{ModeReal, ModeGenerated, ModeReplayed}

// writeStream writes the single-stream form of mode's sample, with final as
// the end-of-run header.
func writeStream(t *testing.T, mode string, final *Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw, err := NewStreamWriter(&buf, sampleHeader(mode), sampleColumns(mode))
	if err != nil {
		t.Fatalf("NewStreamWriter: %v", err)
	}
	for _, rec := range sampleRecords(mode) {
		if err := tw.Write(&rec); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if err := tw.Close(final); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// finalHeader is mode's header with the facts known only at the end.
func finalHeader(mode string) *Header {
	h := sampleHeader(mode)
	h.XExt.Interrupted = boolp(false)
	if mode == ModeReal {
		h.ObservedKVMetrics = &ObservedKVMetrics{Source: "gpu-prefix-cache-fallback", HitRate: 0.25, BlockHits: 1, BlockQueries: 4}
	}
	return h
}

func TestRoundTripSingleStream(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			data := writeStream(t, mode, finalHeader(mode))
			golden(t, mode+".trace", data)
			r, h, err := Open(stdinInput(string(data)), Options{Warn: noWarn(t)})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got := readAllRecords(t, r)
			if want := sampleRecords(mode); !reflect.DeepEqual(got, want) {
				t.Errorf("records:\ngot  %+v\nwant %+v", got, want)
			}
			if want := finalHeader(mode); !reflect.DeepEqual(h, want) {
				t.Errorf("header:\ngot  %+v\nwant %+v", h, want)
			}
			if got, want := r.Columns(), sampleColumns(mode); got != want {
				t.Errorf("columns: got %+v, want %+v", got, want)
			}
		})
	}
}

func TestRoundTripTwoFile(t *testing.T) {
	for _, mode := range modes {
		for _, withExt := range []bool{false, true} {
			name := mode
			if withExt {
				name += "-ext"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				hp, dp, _ := PrefixPaths(filepath.Join(dir, "t"))
				tw, err := CreateFiles(hp, dp, sampleHeader(mode), sampleColumns(mode), withExt)
				if err != nil {
					t.Fatalf("CreateFiles: %v", err)
				}
				for _, rec := range sampleRecords(mode) {
					if err := tw.Write(&rec); err != nil {
						t.Fatalf("Write: %v", err)
					}
				}
				if err := tw.Close(finalHeader(mode)); err != nil {
					t.Fatalf("Close: %v", err)
				}
				hb, _ := os.ReadFile(hp)
				db, _ := os.ReadFile(dp)
				golden(t, name+".yaml", hb)
				golden(t, name+".csv", db)
				side, err := os.ReadFile(ExtSidecarPath(hp))
				switch {
				case withExt && err == nil:
					t.Errorf("a header with x_ext has a sidecar %s", ExtSidecarPath(hp))
				case !withExt && err != nil:
					t.Fatalf("no x_ext sidecar beside a BLIS-compatible header: %v", err)
				case !withExt:
					golden(t, name+".ext.yaml", side)
					if err := blistest.StrictHeader(hb); err != nil {
						t.Errorf("BLIS's strict loader rejects the BLIS-compatible header: %v", err)
					}
				}
				for _, in := range []Input{{Path: dp}, {Path: hp}, {HeaderPath: hp, DataPath: dp}, {DataPath: dp}, {HeaderPath: hp}} {
					r, h, err := Open(in, Options{Warn: noWarn(t)})
					if err != nil {
						t.Fatalf("Open(%+v): %v", in, err)
					}
					got := readAllRecords(t, r)
					r.Close()
					if want := sampleRecords(mode); !reflect.DeepEqual(got, want) {
						t.Errorf("Open(%+v) records:\ngot  %+v\nwant %+v", in, got, want)
					}
					// Nothing is lost: without x_ext in the header, it comes
					// back from the sidecar.
					want := finalHeader(mode)
					if !reflect.DeepEqual(h, want) {
						t.Errorf("Open(%+v) header:\ngot  %+v\nwant %+v", in, h, want)
					}
				}
				want := 2 // header and data
				if !withExt {
					want++ // and the sidecar
				}
				if entries, _ := os.ReadDir(dir); len(entries) != want {
					t.Errorf("directory holds %d entries, want %d (no temporary files left)", len(entries), want)
				}
			})
		}
	}
}

// TestSplitSingleStream checks docs/tracev2.md §6: the leading lines without "# ",
// plus the trailer, minus x_ext, form a header YAML; the other lines form
// the CSV; and the pair reads back like the stream.
func TestSplitSingleStream(t *testing.T) {
	for _, mode := range modes {
		data := writeStream(t, mode, finalHeader(mode))
		var yml, csv bytes.Buffer
		inExt := false
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			// Drop the x_ext block (its key line and the indented lines under it).
			body := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("#+ ")), []byte("# "))
			if bytes.HasPrefix(body, []byte("x_ext:")) {
				inExt = true
				continue
			}
			if inExt && bytes.HasPrefix(body, []byte("    ")) {
				continue
			}
			inExt = false
			switch {
			case bytes.HasPrefix(line, []byte("#+ ")):
				yml.Write(line[3:])
			case bytes.HasPrefix(line, []byte("# ")):
				yml.Write(line[2:])
			case bytes.Equal(line, []byte("#\n")), bytes.Equal(line, []byte("#+\n")):
				yml.WriteByte('\n')
			default:
				csv.Write(line)
			}
		}
		dir := t.TempDir()
		hp, dp := filepath.Join(dir, "s.yaml"), filepath.Join(dir, "s.csv")
		os.WriteFile(hp, yml.Bytes(), 0o644)
		os.WriteFile(dp, csv.Bytes(), 0o644)
		tr, err := Load(Input{Path: dp}, Options{Warn: noWarn(t)})
		if err != nil {
			t.Fatalf("%s: Load: %v", mode, err)
		}
		if want := sampleRecords(mode); !reflect.DeepEqual(tr.Records, want) {
			t.Errorf("%s: records differ after the split", mode)
		}
		want := finalHeader(mode)
		want.XExt = nil
		if !reflect.DeepEqual(tr.Header, want) {
			t.Errorf("%s: header after the split:\ngot  %+v\nwant %+v", mode, tr.Header, want)
		}
	}
}
