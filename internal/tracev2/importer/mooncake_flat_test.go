package importer

import (
	"strings"
	"testing"
)

// TestParseFlat: the flat path takes Mooncake's own lines and any valid
// JSON object without escapes, gives the token path's record for each, and
// leaves everything else to the other paths.
func TestParseFlat(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool // taken by the flat path
	}{
		{`{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}`, true},
		{` { "hash_ids" : [ ] , "output_length":5,"input_length":6.0e2,"timestamp":0.5e1 } `, true},
		{"{\"timestamp\":1,\t\"input_length\":2,\r\"output_length\":3}", true},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "note": "x", "n": 1.5E+3}`, true},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": [-9223372036854775807, 0, 7]}`, true},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3,}`, false}, // trailing comma
		{`{"timestamp": 1 "input_length": 2, "output_length": 3}`, false},   // missing comma
		{`{"timestamp": 01, "input_length": 2, "output_length": 3}`, false}, // leading zero
		{`{"timestamp": 1., "input_length": 2, "output_length": 3}`, false}, // bare point
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "x": true, "y": [null, {"z": false}]}`, true},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "x": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, false}, // deeper than jsonscan goes
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "x": tru}`, false},
		{`{"timestamp": null, "input_length": 2, "output_length": 3}`, false},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": 5}`, false},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "x": "a\"b"}`, false}, // escape
		{"{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"x\": \"a\x01\"}", false},
		{`{"timestamp": 1, "timestamp": 2, "input_length": 2, "output_length": 3}`, false}, // twice
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": [1, 2], "hash_ids": []}`, false},
		{`{"timestamp": 1, "input_length": 2}`, false},                                        // missing
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": [1.0]}`, false}, // fraction
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": [9223372036854775808]}`, false},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": [1,]}`, false},
		{`{"timestamp": 1, "input_length": -2, "output_length": 3}`, false}, // the token path names the error
		{`{"timestamp": 1, "input_length": 2, "output_length": 3} x`, false},
		{`{"timestamp": 1, "input_length": 2, "output_length": 3`, false},
		{`[1]`, false},
		{``, false},
	} {
		m := &Mooncake{file: "t.jsonl", client: "c"}
		flat, ok := m.parseFlat([]byte(tc.line))
		if ok != tc.want {
			t.Errorf("%q: flat path took it %v, want %v", tc.line, ok, tc.want)
			continue
		}
		if !ok {
			continue
		}
		agreesWithTokenPath(t, m, "flat", []byte(tc.line), flat)
	}
}
