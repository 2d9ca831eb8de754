package tracev2

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// simScanSeeds are inputs on which the scanner and encoding/json must agree:
// the subset the scanner decodes itself, and every kind of input it hands
// over.
var simScanSeeds = []string{
	`[]`,
	" [ ] \n",
	`[{"request_id": 1, "ttft_us": 2.5, "e2e_us": 3e2, "input_tokens": 4, "output_tokens": 5, "slo_class": "critical", "model": "m", "itl_mean_us": 1.25, "arrival_us": -7, "scheduling_delay_us": 0.1, "num_preemptions": 2, "cached_input_tokens": 16, "instance": "instance_0"}]`,
	`[{"request_id": 2, "ttft_us": 9, "e2e_us": 30, "input_tokens": 4, "output_tokens": 5, "wait_in_flight_us": 1.5, "step_in_flight_us": 12}]`,
	"{\"request_id\":1}\n{\"request_id\":2}\n",
	"{\"request_id\":1}{\"request_id\":2}",
	`{"request_id": 1, "extra": {"a": [1, 2, {"b": null}], "c": "x\"y"}, "flag": true, "f": false}`,
	`{"request_id": 1, "slo_class": "caf\u00e9", "model": "a\/b\n"}`,
	"{\"slo_class\": \"caf\xc3\xa9\", \"model\": \"bad\xff\"}",
	`{"slo_class": "\ud800 lone"}`,
	`{"Request_ID": 5}`,
	`{"request_id": 5, "request_id": 6}`,
	`{"request_id": null, "slo_class": null, "ttft_us": null}`,
	`{"ttft_us": -0, "e2e_us": -0.0, "itl_mean_us": 1e400}`,
	`{"ttft_us": 12345678901234567, "e2e_us": 1.7976931348623157e308, "arrival_us": 9223372036854775807}`,
	`{"request_id": 9223372036854775808}`,
	`{"request_id": -9223372036854775808}`,
	`{"request_id": 1.0}`,
	`{"request_id": 1e2}`,
	`{"request_id": 01}`,
	`{"request_id": "1"}`,
	`{"request_id": true}`,
	`{"slo_class": 5}`,
	`{"request_id": 1,}`,
	`{"request_id": 1 "ttft_us": 2}`,
	`[{"request_id": 1}, ]`,
	`[{"request_id": 1} {"request_id": 2}]`,
	`[{"request_id": 1}] x`,
	`[{"request_id": 1}]]`,
	`[{"request_id": 1}`,
	`[{"request_id": 1},`,
	`[{"request_id": 1}, 2]`,
	`[null, {"request_id": 1}]`,
	`{"request_id": 1}, {"request_id": 2}`,
	"{\"request_id\": 1}\nnull\n",
	"{\"request_id\": 1}\n[]\n",
	"[\n  {\"request_id\": 1},\n  {\"request_id\": \"x\"}\n]",
	"{\"request_id\": 1}\n{\"request_id\": 2,,}\n",
	"{\"request_id\": 1}\n{\"model\": \"tab\there\"}\n",
	`{"a": "\x"}`,
	`{"a": "\u12"}`,
	`{"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	"{\"request_id\": 1}\n{\"request_id\": 2, \"ttft_us\": 1.5e-400}\n",
	`{"ttft_us": 0.1e1, "e2e_us": 1E+2, "itl_mean_us": -1.5e-3}`,
	"\xef\xbb\xbf[{\"request_id\": 3}]",
}

// simComplete is an object's required fields after its request_id.
const simComplete = `, "ttft_us": 1, "e2e_us": 2, "input_tokens": 3, "output_tokens": 4}`

// simSeeds are simScanSeeds, and the same with every {"request_id": N}
// completed by the other required fields: the first set checks that both
// paths refuse an incomplete object alike, the second reaches what lies
// after it.
func simSeeds() []string {
	seeds := append([]string(nil), simScanSeeds...)
	for _, s := range simScanSeeds {
		c := s
		for _, id := range []string{"1", "2", "3", "5"} {
			c = strings.ReplaceAll(c, `"request_id": `+id+`}`, `"request_id": `+id+simComplete)
			c = strings.ReplaceAll(c, `"request_id":`+id+`}`, `"request_id":`+id+simComplete)
		}
		if c != s {
			seeds = append(seeds, c)
		}
	}
	return seeds
}

func FuzzSimResults(f *testing.F) {
	for _, s := range simSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSimAgree(t, data)
		checkSimRoundTrip(t, data)
	})
}

// checkSimRoundTrip: a failure is one located line with exit code 2; what
// decodes is valid (checkSimResult), and writes and reads back to the same
// results, in request_id order, in both layouts.
func checkSimRoundTrip(t *testing.T, data []byte) {
	t.Helper()
	got, err := ReadSimResults(bytes.NewReader(data), "s.json")
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.ExitCode() != 2 || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("error %q (%T): want one located line with exit code 2", err, err)
		}
		return
	}
	for i := range got {
		if err := checkSimResult(&got[i], "s.json", 1, 1); err != nil {
			t.Fatalf("result %d was accepted but is invalid: %v", i, err)
		}
	}
	sorted := slices.Clone(got)
	slices.SortStableFunc(sorted, func(a, b SimResult) int { return cmp.Compare(a.RequestID, b.RequestID) })
	for _, format := range []SimResultFormat{SimResultArray, SimResultJSONL} {
		if format == SimResultJSONL && len(got) == 0 {
			continue // no lines: empty input, which the reader refuses
		}
		var buf bytes.Buffer
		if err := WriteSimResults(&buf, got, format); err != nil {
			t.Fatalf("write %d results: %v", len(got), err)
		}
		back, err := ReadSimResults(&buf, "back.json")
		if err != nil {
			t.Fatalf("read back: %v\n%s", err, buf.String())
		}
		if !sameSimResults(back, sorted) {
			t.Fatalf("the round trip changed the results:\n got %+v\nwant %+v", back, sorted)
		}
	}
}

// TestSimScanAgrees runs the seeds, whole and one byte per read (every
// refill point), and with a read error part way.
func TestSimScanAgrees(t *testing.T) {
	for _, s := range simSeeds() {
		checkSimAgree(t, []byte(s))
	}
}

// checkSimAgree requires the scanner path and the encoding/json path to give
// the same results (bit for bit) and the same error text, for a reader giving
// everything at once, one byte at a time, and failing after half the input.
func checkSimAgree(t *testing.T, data []byte) {
	t.Helper()
	readers := []struct {
		name string
		mk   func() io.Reader
	}{
		{"whole", func() io.Reader { return bytes.NewReader(data) }},
		{"bytewise", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) }},
		{"failing", func() io.Reader {
			return io.MultiReader(bytes.NewReader(data[:len(data)/2]), errReader{errors.New("disk on fire")})
		}},
	}
	for _, rd := range readers {
		got, gerr := readSimResults(rd.mk(), "s.json", false)
		want, werr := readSimResults(rd.mk(), "s.json", true)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%s %q:\nscanner error %v\njson    error %v", rd.name, data, gerr, werr)
		}
		if !sameSimResults(got, want) {
			t.Fatalf("%s %q:\nscanner %+v\njson    %+v", rd.name, data, got, want)
		}
	}
}

func sameSimResults(a, b []SimResult) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		for _, p := range [][2]float64{{x.TTFTUs, y.TTFTUs}, {x.E2EUs, y.E2EUs}, {x.ITLMeanUs, y.ITLMeanUs},
			{x.SchedulingDelayUs, y.SchedulingDelayUs}} {
			if math.Float64bits(p[0]) != math.Float64bits(p[1]) {
				return false
			}
		}
		x.TTFTUs, x.E2EUs, x.ITLMeanUs, x.SchedulingDelayUs = 0, 0, 0, 0
		y.TTFTUs, y.E2EUs, y.ITLMeanUs, y.SchedulingDelayUs = 0, 0, 0, 0
		if x != y {
			return false
		}
	}
	return true
}

// TestSimScanLargeObject covers an object larger than the scanner's window
// (the window grows) and many objects across window refills.
func TestSimScanLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 3000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"request_id": %d, "ttft_us": %d.5, "e2e_us": %d, "input_tokens": 3, "output_tokens": 4, "slo_class": "c%d"`, i, i*7, i*8+1, i%3)
		if i == 1500 {
			fmt.Fprintf(&b, `, "blob": "%s"`, strings.Repeat("x", 3*simWindow))
		}
		b.WriteString("}")
	}
	b.WriteString("]\n")
	got, err := ReadSimResults(strings.NewReader(b.String()), "big.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3000 {
		t.Fatalf("got %d results, want 3000", len(got))
	}
	for _, i := range []int{0, 1499, 1500, 1501, 2999} {
		want := SimResult{RequestID: int64(i), TTFTUs: float64(i*7) + 0.5, E2EUs: float64(i*8 + 1), InputTokens: 3, OutputTokens: 4,
			SLOClass: fmt.Sprintf("c%d", i%3)}
		if got[i] != want {
			t.Errorf("result %d: got %+v, want %+v", i, got[i], want)
		}
	}
	checkSimAgree(t, []byte(b.String()))
}

// TestSimScanHandoffPosition checks errors located after the scanner has
// decoded objects and moved its window: the line and column are those of the
// whole input.
func TestSimScanHandoffPosition(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "{\"request_id\": %d, \"model\": \"é\"%s\n", i, simComplete)
	}
	tests := []struct{ name, tail, want string }{
		{"syntax", `{"request_id": 1 x}`, `s.json:20001:18: json: invalid character 'x' after object key:value pair`},
		{"type", `{"model": "é", "request_id": "1"}`, `s.json:20001:32: json: field request_id: cannot read a JSON string as int64`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSimResults(strings.NewReader(b.String()+tc.tail), "s.json")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
