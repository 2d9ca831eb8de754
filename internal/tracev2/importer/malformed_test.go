package importer

import (
	"errors"
	"strings"
	"testing"
)

const azHead = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
const azRow = "2023-11-16 18:17:03.9799600,4808,10\n"

func TestMalformedInputs(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		file   string
		input  string
		opts   Options
		want   string
	}{
		// Azure CSV.
		{"azure empty file", FormatAzure, "t.csv", "", Options{},
			`t.csv:1:1: empty file, want a column row naming TIMESTAMP, ContextTokens, GeneratedTokens`},
		{"azure missing column", FormatAzure, "t.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:17:03,1\n", Options{},
			`t.csv:1:1: field GeneratedTokens: missing from the column row (have "TIMESTAMP,ContextTokens")`},
		{"azure duplicate column", FormatAzure, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n", Options{},
			`t.csv:1:4: field ContextTokens: column name appears twice in the column row`},
		{"azure negative count", FormatAzure, "t.csv", azHead + "2023-11-16 18:17:03.9799600,-3,10\n", Options{},
			`t.csv:2:2: field ContextTokens: "-3" is negative`},
		{"azure non-numeric count", FormatAzure, "t.csv", azHead + azRow + "2023-11-16 18:17:04,12,abc\n", Options{},
			`t.csv:3:3: field GeneratedTokens: "abc" is not an integer`},
		{"azure fractional count", FormatAzure, "t.csv", azHead + "2023-11-16 18:17:04,1.5,3\n", Options{},
			`t.csv:2:2: field ContextTokens: "1.5" is not an integer`},
		{"azure huge count", FormatAzure, "t.csv", azHead + "2023-11-16 18:17:04,99999999999999999999,3\n", Options{},
			`t.csv:2:2: field ContextTokens: "99999999999999999999" exceeds 16777216, the largest token count a trace may hold`},
		{"azure count above the bound", FormatAzure, "t.csv", azHead + "2023-11-16 18:17:04,2000000000,3\n", Options{},
			`t.csv:2:2: field ContextTokens: "2000000000" exceeds 16777216, the largest token count a trace may hold`},
		{"azure bad timestamp", FormatAzure, "t.csv", azHead + "yesterday,1,2\n", Options{},
			`t.csv:2:1: field TIMESTAMP: "yesterday" is not a timestamp (want YYYY-MM-DD hh:mm:ss[.fraction][zone])`},
		{"azure row before the first", FormatAzure, "t.csv", azHead + azRow + "2023-11-16 18:17:02.5,1,2\n", Options{},
			`t.csv:3:1: field TIMESTAMP: "2023-11-16 18:17:02.5" is earlier than the first row's "2023-11-16 18:17:03.9799600" (arrivals are offsets from the first row; sort the file by TIMESTAMP)`},
		{"azure row 31.7 years after the first", FormatAzure, "t.csv", azHead + "2000-01-01 00:00:00,1,2\n2031-09-10 00:00:00,1,2\n", Options{},
			`t.csv:3:1: field TIMESTAMP: "2031-09-10 00:00:00" is too far after the first row's "2000-01-01 00:00:00": the offset reaches 10^15 µs (31.7 years), which TraceV2 reads as a Unix-epoch time`},
		{"azure short row", FormatAzure, "t.csv", azHead + "2023-11-16 18:17:03.9799600,5\n", Options{},
			`t.csv:2:3: field GeneratedTokens: missing (row has 2 fields, the column row has 3)`},
		{"azure long row", FormatAzure, "t.csv", azHead + "2023-11-16 18:17:03.9799600,5,6,7\n", Options{},
			`t.csv:2:4: row has 4 fields, the column row has 3`},
		{"azure bare quote", FormatAzure, "t.csv", azHead + "2023-11-16 18:17:03.9799600,5\"x,6\n", Options{},
			`t.csv:2:30: csv syntax: bare " in non-quoted-field`},
		{"azure blank lines keep physical line numbers", FormatAzure, "t.csv", azHead + "\n" + azRow + "\n\n2023-11-16 18:17:04,1,x\n", Options{},
			`t.csv:6:3: field GeneratedTokens: "x" is not an integer`},
		{"azure quoted field spanning lines reports the row's first line", FormatAzure, "t.csv",
			azHead + azRow + "\"2023-11-16\n18:17:04\",1,2\n", Options{},
			`t.csv:3:1: field TIMESTAMP: "2023-11-16\n18:17:04" is not a timestamp (want YYYY-MM-DD hh:mm:ss[.fraction][zone])`},
		{"azure binary garbage", FormatAzure, "<stdin>", "\x00\x01\xfe\xff,\x7f\n\x02", Options{},
			"<stdin>:1:1: field TIMESTAMP: missing from the column row (have \"\\x00\\x01\ufffd\ufffd,\\x7f\")"}, // name normalising (strings.Map) turns invalid UTF-8 into U+FFFD

		// Mooncake JSONL.
		{"mooncake negative timestamp", FormatMooncake, "m.jsonl", `{"timestamp": -5, "input_length": 1, "output_length": 1}`, Options{},
			`m.jsonl:1:15: field timestamp: -5 is negative`},
		{"mooncake epoch timestamp", FormatMooncake, "m.jsonl", `{"timestamp": 1700000000000, "input_length": 1, "output_length": 1}`, Options{},
			`m.jsonl:1:15: field timestamp: 1700000000000 reaches 10^15 µs (31.7 years), which TraceV2 reads as a Unix-epoch time`},
		{"mooncake string length", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": "abc", "output_length": 1}`, Options{},
			`m.jsonl:1:34: field input_length: "abc" is not an integer`},
		{"mooncake fractional length", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1.5}`, Options{},
			`m.jsonl:1:54: field output_length: 1.5 is not a whole number`},
		{"mooncake huge length", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 9223372036854775807, "output_length": 1}`, Options{},
			`m.jsonl:1:34: field input_length: 9223372036854775807 exceeds 16777216, the largest token count a trace may hold`},
		{"mooncake too many hash ids", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [` +
			strings.Repeat("7, ", 32768) + `7]}`, Options{},
			`m.jsonl:1:98374: field hash_ids[32768]: more than 32768 entries`},
		{"vidur column name forging a line", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens,\"x\r\nlevel=ERROR msg=spoofed\",\"x\r\nlevel=ERROR msg=spoofed\"\n0,1,2,3,4\n", Options{},
			`v.csv:1:5: field "x\nlevel=ERROR msg=spoofed": column name appears twice in the column row`},
		{"vidur too many hash ids", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens,block_hash_ids\n0,1,2,\"[" +
			strings.Repeat("7,", 32768) + "7]\"\n", Options{},
			`v.csv:2:4: field block_hash_ids: 32769 entries, more than 32768`},
		{"mooncake missing field", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1}`, Options{},
			`m.jsonl:1:35: field output_length: missing`},
		{"mooncake bad hash id", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [7, "x"]}`, Options{},
			`m.jsonl:1:73: field hash_ids[1]: "x" is not an integer`},
		{"mooncake hash ids not a list", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": 7}`, Options{},
			`m.jsonl:1:69: field hash_ids: 7 is not a list of integers`},
		{"mooncake syntax error", FormatMooncake, "m.jsonl", `{"timestamp": 0,, "input_length": 1}`, Options{},
			`m.jsonl:1:17: json syntax: invalid character ',' looking for beginning of object key string`},
		{"mooncake truncated line", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1`, Options{},
			`m.jsonl:1:35: json syntax: unexpected end of input`},
		{"mooncake not an object", FormatMooncake, "m.jsonl", "[1, 2]\n", Options{},
			`m.jsonl:1:1: json syntax: want an object per line, got a list`},
		{"mooncake two objects on a line", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1} {}`, Options{},
			`m.jsonl:1:57: json syntax: unexpected data after the object (want one object per line)`},
		{"mooncake line numbers count blank lines", FormatMooncake, "m.jsonl",
			"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\r\n\r\n{\"timestamp\": 1, \"input_length\": -1, \"output_length\": 1}\n", Options{},
			`m.jsonl:3:34: field input_length: -1 is negative`},
		{"mooncake columns count characters", FormatMooncake, "m.jsonl", `{"note": "héllo wörld", "timestamp": true}`, Options{},
			`m.jsonl:1:38: field timestamp: true is not a number`},
		{"mooncake duplicate key", FormatMooncake, "m.jsonl", `{"hash_ids": "x", "timestamp": 0, "hash_ids": [1]}`, Options{},
			`m.jsonl:1:14: field hash_ids: "x" is not a list of integers`},
		{"mooncake duplicate valid key", FormatMooncake, "m.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "timestamp": 5}`, Options{},
			`m.jsonl:1:57: field timestamp: appears twice in the object`},
		{"mooncake python NaN", FormatMooncake, "m.jsonl", `{"timestamp": NaN}`, Options{},
			`m.jsonl:1:15: json syntax: invalid character 'N' looking for beginning of value (Python writes NaN and Infinity, which are not JSON)`},
		{"mooncake binary garbage", FormatMooncake, "m.jsonl", "\x00\xff\x01", Options{},
			`m.jsonl:1:1: json syntax: invalid character '\x00' looking for beginning of value`},

		// Vidur CSV.
		{"vidur missing column", FormatVidur, "v.csv", "num_prefill_tokens,num_decode_tokens\n1,2\n", Options{},
			`v.csv:1:1: field arrived_at: missing from the column row (have "num_prefill_tokens,num_decode_tokens")`},
		{"vidur NaN arrival", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\nnan,1,2\n", Options{},
			`v.csv:2:1: field arrived_at: "nan" is not a finite number`},
		{"vidur negative arrival", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n-0.5,1,2\n", Options{},
			`v.csv:2:1: field arrived_at: "-0.5" is negative`},
		{"vidur Unix-epoch arrival", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n1700000000.5,1,2\n", Options{},
			`v.csv:2:1: field arrived_at: "1700000000.5" reaches 10^15 µs (31.7 years), which TraceV2 reads as a Unix-epoch time`},
		{"vidur non-numeric arrival", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\nsoon,1,2\n", Options{},
			`v.csv:2:1: field arrived_at: "soon" is not a number`},
		{"vidur fractional tokens", FormatVidur, "v.csv", "num_decode_tokens,arrived_at,num_prefill_tokens\n2,0.5,1.5\n", Options{},
			`v.csv:2:3: field num_prefill_tokens: "1.5" is not a whole number`},
		{"vidur negative tokens", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0,1,-2.0\n", Options{},
			`v.csv:2:3: field num_decode_tokens: "-2.0" is negative`},
		{"vidur bad block hashes", FormatVidur, "v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens,block_hash_ids\n0,1,2,\"[1, x]\"\n", Options{},
			`v.csv:2:4: field block_hash_ids: "[1, x]" is not a JSON list of integers`},

		// vllm bench JSON.
		{"vllm empty file", FormatVLLM, "b.json", " \n", Options{},
			`b.json:1:1: json syntax: empty file, want the result object of vllm bench serve`},
		{"vllm not an object", FormatVLLM, "b.json", "\n [1]", Options{},
			`b.json:2:2: json syntax: want the result object of vllm bench serve, got a list`},
		{"vllm without --save-detailed", FormatVLLM, "b.json", `{"date": "20250101-000000", "completed": 3}`, Options{},
			`b.json:1:1: field input_lens: missing (write the file with vllm bench serve --save-result --save-detailed)`},
		{"vllm array too short", FormatVLLM, "b.json", vllmDoc(`[1, 2]`, `[3, 4]`, `[0.1]`, `[[], []]`, `["", ""]`), Options{},
			`b.json:1:60: field ttfts: has 1 elements, input_lens has more`},
		{"vllm array too long", FormatVLLM, "b.json", vllmDoc(`[1]`, `[3]`, `[0.1, 0.2]`, `[[]]`, `[""]`), Options{},
			`b.json:1:56: field ttfts: has more elements than input_lens (1)`},
		{"vllm negative ttft", FormatVLLM, "b.json", vllmDoc(`[1]`, `[3]`, `[-0.1]`, `[[]]`, `[""]`), Options{},
			`b.json:1:51: field ttfts[0]: -0.1 is negative`},
		{"vllm string length", FormatVLLM, "b.json", vllmDoc(`["12"]`, `[3]`, `[0.1]`, `[[]]`, `[""]`), Options{},
			`b.json:1:17: field input_lens[0]: "12" is not an integer`},
		{"vllm itls element not a list", FormatVLLM, "b.json", vllmDoc(`[1]`, `[3]`, `[0.1]`, `[0.1]`, `[""]`), Options{},
			`b.json:1:66: field itls[0]: 0.1 is not a list of seconds`},
		{"vllm negative gap", FormatVLLM, "b.json", vllmDoc(`[1]`, `[3]`, `[0.1]`, `[[0.01, -0.01]]`, `[""]`), Options{},
			`b.json:1:73: field itls[0][1]: -0.01 is negative`},
		{"vllm ttft of 41 years", FormatVLLM, "b.json", vllmDoc(`[1]`, `[3]`, `[1.3e9]`, `[[]]`, `[""]`), Options{},
			`b.json:1:51: field ttfts[0]: 1.3e+09 reaches 10^15 µs (31.7 years), which TraceV2 reads as a Unix-epoch time`},
		{"vllm latency of 41 years", FormatVLLM, "b.json", `{"input_lens": [1], "output_lens": [3], "ttfts": [0.1], "itls": [[]], "errors": [""], "latencies": [1.3e9]}`, Options{},
			`b.json:1:101: field latencies[0]: the last chunk time reaches 10^15 µs (31.7 years), which TraceV2 reads as a Unix-epoch time`},
		{"vllm error not a string", FormatVLLM, "b.json", vllmDoc(`[1]`, `[3]`, `[0.1]`, `[[]]`, `[5]`), Options{},
			`b.json:1:82: field errors[0]: 5 is not a string`},
		{"vllm array is a number", FormatVLLM, "b.json", vllmDoc(`7`, `[3]`, `[0.1]`, `[[]]`, `[""]`), Options{},
			`b.json:1:16: field input_lens: 7 is not a list`},
		{"vllm python NaN in a summary", FormatVLLM, "b.json", "{\n  \"std_ttft_ms\": NaN\n}", Options{},
			`b.json:2:18: json syntax: invalid character 'N' looking for beginning of value (Python writes NaN and Infinity, which are not JSON)`},
		{"vllm truncated", FormatVLLM, "b.json", "{\"input_lens\": [1, 2", Options{},
			`b.json:1:21: json syntax: unexpected end of input`},
		{"vllm run out of range", FormatVLLM, "b.json", "{}\n{}\n", Options{Run: 3},
			`b.json:1:1: run 3 requested, the file holds 2 result objects`},
		{"vllm negative start time", FormatVLLM, "b.json",
			"{\n  \"input_lens\": [1, 1],\n  \"output_lens\": [1, 1],\n  \"ttfts\": [0.1, 0.1],\n  \"itls\": [[], []],\n  \"errors\": [\"\", \"\"],\n  \"start_times\": [5.0, -3.5]\n}", Options{},
			`b.json:7:24: field start_times[1]: -3.5 is negative`},
		{"vllm negative start time in an indented file", FormatVLLM, "b.json",
			"{\n  \"input_lens\": [1],\n  \"output_lens\": [1],\n  \"ttfts\": [0.1],\n  \"itls\": [[]],\n  \"errors\": [\"\"],\n  \"start_times\": [5.0],\n  \"queue_times\": [-1]\n}", Options{},
			`b.json:8:19: field queue_times[0]: -1 is negative`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errText(t, tt.format, tt.file, tt.input, tt.opts)
			if got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// vllmDoc writes a minimal vllm bench result with the given arrays.
func vllmDoc(in, out, ttfts, itls, errs string) string {
	return `{"input_lens": ` + in + `, "output_lens": ` + out + `, "ttfts": ` + ttfts +
		`, "itls": ` + itls + `, "errors": ` + errs + `}`
}

func TestErrorIsSticky(t *testing.T) {
	imp, err := NewAzure("t.csv", strings.NewReader(azHead+azRow+"2023-11-16 18:17:04,x,1\n"+azRow), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imp.Next(); err != nil {
		t.Fatalf("first record: %v", err)
	}
	_, err1 := imp.Next()
	_, err2 := imp.Next()
	if err1 == nil || err1 != err2 {
		t.Fatalf("errors %v, %v: want the same error twice", err1, err2)
	}
	var ie *Error
	if !errors.As(err1, &ie) || ie.Line != 3 || ie.Column != 2 || ie.Field != "ContextTokens" {
		t.Errorf("got %#v, want line 3, column 2, field ContextTokens", ie)
	}
}

func TestOpenUnknownFormat(t *testing.T) {
	_, err := Open("parquet", "x", strings.NewReader(""), Options{})
	want := `importer: unknown format "parquet" (want one of azure, mooncake, vidur, vllm-bench, llmservingsim)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
