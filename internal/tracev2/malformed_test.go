package tracev2

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// cols27 is the 27-column row of the current BLIS layout.
var cols27 = strings.Join(Columns{}.Names(), ",")

// goodRow is a valid 27-column row; fields are replaced by index to break it.
const goodRow = "1,c,t,standard,,0,,0,true,10,5,0,0,0,0,0,,0,0,100,110,150,300,6,ok,,stop"

func withField(i int, v string) string {
	f := strings.Split(goodRow, ",")
	f[i] = v
	return strings.Join(f, ",")
}

// TestMalformedData: every malformed data CSV gives one located error line.
func TestMalformedData(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"negative count", cols27 + "\n" + goodRow + "\n" + withField(10, "-3") + "\n",
			`trace.csv:3:11: column output_tokens: "-3" is negative`},
		{"non-numeric", cols27 + "\n" + withField(9, "12a") + "\n",
			`trace.csv:2:10: column input_tokens: "12a" is not an integer`},
		{"empty numeric", cols27 + "\n" + withField(5, "") + "\n",
			`trace.csv:2:6: column round_index: empty, want an integer`},
		{"out of range", cols27 + "\n" + withField(19, "99999999999999999999") + "\n",
			`trace.csv:2:20: column arrival_time_us: "99999999999999999999" is out of range`},
		{"token count at int64's top", cols27 + "\n" + withField(9, "9223372036854775807") + "\n",
			`trace.csv:2:10: column input_tokens: "9223372036854775807" exceeds 16777216, the largest token count a trace may hold`},
		{"token count above the bound", cols27 + "\n" + goodRow + "\n" + withField(10, "2000000000") + "\n",
			`trace.csv:3:11: column output_tokens: "2000000000" exceeds 16777216, the largest token count a trace may hold`},
		{"prompt above the bound", cols27 + "\n" + strings.Replace(withField(9, "16777000"), ",0,true,", ",1000,true,", 1) + "\n",
			`trace.csv:2:10: column input_tokens: prefix_length 1000 + input_tokens 16777000 exceed 16777216, the largest prompt a trace may hold`},
		{"too many hash ids", cols27 + ",ext_hash_ids\n" + goodRow + "," + strings.Repeat("7 ", 32769) + "\n",
			`trace.csv:2:28: column ext_hash_ids: 32769 entries, more than 32768`},
		{"short row", cols27 + "\n" + "1,c,t,standard,,0,,0,true,10,5,0,0,0,0,0,,0,0,100\n",
			`trace.csv:2:21: column send_time_us: missing: the row has 20 fields, the column row 27`},
		{"extra fields", cols27 + "\n" + goodRow + ",x\n",
			`trace.csv:2:28: row: 28 fields, but the column row has 27`},
		{"bad boolean", cols27 + "\n" + withField(8, "yes") + "\n",
			`trace.csv:2:9: column streaming: "yes" is not a boolean`},
		{"reason ratio above 1", cols27 + "\n" + withField(15, "1.5") + "\n",
			`trace.csv:2:16: column reason_ratio: "1.5" is outside [0, 1]`},
		{"reason ratio NaN", cols27 + "\n" + withField(15, "NaN") + "\n",
			`trace.csv:2:16: column reason_ratio: "NaN" is outside [0, 1]`},
		{"deadline before arrival", cols27 + "\n" + withField(17, "50") + "\n",
			`trace.csv:2:18: column deadline_us: 50 is before arrival_time_us 100`},
		{"mixed epoch and offset", cols27 + "\n" + withField(20, "1772359200000110") + "\n" + goodRow + "\n",
			`trace.csv:3:21: column send_time_us: 110 is an offset, but earlier rows (from line 2) hold Unix-epoch times`},
		{"epoch chunks without epoch send", cols27 + "\n" + withField(21, "1772359200000150") + "\n",
			`trace.csv:2:22: column first_chunk_time_us: holds Unix-epoch times while arrival_time_us and send_time_us hold offsets; the time origin cannot be estimated`},
		{"bare quote", cols27 + "\n" + withField(1, `a"b`) + "\n",
			`trace.csv:2:4: csv syntax: bare " in unquoted field`},
		{"text after closing quote", cols27 + "\n" + withField(1, `"ab"x`) + "\n",
			`trace.csv:2:7: csv syntax: extraneous or missing " in quoted field`},
		{"quote never closed", cols27 + "\n" + goodRow + "\n" + withField(25, `"never`) + "\nmore\n",
			`trace.csv:3:68: csv syntax: extraneous or missing " in quoted field (the quoted field is never closed)`},
		{"value error in a multi-line row reports its start", cols27 + "\n" + withField(25, "\"two\nlines\"") + "\n" + withField(1, "\"x\ny\"") + "\n" + withField(0, "-1") + "\n",
			`trace.csv:6:1: column request_id: "-1" is negative`},
		{"duplicated column", strings.Replace(cols27, "model", "status", 1) + "\n",
			`trace.csv:1:25: column status: duplicated (also field 17)`},
		{"missing required column", strings.Replace(cols27, "num_chunks,", "", 1) + "\n",
			`trace.csv:1:1: column num_chunks: missing from the column row`},
		{"comment line in a data CSV", cols27 + "\n" + goodRow + "\n# note\n",
			`trace.csv:3:1: row: a line starting with # is allowed only in a single stream's header and trailer`},
		{"empty", "", `trace.csv:1:1: csv: no column row: the data is empty`},
		{"binary garbage", "\x00\x01\xff\xfe,\x80\n\x02\x03\n",
			`trace.csv:1:1: column request_id: missing from the column row`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.data), "trace.csv", Options{})
			if err == nil {
				err = readErr(r)
			}
			if err == nil {
				t.Fatalf("got no error, want %s", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.ExitCode() != 2 {
				t.Errorf("error %T is not an *Error with exit code 2", err)
			}
			// The split-only path gives the same message.
			if r, err := NewReader(strings.NewReader(tc.data), "trace.csv", Options{}); err == nil {
				r.slowOnly = true
				if err := readErr(r); err == nil || err.Error() != tc.want {
					t.Errorf("split path: got %v, want %s", err, tc.want)
				}
			}
		})
	}
}

// TestMalformedOpen covers headers, detection and the single stream.
func TestMalformedOpen(t *testing.T) {
	const hdr = "# trace_version: 3\n# time_unit: us\n# mode: generated\n# warm_up_requests: 0\n"
	tests := []struct {
		name, data string
		strict     bool
		want       string
	}{
		{"empty file", "", false, `<stdin>:1:1: trace: empty input`},
		{"blank lines only", "\n  \n\r\n", false, `<stdin>:4:1: trace: empty input`},
		{"binary garbage", "\x00\x01\x02\xff\xfe garbage", false, `<stdin>:1:1: yaml syntax: control characters are not allowed`},
		{"header that is not a mapping", "just some words\n", false, `<stdin>:1:1: header: want a YAML mapping of keys, got the value "just some words"`},
		{"missing trace_version in YAML", "time_unit: us\nmode: real\n", false, `<stdin>:1:1: key trace_version: missing`},
		{"unknown key in strict mode", "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\nserver:\n    flavour: x\n", true,
			`<stdin>:6:5: key server.flavour: unknown key`},
		{"type error", "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\nserver:\n    tensor_parallel: two\n", false,
			`<stdin>:6:22: key server.tensor_parallel: "two" is not an integer`},
		{"bad time unit", "trace_version: 3\ntime_unit: ms\n", false, `<stdin>:2:12: key time_unit: "ms" is not us, µs or microseconds`},
		{"old version", "trace_version: 1\ntime_unit: us\n", false, `<stdin>:1:16: key trace_version: version 1 is not supported (readers accept 2 and 3)`},
		{"bad session growth", "trace_version: 3\ntime_unit: us\nmode: run\nsession_context_growth: grow\n", false,
			`<stdin>:4:25: key session_context_growth: "grow" is not "" or accumulate`},
		{"fractional seed", "trace_version: 3\ntime_unit: us\nmode: real\nworkload_seed: 4.2\n", false,
			`<stdin>:4:16: key workload_seed: "4.2" is not an integer`},
		{"negative rtt", "trace_version: 3\ntime_unit: us\nmode: real\nnetwork:\n  measured_rtt_ms: -1\n", false,
			`<stdin>:5:20: key network.measured_rtt_ms: -1 is negative`},
		{"negative server value", hdr + "# server:\n#     max_num_seqs: -4\n" + cols27 + "\n", false,
			`<stdin>:6:21: key server.max_num_seqs: -4 is negative`},
		{"negative warm-up", "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: -1\n", false,
			`<stdin>:4:19: key warm_up_requests: -1 is negative`},
		{"yaml syntax in a single stream", hdr + "# server: [a\n" + cols27 + "\n", false,
			`<stdin>:5:3: yaml syntax: did not find expected ',' or ']'`},
		{"type error in a single stream", hdr + "# server:\n#     block_size: big\n" + cols27 + "\n", false,
			`<stdin>:6:19: key server.block_size: "big" is not an integer`},
		{"bad header line", hdr + "#server: x\n" + cols27 + "\n", false,
			`<stdin>:5:2: header: a header line must start with "# " (or be "#" alone)`},
		{"value error counts header lines", hdr + cols27 + "\n" + withField(10, "-3") + "\n", false,
			`<stdin>:6:11: column output_tokens: "-3" is negative`},
		{"stray comment after the column row", hdr + cols27 + "\n" + goodRow + "\n# note\n", false,
			`<stdin>:7:1: row: a line starting with # after the column row must be a "#+ " trailer line`},
		{"data after the trailer", hdr + cols27 + "\n#+ x_ext:\n#+     interrupted: true\n" + goodRow + "\n", false,
			`<stdin>:8:1: row: data row after the #+ trailer`},
		{"trailer key also in header", hdr + cols27 + "\n" + goodRow + "\n#+ mode: real\n", false,
			`<stdin>:7:4: key mode: present in both the header (line 3) and the trailer`},
		{"trailer type error", hdr + cols27 + "\n#+ x_ext:\n#+     interrupted: maybe\n", false,
			`<stdin>:7:21: key x_ext.interrupted: "maybe" is not a boolean`},
		{"unknown trailer key in strict mode", hdr + cols27 + "\n#+ extra: 1\n", true,
			`<stdin>:6:4: key extra: unknown key`},
		{"header with no data", hdr, false, `<stdin>:5:1: csv: no column row: the data is empty`},
		{"YAML header on stdin", "trace_version: 3\ntime_unit: us\n", false, `<stdin>: is a header YAML; give its data with --trace-data`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _, err := Open(stdinInput(tc.data), Options{Strict: tc.strict})
			if err == nil {
				err = readErr(r)
			}
			if err == nil {
				t.Fatalf("got no error, want %s", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.ExitCode() != 2 {
				t.Errorf("error %T is not an *Error with exit code 2", err)
			}
		})
	}
}

// TestErrorsAreBounded: an input that is one long value (a foreign CSV read
// as a header, a long message) never gives an error line quoting all of it.
func TestErrorsAreBounded(t *testing.T) {
	long := "TIMESTAMP,ContextTokens,GeneratedTokens\n" + strings.Repeat("2023-11-16 18:15:46.6805900,374,44\n", 20000)
	_, _, err := Open(Input{Path: "-", Stdin: strings.NewReader(long)}, Options{})
	if err == nil {
		t.Fatal("a CSV of another format was read as a trace")
	}
	if msg := err.Error(); len(msg) > 200 || strings.Contains(msg, "\n") || !strings.Contains(msg, "<stdin>:1:1") {
		t.Errorf("error is %d bytes, want one located line under 200: %.300q", len(msg), msg)
	}
	e := &Error{File: "f", Line: 1, Column: 1, Msg: strings.Repeat("é", 1000)}
	if got := e.Error(); len(got) > maxMsg+20 || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("Error() = %d bytes (valid UTF-8 %v), want at most %d ending in …", len(got), utf8.ValidString(got), maxMsg+20)
	}
}
