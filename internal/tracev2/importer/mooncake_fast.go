package importer

import (
	"bytes"
	"encoding/json"
	"math"

	"servesim/internal/tracev2"
)

// parseFast is the hot path of the Mooncake importer: one json.Unmarshal into
// a map of raw values (exact, case-sensitive keys) and a hand-written scan of
// the hash_ids list. Anything it does not fully understand — a syntax error,
// a missing field, a value that is not a plain number, a bad length —
// returns ok false, and parse (the token-by-token path that knows every
// position) produces the record or the exact error. Both paths accept the
// same inputs with the same results on valid lines; this one only refuses
// earlier. obj is reused between lines.
func (m *Mooncake) parseFast(line []byte, obj map[string]json.RawMessage) (tracev2.Record, bool) {
	// Leave to the token path what a map hides: a known key given twice
	// (an error there) and escaped keys (which could spell a known key).
	if bytes.IndexByte(line, '\\') >= 0 {
		return tracev2.Record{}, false
	}
	for _, k := range [...]string{`"timestamp"`, `"input_length"`, `"output_length"`, `"hash_ids"`} {
		if bytes.Count(line, []byte(k)) > 1 {
			return tracev2.Record{}, false
		}
	}
	clear(obj)
	if json.Unmarshal(line, &obj) != nil {
		return tracev2.Record{}, false
	}
	ts, okT := obj["timestamp"]
	in, okI := obj["input_length"]
	out, okO := obj["output_length"]
	if !okT || !okI || !okO || !plainNumber(ts) || !plainNumber(in) || !plainNumber(out) {
		return tracev2.Record{}, false
	}
	us, p1 := parseDuration(string(ts), 1e3)
	nIn, p2 := parseCount(string(in), true)
	nOut, p3 := parseCount(string(out), true)
	if p1 != "" || p2 != "" || p3 != "" {
		return tracev2.Record{}, false
	}
	rec := tracev2.Record{ClientID: m.client, Status: "ok", InputTokens: nIn, OutputTokens: nOut,
		ArrivalTimeUs: us, SendTimeUs: us}
	if raw, ok := obj["hash_ids"]; ok {
		ids, ok := intList(raw, min(nIn/MooncakeBlockTokens+1, maxIDsHint))
		if !ok || len(ids) > tracev2.MaxHashIDs {
			return tracev2.Record{}, false
		}
		rec.HashIDs = ids
	}
	return rec, true
}

// plainNumber reports whether a raw JSON value is a number literal.
func plainNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// intList scans a syntactically valid JSON list of plain integers; ok is
// false for anything else (fractions, exponents, other types, overflow).
func intList(raw json.RawMessage, capHint int) ([]int64, bool) {
	if len(raw) < 2 || raw[0] != '[' {
		return nil, false
	}
	ids := make([]int64, 0, capHint)
	i := 1
	skip := func() {
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
			i++
		}
	}
	skip()
	if raw[i] == ']' {
		return ids, true
	}
	for {
		neg := false
		if raw[i] == '-' {
			neg = true
			i++
		}
		start := i
		var n uint64
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			d := uint64(raw[i] - '0')
			if n > (math.MaxInt64-d)/10 {
				return nil, false
			}
			n = n*10 + d
			i++
		}
		if i == start {
			return nil, false
		}
		v := int64(n)
		if neg {
			v = -v
		}
		ids = append(ids, v)
		skip()
		switch {
		case i >= len(raw):
			return nil, false
		case raw[i] == ',':
			i++
			skip()
		case raw[i] == ']':
			return ids, true
		default:
			return nil, false
		}
	}
}
