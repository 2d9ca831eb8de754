package importer

import (
	"math"

	"servesim/internal/tracev2"
)

// parseFlat is the hottest path of the Mooncake importer, for the lines
// Mooncake writes: one flat object whose values are numbers, strings
// without escapes, or (hash_ids) a list of integers. It scans the line
// once, checking the JSON grammar as it goes, and refuses (ok false)
// anything else — a nested value, true, false or null, an escape or a
// control character in a string, a known key given twice, a missing
// field, a value parseFast would refuse — which parseFast then takes. A
// line it accepts is valid JSON, and its record is parseFast's: a replay
// reads a trace of hash ids twice (once to count the prefixes its rows
// share), so the map parseFast decodes into was most of an import's time.
func (m *Mooncake) parseFlat(line []byte) (rec tracev2.Record, ok bool) {
	s := flatScan{b: line}
	if !s.byte('{') {
		return rec, false
	}
	var ts, in, out []byte
	var ids []int64
	haveIDs := false
	for first := true; ; first = false {
		s.space()
		if s.at('}') {
			if s.comma {
				return rec, false // a trailing comma
			}
			s.i++
			break
		}
		if !first && !s.comma {
			return rec, false
		}
		key, kok := s.str()
		if !kok || !s.byte(':') {
			return rec, false
		}
		s.space()
		switch string(key) {
		case "timestamp", "input_length", "output_length":
			num, nok := s.number()
			if !nok {
				return rec, false
			}
			dst := &ts
			if string(key) == "input_length" {
				dst = &in
			} else if string(key) == "output_length" {
				dst = &out
			}
			if *dst != nil {
				return rec, false // twice: the token path names the error
			}
			*dst = num
		case "hash_ids":
			if haveIDs {
				return rec, false
			}
			hint := 64
			if in != nil { // input_length came first: its blocks
				if n, prob := parseCount(string(in), true); prob == "" {
					hint = min(n/MooncakeBlockTokens+1, tracev2.MaxHashIDs)
				}
			}
			if ids, ok = s.intList(hint); !ok {
				return rec, false
			}
			haveIDs = true
		default:
			if !s.skipScalar() {
				return rec, false
			}
		}
		s.space()
		s.comma = s.at(',')
		if s.comma {
			s.i++
		}
	}
	s.space()
	if s.i != len(s.b) || ts == nil || in == nil || out == nil {
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

// flatScan is parseFlat's cursor over a line.
type flatScan struct {
	b     []byte
	i     int
	comma bool // a comma followed the last member
}

// space skips JSON whitespace.
func (s *flatScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// at reports whether the next byte is c.
func (s *flatScan) at(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// byte skips whitespace and then c, reporting whether c was there.
func (s *flatScan) byte(c byte) bool {
	s.space()
	if !s.at(c) {
		return false
	}
	s.i++
	return true
}

// str reads a string without escapes or control characters and returns
// its bytes.
func (s *flatScan) str() ([]byte, bool) {
	if !s.at('"') {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// number reads a JSON number and returns its text.
func (s *flatScan) number() ([]byte, bool) {
	start := s.i
	if s.at('-') {
		s.i++
	}
	if !s.digits(true) {
		return nil, false
	}
	if s.at('.') {
		s.i++
		if !s.digits(false) {
			return nil, false
		}
	}
	if s.at('e') || s.at('E') {
		s.i++
		if s.at('+') || s.at('-') {
			s.i++
		}
		if !s.digits(false) {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// digits reads one or more digits; an integer part (intPart) is 0 or does
// not begin with 0.
func (s *flatScan) digits(intPart bool) bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	switch n := s.i - start; {
	case n == 0:
		return false
	case intPart && n > 1 && s.b[start] == '0':
		return false
	}
	return true
}

// skipScalar skips a number or a string.
func (s *flatScan) skipScalar() bool {
	if s.at('"') {
		_, ok := s.str()
		return ok
	}
	_, ok := s.number()
	return ok
}

// intList reads a list of integers (no fraction or exponent), at most
// tracev2.MaxHashIDs of them, each within int64.
func (s *flatScan) intList(capHint int) ([]int64, bool) {
	if !s.at('[') {
		return nil, false
	}
	s.i++
	s.space()
	ids := make([]int64, 0, capHint)
	if s.at(']') {
		s.i++
		return ids, true
	}
	for {
		if len(ids) == tracev2.MaxHashIDs {
			return nil, false
		}
		neg := s.at('-')
		if neg {
			s.i++
		}
		start := s.i
		if !s.digits(true) {
			return nil, false
		}
		var n uint64
		for _, c := range s.b[start:s.i] {
			d := uint64(c - '0')
			if n > (math.MaxInt64-d)/10 {
				return nil, false
			}
			n = n*10 + d
		}
		v := int64(n)
		if neg {
			v = -v
		}
		ids = append(ids, v)
		s.space()
		switch {
		case s.at(','):
			s.i++
			s.space()
		case s.at(']'):
			s.i++
			return ids, true
		default:
			return nil, false
		}
	}
}
