package importer

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
)

// llmsLine is the state of one requests.jsonl line's parse, for error
// positions.
type llmsLine struct {
	file string
	no   int
	line []byte
	dec  *json.Decoder
}

// errAt is an *Error at byte offset off of the line.
func (p *llmsLine) errAt(off int64, field, msg string) *Error {
	_, col := lineCol(p.line, int(off))
	return &Error{File: p.file, Line: p.no, Column: col, Field: field, Msg: msg}
}

// col is the 1-based character column of byte offset off.
func (p *llmsLine) col(off int64) int {
	_, c := lineCol(p.line, int(off))
	return c
}

// start returns where the token after offset prevEnd begins.
func (p *llmsLine) start(prevEnd int64) int64 {
	for prevEnd < int64(len(p.line)) && isSep(p.line[prevEnd]) {
		prevEnd++
	}
	return prevEnd
}

// token reads the next token; syntax errors become *Error. It also returns
// the offset where the previous token ended (see start).
func (p *llmsLine) token() (json.Token, int64, error) {
	begin := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		msg, off, ok := syntaxProblem(p.dec, err, bytes.NewReader(p.line), 0, int64(len(p.line)))
		if !ok {
			return nil, begin, err
		}
		return nil, off, p.errAt(off, "", msg)
	}
	return tok, begin, nil
}

// seconds parses a finite, non-negative number of seconds. null gives 0
// (absent) when nullable.
func seconds(tok json.Token, nullable bool) (float64, string) {
	if tok == nil && nullable {
		return 0, ""
	}
	n, ok := tok.(json.Number)
	if !ok {
		return 0, probNotNumber
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	switch {
	case err != nil && !isRangeErr(err):
		return 0, probNotNumber
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, probNotFinite
	case f < 0:
		return 0, probNegative
	case f > maxSeconds:
		return 0, probRange
	}
	return f, ""
}

// parseLine parses one request object.
func (l *LLMServingSim) parseLine(text []byte, no int) (llmsRow, error) {
	p := &llmsLine{file: l.file, no: no, line: text, dec: json.NewDecoder(bytes.NewReader(text))}
	p.dec.UseNumber()
	row := llmsRow{line: no}
	tok, begin, err := p.token()
	if err != nil {
		return row, err
	}
	if tok != json.Delim('{') {
		return row, p.errAt(p.start(begin), "", "json syntax: want an object per line, got "+describe(tok))
	}
	seen := map[string]bool{}
	for p.dec.More() {
		ktok, kbegin, err := p.token()
		if err != nil {
			return row, err
		}
		key, _ := ktok.(string) // object keys are always strings
		vtok, vbegin, err := p.token()
		if err != nil {
			return row, err
		}
		known, err := p.field(&row, key, vtok, p.start(vbegin))
		if err != nil {
			return row, err
		}
		if known {
			if seen[key] {
				return row, p.errAt(p.start(kbegin), key, "appears twice in the object")
			}
			seen[key] = true
		}
	}
	end, endBegin, err := p.token()
	if err != nil {
		return row, err
	}
	if end != json.Delim('}') {
		return row, p.errAt(p.start(endBegin), "", "json syntax: want } to close the object")
	}
	if err := p.nothingAfter(); err != nil {
		return row, err
	}
	for _, name := range [...]string{"input_toks", "output_toks", "arrival_time"} {
		if !seen[name] {
			return row, p.errAt(p.start(endBegin), name, "missing")
		}
	}
	return row, nil
}

// field stores the value vtok of key, which starts at byte vstart of the
// line, in row. known is false for a key this importer does not read,
// whose value is skipped.
func (p *llmsLine) field(row *llmsRow, key string, vtok json.Token, vstart int64) (known bool, err error) {
	bad := func(prob string) error { return p.errAt(vstart, key, describe(vtok)+" "+prob) }
	switch key {
	case "request_id":
		switch v := vtok.(type) {
		case string:
			row.id = v
		case json.Number:
			row.id = v.String()
		default:
			return true, bad("is not a string or a number")
		}
	case "input_toks", "output_toks":
		n, ok := vtok.(json.Number)
		if !ok {
			return true, bad(probNotInt)
		}
		c, prob := parseCount(n.String(), true)
		if prob != "" {
			return true, bad(prob)
		}
		if key == "input_toks" {
			row.in = c
		} else {
			row.out = c
		}
	case "arrival_time":
		s, prob := seconds(vtok, false)
		if prob != "" {
			return true, bad(prob)
		}
		row.arrival = s
	case "queued_ts", "scheduled_ts", "first_token_ts", "last_token_ts":
		s, prob := seconds(vtok, true)
		if prob != "" {
			return true, bad(prob)
		}
		switch key {
		case "queued_ts":
			row.queued, row.colQueued = s, p.col(vstart)
		case "scheduled_ts":
			row.sched = s
		case "first_token_ts":
			row.ft, row.colFT = s, p.col(vstart)
		default:
			row.lt, row.colL = s, p.col(vstart)
		}
	default:
		if err := skipValue(p.dec, vtok); err != nil {
			return false, p.syntaxError(err)
		}
		return false, nil
	}
	return true, nil
}

// nothingAfter checks that the line holds nothing after its object.
func (p *llmsLine) nothingAfter() error {
	xbegin := p.dec.InputOffset()
	switch _, err := p.dec.Token(); {
	case err == io.EOF:
		return nil
	case err != nil:
		return p.syntaxError(err)
	}
	return p.errAt(p.start(xbegin), "", "json syntax: unexpected data after the object (want one object per line)")
}

// syntaxError locates a JSON decoder's error in the line, or returns it as
// it is when it is not a syntax error.
func (p *llmsLine) syntaxError(err error) error {
	msg, off, ok := syntaxProblem(p.dec, err, bytes.NewReader(p.line), 0, int64(len(p.line)))
	if !ok {
		return err
	}
	return p.errAt(off, "", msg)
}
