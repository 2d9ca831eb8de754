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
	// The spec §10 object, byte for byte.
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
		{"not JSON", "\nhello", `r.json:2:1: json: want a JSON array ('[') or JSON Lines ('{'), got 'h'`},
		{"type error", "[\n  {\"request_id\": 1},\n  {\"request_id\": \"x\"}\n]", `r.json:3:20: json: field request_id: cannot read a JSON string as int64`},
		{"syntax error", "{\"request_id\": 1}\n{\"request_id\": 2,,}\n", `r.json:2:18: json: invalid character ',' looking for beginning of object key string`},
		{"truncated", "[{\"request_id\": 1}", `r.json:1:19: json: unexpected end of input`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSimResults(strings.NewReader(tc.data), "r.json")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
