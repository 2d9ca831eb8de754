package tracev2

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ReadSimResults reads a JSON array or JSON Lines of SimResult, detected from
// the first non-space byte ('[' or '{'). Unknown fields are ignored. Errors
// are *Error with the line and column of the offending byte.
//
// The result is exactly what encoding/json would decode, field by field and
// error by error: a hand-written scanner (simresult_scan.go) decodes the
// objects it fully understands, and the first byte it does not (a syntax
// error, a type mismatch, an escaped key, a key matching a field only
// case-insensitively, ...) hands the rest of the input to encoding/json, from
// the last object the scanner completed, with the line and column there.
func ReadSimResults(r io.Reader, name string) ([]SimResult, error) {
	return readSimResults(r, name, false)
}

// readSimResults is ReadSimResults; slowOnly skips the scanner (tests compare
// both paths).
func readSimResults(r io.Reader, name string, slowOnly bool) ([]SimResult, error) {
	br, err := newInput(r, name)
	if err != nil {
		return nil, err
	}
	first, skipped, found, err := firstNonSpace(br)
	if err != nil {
		return nil, inputError(name, 0, err)
	}
	switch {
	case !found:
		return nil, &Error{File: name, Line: 1, Column: 1, What: "json", Msg: "empty input, want a JSON array or JSON Lines"}
	case first == '[', first == '{':
	default:
		line, col := 1+bytes.Count(skipped, []byte("\n")), 1
		if i := bytes.LastIndexByte(skipped, '\n'); i >= 0 {
			col = len(skipped) - i
		} else {
			col = len(skipped) + 1
		}
		return nil, &Error{File: name, Line: line, Column: col, What: "json",
			Msg: fmt.Sprintf("want a JSON array ('[') or JSON Lines ('{'), got %q", first)}
	}
	inArray := first == '['
	if slowOnly {
		return decodeSimJSON(simHandoff{rest: br, line: 1, col: 1}, name, inArray, nil)
	}
	sc := newSimScanner(br)
	results, h, err := sc.run(inArray, name)
	if err != nil || h == nil {
		return results, err
	}
	return decodeSimJSON(*h, name, inArray, results)
}

// simHandoff is where encoding/json takes over from the scanner: rest is the
// input from there on, at line and col. In an array with results already
// decoded, the handoff point lies just after an element, and the decoder is
// first fed a synthetic "[{}" so that it is in the same state (expecting ','
// or ']') as if it had decoded the array itself.
type simHandoff struct {
	rest      io.Reader
	line, col int
}

// synthArray brings a fresh decoder to "after an array element".
const synthArray = "[{}"

// decodeSimJSON decodes the rest of the input with encoding/json, appending
// to results (the objects decoded before the handoff).
func decodeSimJSON(h simHandoff, name string, inArray bool, results []SimResult) ([]SimResult, error) {
	prefix := ""
	if inArray && len(results) > 0 {
		prefix = synthArray
	}
	if results == nil {
		results = []SimResult{}
	}
	lt := &lineTracker{r: h.rest, line: h.line, col: h.col, base: int64(len(prefix))}
	var src io.Reader = lt
	if prefix != "" {
		src = io.MultiReader(strings.NewReader(prefix), lt)
	}
	d := &simDecoder{dec: json.NewDecoder(src), lt: lt, name: name}
	if !inArray {
		return d.lines(results)
	}
	return d.array(results, prefix != "")
}

// simDecoder is json.Decoder reading SimResults after a handoff, with
// errors located in the whole input.
//
// json.Decoder words errors well but locates them in three ways: a syntax
// error met while scanning a value counts the bytes its scanner has seen
// (which leaves out the '[' and ',' the token reader consumed); a syntax
// error of the token reader is the input offset of the offending byte; a
// type error counts from the start of the value. decode and fail turn
// each into an input offset.
type simDecoder struct {
	dec     *json.Decoder
	lt      *lineTracker
	name    string
	scanned int64 // bytes json.Decoder's value scanner has seen
}

// lines decodes JSON Lines (or concatenated objects) to the end.
func (d *simDecoder) lines(results []SimResult) ([]SimResult, error) {
	for {
		s := unsetSimResult()
		at, err := d.decode(&s, false, true)
		if errors.Is(err, io.EOF) {
			return results, nil
		}
		if err != nil {
			return nil, d.fail(err, at)
		}
		results = append(results, s)
		d.lt.advance(d.dec.InputOffset())
	}
}

// array decodes the rest of a JSON array; resumed when the input starts
// after an element (the decoder is first fed synthArray).
func (d *simDecoder) array(results []SimResult, resumed bool) ([]SimResult, error) {
	dec := d.dec
	if _, err := dec.Token(); err != nil {
		return nil, d.fail(err, nil)
	}
	if resumed {
		var synthetic SimResult // the "{}" of synthArray: not checked
		if _, err := d.decode(&synthetic, true, false); err != nil {
			return nil, fmt.Errorf("read %s: resume the json decoder: %w", d.name, err)
		}
	}
	d.lt.advance(dec.InputOffset())
	for dec.More() {
		s := unsetSimResult()
		if at, err := d.decode(&s, len(results) > 0, true); err != nil {
			return nil, d.fail(err, at)
		}
		results = append(results, s)
		d.lt.advance(dec.InputOffset())
	}
	if _, err := dec.Token(); err != nil {
		return nil, d.fail(err, nil)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		// The token reader has read at least the first byte after end.
		return nil, d.fail(errors.New("unexpected data after the JSON array"), func() int64 { return d.lt.skipSpace(end) })
	}
	return results, nil
}

// decode decodes the next value into v; comma when it follows a ',' in an
// array, check to validate it (checkSimResult). On an error located from
// the value's start, at gives the input offset.
func (d *simDecoder) decode(v *SimResult, comma, check bool) (at func() int64, err error) {
	start := d.lt.valueBase(d.dec.InputOffset(), comma)
	err = d.dec.Decode(v)
	if err == nil {
		d.scanned += d.dec.InputOffset() - start
		if check {
			line, col := d.lt.pos(d.lt.skipSpace(start))
			return nil, checkSimResult(v, d.name, line, col)
		}
		return nil, nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && !tokenLevel(se):
		scanned := d.scanned
		return func() int64 { return start + se.Offset - scanned - 1 }, err
	case errors.As(err, &te):
		return func() int64 { return start + te.Offset - 1 }, err
	}
	return nil, err
}

// fail locates and words err: at the offset at gives, or where the
// decoder stopped.
func (d *simDecoder) fail(err error, at func() int64) error {
	if e := (*Error)(nil); errors.As(err, &e) {
		return e // a decoded object that checkSimResult refused
	}
	off := d.dec.InputOffset()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case at != nil:
		off = at()
	case errors.As(err, &se):
		off = se.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		off = d.lt.base + int64(len(d.lt.buf))
	}
	switch {
	case errors.As(err, &te):
		msg = fmt.Sprintf("field %s: cannot read a JSON %s as %s", te.Field, te.Value, te.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		msg = "unexpected end of input"
	}
	line, col := d.lt.pos(off)
	return &Error{File: d.name, Line: line, Column: col, What: "json", Msg: oneLine(msg), Err: err}
}

// tokenLevel tells the syntax errors of json.Decoder's token reader, located
// by input offset, from those of its value scanner.
func tokenLevel(se *json.SyntaxError) bool {
	switch se.Error() {
	case "expected comma after array element", "not at beginning of value", "expected colon after object key":
		return true
	}
	return false
}

// firstNonSpace peeks at the first byte of br that is not white space,
// and the white space before it; found is false when there is none (an
// empty input, or white space alone). A NUL byte is a byte like any other.
func firstNonSpace(br *bufio.Reader) (c byte, skipped []byte, found bool, err error) {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			if err == io.EOF || err == bufio.ErrBufferFull {
				return 0, nil, false, nil
			}
			return 0, nil, false, err
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, b[:n-1], true, nil
		}
	}
}

// lineTracker converts decoder byte offsets to line and column in bounded
// memory: it keeps only the bytes read since the last settled offset. Offsets
// below base are a synthetic prefix the decoder read before this reader.
type lineTracker struct {
	r    io.Reader
	buf  []byte // bytes from offset base on
	base int64
	line int // line at base
	col  int // column at base
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// advance settles every byte before off.
func (t *lineTracker) advance(off int64) {
	k := int(off - t.base)
	if k <= 0 || k > len(t.buf) {
		return
	}
	t.line, t.col = t.walk(k)
	t.buf = append(t.buf[:0], t.buf[k:]...)
	t.base = off
}

// valueBase is where json.Decoder starts a value after offset before: past
// the separating comma (and the white space before it) when comma is set.
func (t *lineTracker) valueBase(before int64, comma bool) int64 {
	if !comma {
		return before
	}
	k := int(before - t.base)
	for k >= 0 && k < len(t.buf) {
		switch t.buf[k] {
		case ' ', '\t', '\r', '\n':
			k++
			continue
		case ',':
			return t.base + int64(k) + 1
		}
		break
	}
	return before
}

// skipSpace is the offset of the first byte at or after off that is not
// JSON white space (or the end of what was read).
func (t *lineTracker) skipSpace(off int64) int64 {
	k := int(off - t.base)
	for k >= 0 && k < len(t.buf) {
		switch t.buf[k] {
		case ' ', '\t', '\r', '\n':
			k++
			continue
		}
		break
	}
	return t.base + int64(k)
}

// pos gives the line and column of offset off (clamped to what was read).
func (t *lineTracker) pos(off int64) (int, int) {
	k := int(off - t.base)
	if k < 0 {
		k = 0
	}
	if k > len(t.buf) {
		k = len(t.buf)
	}
	return t.walk(k)
}

func (t *lineTracker) walk(k int) (int, int) {
	return advancePos(t.line, t.col, t.buf[:k])
}

// advancePos moves a line and column past b: columns count characters (UTF-8
// lead bytes), not bytes.
func advancePos(line, col int, b []byte) (int, int) {
	if n := bytes.Count(b, []byte{'\n'}); n > 0 {
		line, col = line+n, 1
		b = b[bytes.LastIndexByte(b, '\n')+1:]
	}
	for _, c := range b {
		if c < 0x80 || c >= 0xC0 {
			col++
		}
	}
	return line, col
}
