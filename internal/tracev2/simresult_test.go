package tracev2

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestSimResults(t *testing.T) {
	results := []SimResult{
		{RequestID: 9, TTFTUs: 100.5, E2EUs: 300, InputTokens: 10, OutputTokens: 1, ArrivalUs: 5},
		{RequestID: 2, TTFTUs: 38210, E2EUs: 202655, InputTokens: 166, OutputTokens: 24, SLOClass: "critical",
			ITLMeanUs: 7116, ArrivalUs: 125200, SchedulingDelayUs: 15563, CachedInputTokens: 64, Instance: "instance_0"},
	}
	var b bytes.Buffer
	if err := WriteSimResults(&b, results, SimResultArray); err != nil {
		t.Fatal(err)
	}
	golden(t, "simresults.json", b.Bytes())
	if results[0].RequestID != 9 {
		t.Error("WriteSimResults reordered the caller's slice")
	}
	// The docs/tracev2.md §10 object, byte for byte.
	want := `[
  {
    "request_id": 2,
    "ttft_us": 38210,
    "e2e_us": 202655,
    "input_tokens": 166,
    "output_tokens": 24,
    "slo_class": "critical",
    "itl_mean_us": 7116,
    "arrival_us": 125200,
    "scheduling_delay_us": 15563,
    "num_preemptions": 0,
    "cached_input_tokens": 64,
    "instance": "instance_0"
  },`
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("array output:\n%s\nwant prefix\n%s", b.String(), want)
	}
	sorted := []SimResult{results[1], results[0]}
	got, err := ReadSimResults(&b, "r.json")
	if err != nil || !reflect.DeepEqual(got, sorted) {
		t.Errorf("array read back %+v, %v", got, err)
	}
	b.Reset()
	if err := WriteSimResults(&b, results, SimResultJSONL); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 2 {
		t.Errorf("JSONL has %d lines, want 2", n)
	}
	got, err = ReadSimResults(strings.NewReader("  \n"+b.String()), "r.jsonl")
	if err != nil || !reflect.DeepEqual(got, sorted) {
		t.Errorf("JSONL read back %+v, %v", got, err)
	}
	b.Reset()
	WriteSimResults(&b, nil, SimResultArray)
	if b.String() != "[]\n" {
		t.Errorf("empty: got %q, want []", b.String())
	}
}

func TestSimResultsMalformed(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"empty", " \n", `r.json:1:1: json: empty input, want a JSON array or JSON Lines`},
		{"NUL bytes (/dev/zero)", "\x00\x00\x00", `r.json:1:1: json: want a JSON array ('[') or JSON Lines ('{'), got '\x00'`},
		{"not JSON", "\nhello", `r.json:2:1: json: want a JSON array ('[') or JSON Lines ('{'), got 'h'`},
		{"type error", "[\n  {\"request_id\": 1" + simComplete + ",\n  {\"request_id\": \"x\"}\n]", `r.json:3:20: json: field request_id: cannot read a JSON string as int64`},
		{"syntax error", "{\"request_id\": 1" + simComplete + "\n{\"request_id\": 2,,}\n", `r.json:2:18: json: invalid character ',' looking for beginning of object key string`},
		{"truncated", "[{\"request_id\": 1" + simComplete, `r.json:1:85: json: unexpected end of input`},
		{"missing field", "[\n  {\"request_id\": 1, \"ttft_us\": 5, \"e2e_us\": 9, \"input_tokens\": 3}\n]", `r.json:2:3: field output_tokens: missing or null`},
		{"null field", "{\"request_id\": 1, \"ttft_us\": null, \"e2e_us\": 9, \"input_tokens\": 3, \"output_tokens\": 1}", `r.json:1:1: field ttft_us: missing or null`},
		{"wrapper object", "{\"results\": [{\"request_id\": 1" + simComplete + "]}", `r.json:1:1: json: an object with none of the SimResult fields (request_id, ttft_us, e2e_us, input_tokens, output_tokens): want a JSON array of SimResults or JSON Lines, not a wrapper object`},
		{"negative ttft", "[{\"request_id\": 1, \"ttft_us\": -5, \"e2e_us\": 9, \"input_tokens\": 3, \"output_tokens\": 1}]", `r.json:1:2: field ttft_us: -5 is negative`},
		{"ttft after e2e", "{\"request_id\": 7" + simComplete + "\n{\"request_id\": 1, \"ttft_us\": 50, \"e2e_us\": 9, \"input_tokens\": 3, \"output_tokens\": 1}", `r.json:2:1: field ttft_us: 50 is after e2e_us 9: the first token cannot come after the last`},
		{"e2e beyond any run", "{\"request_id\": 1, \"ttft_us\": 5, \"e2e_us\": 9.2e19, \"input_tokens\": 3, \"output_tokens\": 1}", `r.json:1:1: field e2e_us: 9.2e+19 µs is beyond 10^15 µs (31.7 years)`},
		{"negative request id", "{\"request_id\": -1" + simComplete, `r.json:1:1: field request_id: -1 is negative`},
		{"huge token count", "{\"request_id\": 1, \"ttft_us\": 5, \"e2e_us\": 9, \"input_tokens\": 9000000000, \"output_tokens\": 1}", `r.json:1:1: field input_tokens: 9000000000 exceeds 16777216, the largest token count a trace may hold`},
		{"cached above input", "{\"request_id\": 1, \"ttft_us\": 5, \"e2e_us\": 9, \"input_tokens\": 3, \"output_tokens\": 1, \"cached_input_tokens\": 4}", `r.json:1:1: field cached_input_tokens: 4 exceeds input_tokens 3`},
		{"wait outlasts its step", "{\"request_id\": 1, \"ttft_us\": 5, \"e2e_us\": 9, \"input_tokens\": 3, \"output_tokens\": 1, \"wait_in_flight_us\": 40, \"step_in_flight_us\": 30}", `r.json:1:1: field wait_in_flight_us: 40 is longer than step_in_flight_us 30: a wait for the step in flight cannot outlast it`},
		{"negative step in flight", "{\"request_id\": 1, \"ttft_us\": 5, \"e2e_us\": 9, \"input_tokens\": 3, \"output_tokens\": 1, \"step_in_flight_us\": -3}", `r.json:1:1: field step_in_flight_us: -3 is negative`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSimResults(strings.NewReader(tc.data), "r.json")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
			if _, err := readSimResults(strings.NewReader(tc.data), "r.json", true); err == nil || err.Error() != tc.want {
				t.Errorf("encoding/json path: got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
