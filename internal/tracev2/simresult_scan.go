package tracev2

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"

	"servesim/internal/jsonscan"
)

// simScanner decodes SimResult objects straight from a byte window, without
// reflection: the hot path of calibrate on a million requests. It accepts a
// strict subset of JSON on which its result equals encoding/json's; on any
// other input it stops and hands the rest over (simHandoff), so encoding/json
// decides — and words the error.
//
// The window buf[start:end] holds unread input; start is the commit point,
// just after the last object decoded (or the beginning of the input). An
// object is parsed whole from the window or not at all: when the window ends
// inside it (a jsonscan step says More), more is read and the object parsed
// again. The tokens are jsonscan's; what is SimResult's is here: its keys,
// which of their values encoding/json would decode alike, and when to hand
// over.
type simScanner struct {
	src   io.Reader
	buf   []byte
	start int
	end   int
	eof   bool
	err   error // a read error other than io.EOF: handed over with the rest

	line, col int // position of buf[at]
	at        int // at most start: positions are counted on from there
	obj       int // index in buf of the '{' of the object next parsed

	strs map[string]string // interned string values (classes, models, instances)
}

const (
	simWindow    = 256 << 10
	simInternMax = 4096 // distinct interned strings
	simInternLen = 64   // longer strings are not interned
)

type scanStatus int

const (
	scanOK   scanStatus = iota
	scanMore            // the window ended inside the value
	scanOdd             // not in the subset: hand over
)

// scanOf is what the scanner does after a jsonscan step: go on, read more
// (the window ended first, whatever the step would say of the bytes so
// far), or hand over (not JSON: encoding/json words the error).
func scanOf(st jsonscan.Status) scanStatus {
	switch {
	case st == jsonscan.OK:
		return scanOK
	case st&jsonscan.More != 0:
		return scanMore
	}
	return scanOdd
}

// errReader gives the read error the scanner met, after the bytes before it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// pos is the line and column of buf[i], for i at or after s.at; it counts
// on from there, so that positions cost the bytes between objects only.
func (s *simScanner) pos(i int) (int, int) {
	s.line, s.col = advancePos(s.line, s.col, s.buf[s.at:i])
	s.at = i
	return s.line, s.col
}

func newSimScanner(src io.Reader) *simScanner {
	return &simScanner{src: src, buf: make([]byte, simWindow), line: 1, col: 1, strs: make(map[string]string)}
}

// fill reads more input, first moving the unread window to the front (and
// doubling the buffer when the window fills it). It reports whether anything
// was read.
func (s *simScanner) fill() bool {
	if s.eof || s.err != nil {
		return false
	}
	if s.start > 0 {
		s.pos(s.start)
		s.end = copy(s.buf, s.buf[s.start:s.end])
		s.start, s.at = 0, 0
	}
	if s.end == len(s.buf) {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	// Fill the whole free space: a reader that gives a few bytes at a time
	// must not make the re-parse of a large object quadratic.
	read := false
	for s.end < len(s.buf) && !s.eof && s.err == nil {
		n, err := s.src.Read(s.buf[s.end:])
		s.end += n
		read = read || n > 0
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			s.err = err
		}
	}
	return read
}

// handoff gives the rest of the input from the commit point.
func (s *simScanner) handoff() *simHandoff {
	line, col := s.pos(s.start)
	rest := make([]byte, s.end-s.start)
	copy(rest, s.buf[s.start:s.end])
	readers := []io.Reader{bytes.NewReader(rest)}
	switch {
	case s.err != nil:
		readers = append(readers, errReader{s.err})
	case !s.eof:
		readers = append(readers, s.src)
	}
	return &simHandoff{rest: io.MultiReader(readers...), line: line, col: col}
}

// run decodes objects until the end of the input (nil handoff) or the first
// thing outside the subset. Each object is checked (checkSimResult) as it
// is decoded; the first invalid one is the error.
func (s *simScanner) run(inArray bool, name string) ([]SimResult, *simHandoff, error) {
	results := []SimResult{}
	s.fill()
	for {
		if len(results) == cap(results) {
			// Double: append's 1.25x growth for large slices copies a
			// million results many times over.
			results = append(make([]SimResult, 0, 2*cap(results)+1024), results...)
		}
		n := len(results)
		results = results[:n+1]
		results[n] = unsetSimResult()
		got, st := s.next(inArray, n == 0, &results[n])
		if !got {
			results = results[:n]
		}
		switch st {
		case scanMore:
			// next turns scanMore into scanOdd once the input has ended,
			// and fill either reads something or sees the end.
			s.fill()
			continue
		case scanOdd:
			return results, s.handoff(), nil
		}
		if !got {
			return results, nil, nil
		}
		line, col := s.pos(s.obj)
		if err := checkSimResult(&results[n], name, line, col); err != nil {
			return nil, nil, err
		}
	}
}

// next parses, from the commit point, what separates objects and the next
// object into res (zeroed), and commits past it. got is false with scanOK
// at the clean end of the input. In an array the opening '[' is consumed with the first element,
// so that a handoff before any element starts at the top.
func (s *simScanner) next(inArray, first bool, res *SimResult) (got bool, st scanStatus) {
	b := s.buf[:s.end]
	i := jsonscan.Space(b, s.start)
	if inArray {
		if first {
			if i == len(b) {
				return false, s.atEnd()
			}
			if b[i] != '[' {
				return false, scanOdd
			}
			i = jsonscan.Space(b, i+1)
			if i < len(b) && b[i] == ']' {
				return s.arrayEnd(b, i+1)
			}
		} else {
			if i == len(b) {
				return false, s.atEnd()
			}
			switch b[i] {
			case ',':
				i = jsonscan.Space(b, i+1)
			case ']':
				return s.arrayEnd(b, i+1)
			default:
				return false, scanOdd
			}
		}
	} else if i == len(b) {
		if s.eof && s.err == nil {
			s.start = i
			return false, scanOK
		}
		return false, s.atEnd()
	}
	if i == len(b) {
		return false, s.atEnd()
	}
	if b[i] != '{' {
		return false, scanOdd
	}
	s.obj = i
	j, st := s.object(b, i, res)
	if st != scanOK {
		if st == scanMore && (s.eof || s.err != nil) {
			st = scanOdd
		}
		return false, st
	}
	s.start = j
	return true, scanOK
}

// arrayEnd accepts the closing ']' at i-1 when only white space follows.
func (s *simScanner) arrayEnd(b []byte, i int) (bool, scanStatus) {
	i = jsonscan.Space(b, i)
	if i < len(b) {
		return false, scanOdd
	}
	if !s.eof || s.err != nil {
		return false, s.atEnd()
	}
	s.start = i
	return false, scanOK
}

// atEnd is the status of a window that ended where more input is needed.
func (s *simScanner) atEnd() scanStatus {
	if s.eof || s.err != nil {
		return scanOdd
	}
	return scanMore
}

// object parses the object at b[i] == '{' into res and returns the index
// after its '}'.
func (s *simScanner) object(b []byte, i int, res *SimResult) (int, scanStatus) {
	i = jsonscan.Space(b, i+1)
	if i == len(b) {
		return i, scanMore
	}
	if b[i] == '}' {
		return i + 1, scanOK
	}
	for {
		if i == len(b) {
			return i, scanMore
		}
		if b[i] != '"' {
			return i, scanOdd
		}
		ks := i + 1
		q := bytes.IndexByte(b[ks:], '"')
		if q < 0 {
			return len(b), scanMore
		}
		ke := ks + q
		i = jsonscan.Space(b, ke+1)
		if i == len(b) {
			return i, scanMore
		}
		if b[i] != ':' {
			return i, scanOdd
		}
		i = jsonscan.Space(b, i+1)
		if i == len(b) {
			return i, scanMore
		}
		var st scanStatus
		i, st = s.field(b, i, b[ks:ke], res)
		if st != scanOK {
			return i, st
		}
		i = jsonscan.Space(b, i)
		if i == len(b) {
			return i, scanMore
		}
		switch b[i] {
		case ',':
			i = jsonscan.Space(b, i+1)
		case '}':
			return i + 1, scanOK
		default:
			return i, scanOdd
		}
	}
}

// field decodes the value at b[i] for key. null leaves a field as it is, as
// in encoding/json.
func (s *simScanner) field(b []byte, i int, key []byte, res *SimResult) (int, scanStatus) {
	var ip *int
	var i64 *int64
	var fp *float64
	var sp *string
	switch string(key) {
	case "request_id":
		i64 = &res.RequestID
	case "ttft_us":
		fp = &res.TTFTUs
	case "e2e_us":
		fp = &res.E2EUs
	case "input_tokens":
		ip = &res.InputTokens
	case "output_tokens":
		ip = &res.OutputTokens
	case "slo_class":
		sp = &res.SLOClass
	case "model":
		sp = &res.Model
	case "itl_mean_us":
		fp = &res.ITLMeanUs
	case "arrival_us":
		i64 = &res.ArrivalUs
	case "scheduling_delay_us":
		fp = &res.SchedulingDelayUs
	case "num_preemptions":
		ip = &res.NumPreemptions
	case "cached_input_tokens":
		ip = &res.CachedInputTokens
	case "instance":
		sp = &res.Instance
	case "wait_in_flight_us":
		fp = &res.WaitInFlightUs
	case "step_in_flight_us":
		fp = &res.StepInFlightUs
	default:
		for _, c := range key {
			if c == '\\' || c < 0x20 || c >= 0x80 || ('A' <= c && c <= 'Z') {
				return i, scanOdd // encoding/json unescapes and folds case
			}
		}
		j, st := jsonscan.Value(b, i, jsonscan.MaxDepth)
		return j, scanOf(st)
	}
	if b[i] == 'n' {
		j, st := jsonscan.Literal(b, i, "null")
		return j, scanOf(st)
	}
	switch {
	case sp != nil:
		if b[i] != '"' {
			return i, scanOdd
		}
		return s.str(b, i, sp)
	case fp != nil:
		j, _, st := jsonscan.Number(b, i)
		if st != jsonscan.OK {
			return j, scanOf(st)
		}
		f, err := jsonscan.Float(b[i:j])
		if err != nil {
			return i, scanOdd // out of range: encoding/json reports it
		}
		*fp = f
		return j, scanOK
	default:
		j, isInt, st := jsonscan.Number(b, i)
		if st != jsonscan.OK {
			return j, scanOf(st)
		}
		if !isInt {
			return i, scanOdd
		}
		v, ok := jsonscan.ParseInt(b[i:j])
		if !ok {
			return i, scanOdd
		}
		if i64 != nil {
			*i64 = v
		} else {
			if int64(int(v)) != v {
				return i, scanOdd
			}
			*ip = int(v)
		}
		return j, scanOK
	}
}

// str decodes the string at b[i] == '"' into dst.
func (s *simScanner) str(b []byte, i int, dst *string) (int, scanStatus) {
	j, plain, st := jsonscan.String(b, i)
	if st != jsonscan.OK {
		return j, scanOf(st)
	}
	raw := b[i+1 : j-1]
	if !plain {
		// Escapes or non-ASCII: encoding/json's own rules (U+FFFD for
		// invalid UTF-8 and lone surrogates).
		if utf8.Valid(raw) && bytes.IndexByte(raw, '\\') < 0 {
			*dst = s.intern(raw)
			return j, scanOK
		}
		var v string
		if err := json.Unmarshal(b[i:j], &v); err != nil {
			return i, scanOdd
		}
		*dst = v
		return j, scanOK
	}
	*dst = s.intern(raw)
	return j, scanOK
}

func (s *simScanner) intern(raw []byte) string {
	if len(raw) > simInternLen {
		return string(raw)
	}
	if v, ok := s.strs[string(raw)]; ok {
		return v
	}
	v := string(raw)
	if len(s.strs) < simInternMax {
		s.strs[v] = v
	}
	return v
}
