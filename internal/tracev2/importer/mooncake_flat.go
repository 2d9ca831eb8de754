package importer

import (
	"bytes"
	"errors"

	"servesim/internal/jsonscan"
	"servesim/internal/tracev2"
)

// parseFlat is the hot path of the Mooncake importer: one validating scan
// of the line (jsonscan) that reads the four fields it knows and skips the
// rest, without decoding the line into a map or struct (a replay reads a
// trace of hash ids twice, once to count the prefixes its rows share). It
// refuses (ok false) what it does not fully understand — an escape
// anywhere (an escaped key could spell a known one), a known key given
// twice, a missing field, a value of another shape or sign, JSON nested
// deeper than jsonscan.MaxDepth — and parse, the token-by-token path that
// knows every position, then produces the record or the exact error. A
// line it accepts is valid JSON, and its record is the token path's.
func (m *Mooncake) parseFlat(line []byte) (rec tracev2.Record, ok bool) {
	if bytes.IndexByte(line, '\\') >= 0 {
		return rec, false
	}
	s := jsonscan.New(line)
	var ts, in, out []byte
	var ids []int64
	haveIDs := false
	err := s.Object(func(key []byte) error {
		var dst *[]byte
		switch string(key) {
		case "timestamp":
			dst = &ts
		case "input_length":
			dst = &in
		case "output_length":
			dst = &out
		case "hash_ids":
			if haveIDs {
				return errNotFlat // twice: the token path names the error
			}
			haveIDs = true
			ids = make([]int64, 0, idsHint(in))
			return s.Array(func() error {
				id, err := s.Int()
				if err != nil || len(ids) == tracev2.MaxHashIDs {
					return errNotFlat
				}
				ids = append(ids, id)
				return nil
			})
		default:
			return s.Skip()
		}
		if *dst != nil {
			return errNotFlat
		}
		var err error
		*dst, err = s.Num()
		return err
	})
	if err != nil || s.End() != nil || ts == nil || in == nil || out == nil {
		return rec, false
	}
	us, p1 := parseDuration(string(ts), 1e3)
	nIn, p2 := parseCount(string(in), true)
	nOut, p3 := parseCount(string(out), true)
	if p1 != "" || p2 != "" || p3 != "" {
		return rec, false
	}
	rec = tracev2.Record{ClientID: m.client, Status: "ok", InputTokens: nIn, OutputTokens: nOut,
		ArrivalTimeUs: us, SendTimeUs: us}
	if haveIDs {
		rec.HashIDs = ids
	}
	return rec, true
}

// errNotFlat leaves a line to the token path.
var errNotFlat = errors.New("not a flat Mooncake line")

// idsHint is the length of a hash-id list for a prompt of input_length in
// (when it came first), to allocate the list once: at most maxIDsHint, so
// that a line claiming a huge prompt does not allocate for it.
func idsHint(in []byte) int {
	if in != nil {
		if n, prob := parseCount(string(in), true); prob == "" {
			return min(n/MooncakeBlockTokens+1, maxIDsHint)
		}
	}
	return 64
}

// maxIDsHint covers prompts of 512k tokens.
const maxIDsHint = 1024
