package tracev2

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReaderWarnings(t *testing.T) {
	tests := []struct {
		name, data string
		mode       string
		want       []string
	}{
		{"unknown column", strings.Replace(cols27, "model", "flavour", 1) + "\n" + goodRow + "\n", "",
			[]string{`trace.csv:1:17: column "flavour": unknown column, ignored`}},
		{"trailing empty fields", cols27 + "\n" + goodRow + ",,\n", "",
			[]string{`trace.csv:2:28: row: 2 trailing empty fields ignored`}},
		{"first chunk before send", cols27 + "\n" + withField(21, "105") + "\n", "",
			[]string{`trace.csv:2:22: column first_chunk_time_us: 105 is before send_time_us 110`}},
		{"last chunk before first", cols27 + "\n" + withField(22, "140") + "\n", "",
			[]string{`trace.csv:2:23: column last_chunk_time_us: 140 is before first_chunk_time_us 150`}},
		{"ok without first chunk", cols27 + "\n" + withField(21, "0") + "\n", "",
			[]string{`trace.csv:2:22: column first_chunk_time_us: 0 (never) in a row with status ok`}},
		{"send before arrival, simulated", cols27 + "\n" + withField(20, "90") + "\n", ModeGenerated,
			[]string{`trace.csv:2:21: column send_time_us: 90 is before arrival_time_us 100`}},
		{"send before arrival, real", cols27 + "\n" + withField(20, "90") + "\n", ModeReal, nil},
		{"negative send time", cols27 + "\n" + withField(20, "-1") + "\n", ModeReal,
			[]string{`trace.csv:2:21: column send_time_us: -1 is negative: not an instant of the run (recorded times are ≥ 1, 0 is never)`}},
		{"negative chunk time", cols27 + "\n" + withField(22, "-5") + "\n", ModeReal,
			[]string{`trace.csv:2:23: column last_chunk_time_us: -5 is negative: not an instant of the run (recorded times are ≥ 1, 0 is never)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			h := &Header{TraceVersion: 3, TimeUnit: "us", Mode: tc.mode}
			br, _ := newInput(strings.NewReader(tc.data), "trace.csv")
			r, err := newReader(br, "trace.csv", 0, h, nil, Options{Warn: collect(&got)})
			if err != nil {
				t.Fatal(err)
			}
			if recs := readAllRecords(t, r); len(recs) != 1 {
				t.Errorf("read %d records, want 1 (warnings keep the row)", len(recs))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("warnings:\ngot  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestLenient(t *testing.T) {
	var b strings.Builder
	b.WriteString(cols27 + "\n")
	for i := 0; i < 30; i++ {
		b.WriteString(withField(10, "-1") + "\n") // bad
		b.WriteString(goodRow + "\n")             // good
	}
	b.WriteString(withField(1, `a"b`) + "\n")
	var warns []string
	r, err := NewReader(strings.NewReader(b.String()), "t.csv", Options{Lenient: true, Warn: collect(&warns)})
	if err != nil {
		t.Fatal(err)
	}
	recs := readAllRecords(t, r)
	if len(recs) != 30 {
		t.Errorf("read %d rows, want 30", len(recs))
	}
	if r.Skipped() != 31 {
		t.Errorf("Skipped = %d, want 31", r.Skipped())
	}
	if len(warns) != 21 {
		t.Fatalf("got %d warnings, want 20 + a count: %q", len(warns), warns)
	}
	if want := `t.csv:2:11: column output_tokens: "-1" is negative (row skipped)`; warns[0] != want {
		t.Errorf("first warning: got %q, want %q", warns[0], want)
	}
	if want := `t.csv: skipped 31 malformed rows (lenient)`; warns[20] != want {
		t.Errorf("last warning: got %q, want %q", warns[20], want)
	}
}

func TestBOMCRLFAndGzip(t *testing.T) {
	plain := cols27 + "\r\n" + goodRow + "\r\n" + withField(25, "\"multi\r\nline\"") + "\r\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("\xEF\xBB\xBF" + plain))
	zw.Close()
	for name, data := range map[string]string{"bom+crlf": "\xEF\xBB\xBF" + plain, "gzip": gz.String()} {
		r, err := NewReader(strings.NewReader(data), "t.csv", Options{Warn: noWarn(t)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		recs := readAllRecords(t, r)
		if len(recs) != 2 || recs[0].FinishReason != "stop" || recs[1].ErrorMessage != "multi\nline" {
			t.Errorf("%s: got %+v", name, recs)
		}
	}
}

func TestOpenDetection(t *testing.T) {
	dir := t.TempDir()
	csvText := cols27 + "\n" + goodRow + "\n"
	hdrText := "trace_version: 3\ntime_unit: us\nmode: generated\nwarm_up_requests: 0\n"
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.csv", csvText)
	write("a.yml", hdrText)
	lone := write("lone.csv", csvText)
	orphan := write("orphan.yaml", "# a comment first\n"+hdrText)
	stream := write("s.trace", "\n\n# trace_version: 3\n# mode: replayed\n"+csvText)

	t.Run("data CSV finds the .yml sibling", func(t *testing.T) {
		_, h, err := Open(Input{Path: a}, Options{Warn: noWarn(t)})
		if err != nil || h.Mode != ModeGenerated {
			t.Fatalf("got header %+v, err %v", h, err)
		}
	})
	t.Run("data CSV without header gets the default and a warning", func(t *testing.T) {
		var warns []string
		r, h, err := Open(Input{Path: lone}, Options{Warn: collect(&warns)})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if !reflect.DeepEqual(h, DefaultHeader()) {
			t.Errorf("header: got %+v, want the default", h)
		}
		base := strings.TrimSuffix(lone, ".csv")
		want := []string{fmt.Sprintf("%s: no header file (tried %s.yaml, %s.yml); using a default header: trace_version 3, warm_up_requests 0", lone, base, base)}
		if !reflect.DeepEqual(warns, want) {
			t.Errorf("warnings:\ngot  %q\nwant %q", warns, want)
		}
	})
	t.Run("header YAML opening with a comment, data missing", func(t *testing.T) {
		_, _, err := Open(Input{Path: orphan}, Options{})
		want := orphan + ": data file " + filepath.Join(dir, "orphan.csv") + " not found"
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})
	t.Run("single stream after blank lines", func(t *testing.T) {
		var warns []string
		r, h, err := Open(Input{Path: stream}, Options{Warn: collect(&warns)})
		if err != nil {
			t.Fatal(err)
		}
		recs := readAllRecords(t, r)
		if len(recs) != 1 || r.Line() != 6 || h.Mode != ModeReplayed {
			t.Errorf("got %d records, line %d, mode %q; want 1, 6, replayed", len(recs), r.Line(), h.Mode)
		}
		want := []string{stream + ":3:3: key time_unit: missing, assuming us"}
		if !reflect.DeepEqual(warns, want) {
			t.Errorf("warnings:\ngot  %q\nwant %q", warns, want)
		}
	})
	t.Run("explicit header and data", func(t *testing.T) {
		_, h, err := Open(Input{HeaderPath: filepath.Join(dir, "a.yml"), DataPath: lone}, Options{Warn: noWarn(t)})
		if err != nil || h.Mode != ModeGenerated {
			t.Fatalf("got header %+v, err %v", h, err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, _, err := Open(Input{Path: filepath.Join(dir, "nope.csv")}, Options{})
		want := filepath.Join(dir, "nope.csv") + ": cannot open: no such file or directory"
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})
	t.Run("DetectForm", func(t *testing.T) {
		for text, want := range map[string]Form{"# trace_version: 3\n": FormSingle, csvText: FormTwoFile, hdrText: FormTwoFile} {
			got, rest, err := DetectForm(strings.NewReader(text), "x")
			if err != nil || got != want {
				t.Errorf("DetectForm(%q) = %v, %v; want %v", text, got, err, want)
			}
			if b := new(bytes.Buffer); rest != nil {
				b.ReadFrom(rest)
				if b.String() != text {
					t.Errorf("DetectForm consumed input: rest %q", b.String())
				}
			}
		}
	})
}

func TestHeaderWarnings(t *testing.T) {
	text := "trace_version: 4\ntime_unit: µs\nmode: shadow\nwarm_up_requests: 0\nflavour: x\nserver:\n    model: m\n    color: red\nx_ext:\n    loop: spiral\n"
	var got []string
	h, err := ReadHeader(strings.NewReader(text), "h.yaml", Options{Warn: collect(&got)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`h.yaml:5:1: key flavour: unknown key, ignored`,
		`h.yaml:8:5: key server.color: unknown key, ignored`,
		`h.yaml:1:16: key trace_version: version 4 is newer than 3; reading it as 3`,
		`h.yaml:3:7: key mode: "shadow" is not real, generated or replayed`,
		`h.yaml:10:11: key x_ext.loop: "spiral" is not open or closed`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\ngot  %q\nwant %q", got, want)
	}
	if h.TraceVersion != 4 || h.Server.Model != "m" || h.TimeUnit != "µs" {
		t.Errorf("header: %+v", h)
	}
}

// TestHeaderEncoding pins the writer's layout against the docs/tracev2.md §10 example.
func TestHeaderEncoding(t *testing.T) {
	h := &Header{
		TraceVersion: 3, TimeUnit: "us", CreatedAt: "2026-03-01T10:00:00.000000Z", Mode: ModeReal,
		WarmUpRequests: 2, WorkloadSeed: i64(7), WorkloadSpec: "preset:chatbot",
		Server:            &Server{Type: "vllm", Model: "acme/chat-8b"},
		Network:           &Network{MeasuredRTTMs: 0.4},
		GoodputSLOTargets: map[string]SLOTargets{"critical": {TTFTMs: 250, E2EMs: 2000}},
	}
	want := `trace_version: 3
time_unit: us
created_at: "2026-03-01T10:00:00.000000Z"
mode: real
warm_up_requests: 2
workload_seed: 7
workload_spec: preset:chatbot
server:
    type: vllm
    model: acme/chat-8b
network:
    measured_rtt_ms: 0.4
goodput_slo_targets:
    critical:
        ttft_ms: 250
        e2e_ms: 2000
`
	var b bytes.Buffer
	if err := EncodeHeader(&b, h); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// BLIS writes network: {} for RTT 0; we keep a present-but-zero network.
	b.Reset()
	EncodeHeader(&b, &Header{TraceVersion: 3, TimeUnit: "us", Mode: ModeReal, Network: &Network{}})
	if want := "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\nnetwork: {}\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := EncodeHeader(&b, &Header{TraceVersion: 3, TimeUnit: "s"}); err == nil {
		t.Error("EncodeHeader accepted time_unit s")
	}
	bad := &Header{TraceVersion: 3, TimeUnit: "us", KVOffload: &KVOffload{SecondaryTiers: []OffloadTier{{BaseLatency: f64(math.Inf(1))}}}}
	want = "trace header: kv_offload.secondary_tiers[0].base_latency is not a finite number"
	if err := EncodeHeader(&b, bad); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestTrailerCannotChangeAKey(t *testing.T) {
	var b bytes.Buffer
	tw, err := NewStreamWriter(&b, sampleHeader(ModeGenerated), Columns{})
	if err != nil {
		t.Fatal(err)
	}
	final := sampleHeader(ModeGenerated)
	final.WarmUpRequests = 5
	err = tw.Close(final)
	want := "trace trailer: key warm_up_requests changed after the header was written; a single stream can only add keys at the end"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestRowTooLong(t *testing.T) {
	long := withField(25, strings.Repeat("x", maxRowBytes+10))
	data := cols27 + "\n" + goodRow + "\n" + long + "\n" + goodRow + "\n"
	r, err := NewReader(strings.NewReader(data), "t.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = readErr(r)
	if want := "t.csv:3:1: row: row is longer than 1 MiB"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	var warns []string
	r, _ = NewReader(strings.NewReader(data), "t.csv", Options{Lenient: true, Warn: collect(&warns)})
	recs := readAllRecords(t, r)
	if len(recs) != 2 || r.Line() != 4 || r.Skipped() != 1 {
		t.Errorf("lenient: %d rows, last on line %d, %d skipped; want 2, 4, 1", len(recs), r.Line(), r.Skipped())
	}
	// A quoted row growing past the limit over many lines.
	quoted := withField(25, "\""+strings.Repeat("y\n", maxRowBytes/2+10)+"\"")
	r, _ = NewReader(strings.NewReader(cols27+"\n"+quoted+"\n"), "t.csv", Options{})
	if err := readErr(r); err == nil || err.Error() != "t.csv:2:1: row: row is longer than 1 MiB" {
		t.Errorf("quoted: got %v", err)
	}
}

func TestStdinOnlyOnce(t *testing.T) {
	_, _, err := Open(Input{Path: "-", HeaderPath: "-", Stdin: strings.NewReader("")}, Options{})
	if want := "<stdin>: stdin can be read only once: give one of the trace, header and data as -"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
