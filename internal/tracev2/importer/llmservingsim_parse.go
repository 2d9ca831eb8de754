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
		vstart := p.start(vbegin)
		bad := func(prob string) error { return p.errAt(vstart, key, describe(vtok)+" "+prob) }
		known := true
		switch key {
		case "request_id":
			switch v := vtok.(type) {
			case string:
				row.id = v
			case json.Number:
				row.id = v.String()
			default:
				return row, bad("is not a string or a number")
			}
		case "input_toks", "output_toks":
			n, ok := vtok.(json.Number)
			if !ok {
				return row, bad(probNotInt)
			}
			c, prob := parseCount(n.String(), true)
			if prob != "" {
				return row, bad(prob)
			}
			if key == "input_toks" {
				row.in = c
			} else {
				row.out = c
			}
		case "arrival_time":
			s, prob := seconds(vtok, false)
			if prob != "" {
				return row, bad(prob)
			}
			row.arrival = s
		case "queued_ts", "scheduled_ts", "first_token_ts", "last_token_ts":
			s, prob := seconds(vtok, true)
			if prob != "" {
				return row, bad(prob)
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
			known = false
			if err := skipValue(p.dec, vtok); err != nil {
				msg, off, ok := syntaxProblem(p.dec, err, bytes.NewReader(p.line), 0, int64(len(p.line)))
				if !ok {
					return row, err
				}
				return row, p.errAt(off, "", msg)
			}
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
	xbegin := p.dec.InputOffset()
	switch _, err := p.dec.Token(); {
	case err == io.EOF:
	case err != nil:
		msg, off, ok := syntaxProblem(p.dec, err, bytes.NewReader(p.line), 0, int64(len(p.line)))
		if !ok {
			return row, err
		}
		return row, p.errAt(off, "", msg)
	default:
		return row, p.errAt(p.start(xbegin), "", "json syntax: unexpected data after the object (want one object per line)")
	}
	for _, name := range [...]string{"input_toks", "output_toks", "arrival_time"} {
		if !seen[name] {
			return row, p.errAt(p.start(endBegin), name, "missing")
		}
	}
	return row, nil
}
