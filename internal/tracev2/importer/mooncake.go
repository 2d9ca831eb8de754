package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"servesim/internal/tracev2"
)

// MooncakeBlockTokens is the number of prompt tokens per hash_ids entry in the
// Mooncake traces.
const MooncakeBlockTokens = 512

// maxJSONLine bounds one JSONL line (a request with a 1M-token prompt has
// about 2000 hash ids, some 20 KB).
const maxJSONLine = 16 << 20

// Mooncake imports the Mooncake (FAST'25) JSONL traces: one object per line
// with timestamp (ms from the trace start), input_length, output_length and
// hash_ids, the remapped hashes of the prompt's 512-token blocks (equal ids
// are shareable prefix KV blocks).
//
// Mapping: arrival_time_us = timestamp × 1000 (kept on the file's origin);
// send_time_us = arrival_time_us; input_tokens = input_length (the whole
// prompt; prefix_length 0, since sharing is given block by block);
// output_tokens = output_length; ext_hash_ids = hash_ids; request_id =
// 0-based record index; status ok; chunk times 0. Unknown keys are ignored;
// blank lines are skipped; a known key given twice is an error. A hash_ids
// length other than
// ceil(input_length/512) is a warning.
type Mooncake struct {
	file    string
	br      *bufio.Reader
	line    int // physical line number of the last line read
	buf     []byte
	client  string
	hdr     *tracev2.Header
	records int64
	stream
}

// NewMooncake reads up to the first record of a Mooncake JSONL trace.
func NewMooncake(name string, r io.Reader, opts Options) (*Mooncake, error) {
	m := &Mooncake{
		file:   displayName(name),
		br:     bufio.NewReaderSize(r, 64<<10),
		client: clientID(opts, "mooncake", name, "_trace", "trace_", "mooncake_", "mooncake"),
		hdr:    newHeader(),
	}
	if err := m.start(m.read); err != nil {
		return nil, err
	}
	return m, nil
}

// Header describes the imported trace (no wall-clock origin is known).
func (m *Mooncake) Header() *tracev2.Header { return m.hdr.Clone() }

// readLine returns the next physical line without its line end.
func (m *Mooncake) readLine() ([]byte, error) {
	m.buf = m.buf[:0]
	for {
		chunk, err := m.br.ReadSlice('\n')
		if len(m.buf)+len(chunk) > maxJSONLine {
			return nil, &Error{File: m.file, Line: m.line + 1, Column: 1,
				Msg: fmt.Sprintf("line longer than %d MiB", maxJSONLine>>20)}
		}
		m.buf = append(m.buf, chunk...)
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
		case io.EOF:
			if len(m.buf) == 0 {
				return nil, io.EOF
			}
		default:
			return nil, fmt.Errorf("%s: read: %w", m.file, err)
		}
		m.line++
		line := bytes.TrimSuffix(m.buf, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if m.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		return line, nil
	}
}

func (m *Mooncake) read() (tracev2.Record, error) {
	for {
		line, err := m.readLine()
		if err != nil {
			return tracev2.Record{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, ok := m.parseFlat(line)
		if !ok {
			return m.parse(line)
		}
		m.finish(&rec)
		return rec, nil
	}
}

// mooncakeLine is the state of one line's parse, for error positions.
type mooncakeLine struct {
	m    *Mooncake
	line []byte
	dec  *json.Decoder
}

// errAt is an *Error at byte offset off of the line.
func (p *mooncakeLine) errAt(off int64, field, msg string) *Error {
	_, col := lineCol(p.line, int(off))
	return &Error{File: p.m.file, Line: p.m.line, Column: col, Field: field, Msg: msg}
}

// start returns where the token after offset prevEnd begins (computed only
// for error messages, to keep the hot path free of it).
func (p *mooncakeLine) start(prevEnd int64) int64 {
	for prevEnd < int64(len(p.line)) && isSep(p.line[prevEnd]) {
		prevEnd++
	}
	return prevEnd
}

// token reads the next token; syntax errors become *Error. It also returns
// the offset where the previous token ended (see start).
func (p *mooncakeLine) token() (json.Token, int64, error) {
	start := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		msg, off, ok := syntaxProblem(p.dec, err, bytes.NewReader(p.line), 0, int64(len(p.line)))
		if !ok {
			return nil, start, err
		}
		return nil, off, p.errAt(off, "", msg)
	}
	return tok, start, nil
}

func (m *Mooncake) parse(line []byte) (tracev2.Record, error) {
	p := &mooncakeLine{m: m, line: line, dec: json.NewDecoder(bytes.NewReader(line))}
	p.dec.UseNumber()
	tok, start, err := p.token()
	if err != nil {
		return tracev2.Record{}, err
	}
	if tok != json.Delim('{') {
		return tracev2.Record{}, p.errAt(p.start(start), "", "json syntax: want an object per line, got "+describe(tok))
	}
	rec := tracev2.Record{ClientID: m.client, Status: "ok"}
	var haveTS, haveIn, haveOut bool
	seen := map[string]bool{}
	for p.dec.More() {
		ktok, kstart, err := p.token()
		if err != nil {
			return tracev2.Record{}, err
		}
		key, _ := ktok.(string) // object keys are always strings
		if seen[key] {
			return tracev2.Record{}, p.errAt(p.start(kstart), key, "appears twice in the object")
		}
		switch key {
		case "timestamp", "input_length", "output_length", "hash_ids":
			seen[key] = true
		}
		vtok, vstart, err := p.token()
		if err != nil {
			return tracev2.Record{}, err
		}
		bad := func(prob string) error { return p.errAt(p.start(vstart), key, describe(vtok)+" "+prob) }
		switch key {
		case "timestamp":
			n, ok := vtok.(json.Number)
			if !ok {
				return tracev2.Record{}, bad(probNotNumber)
			}
			us, prob := parseDuration(n.String(), 1e3)
			if prob != "" {
				return tracev2.Record{}, bad(prob)
			}
			rec.ArrivalTimeUs, rec.SendTimeUs, haveTS = us, us, true
		case "input_length", "output_length":
			n, ok := vtok.(json.Number)
			if !ok {
				return tracev2.Record{}, bad(probNotInt)
			}
			c, prob := parseCount(n.String(), true)
			if prob != "" {
				return tracev2.Record{}, bad(prob)
			}
			if key == "input_length" {
				rec.InputTokens, haveIn = c, true
			} else {
				rec.OutputTokens, haveOut = c, true
			}
		case "hash_ids":
			ids, err := p.hashIDs(vtok, vstart)
			if err != nil {
				return tracev2.Record{}, err
			}
			rec.HashIDs = ids
		default:
			if err := skipValue(p.dec, vtok); err != nil {
				_, err2 := p.syntaxErr(err)
				return tracev2.Record{}, err2
			}
		}
	}
	end, endStart, err := p.token()
	if err != nil {
		return tracev2.Record{}, err
	}
	if end != json.Delim('}') {
		return tracev2.Record{}, p.errAt(p.start(endStart), "", "json syntax: want } to close the object")
	}
	xstart := p.dec.InputOffset()
	if _, err := p.dec.Token(); err != io.EOF {
		return tracev2.Record{}, p.errAt(p.start(xstart), "", "json syntax: unexpected data after the object (want one object per line)")
	}
	for _, f := range [...]struct {
		have bool
		name string
	}{{haveTS, "timestamp"}, {haveIn, "input_length"}, {haveOut, "output_length"}} {
		if !f.have {
			return tracev2.Record{}, p.errAt(p.start(endStart), f.name, "missing")
		}
	}
	m.finish(&rec)
	return rec, nil
}

// finish numbers a parsed record and checks its block count.
func (m *Mooncake) finish(rec *tracev2.Record) {
	if want := (rec.InputTokens + MooncakeBlockTokens - 1) / MooncakeBlockTokens; rec.HashIDs != nil && len(rec.HashIDs) != want {
		m.warn.add("%s:%d: hash_ids has %d blocks, want ceil(input_length/%d) = %d",
			m.file, m.line, len(rec.HashIDs), MooncakeBlockTokens, want)
	}
	rec.RequestID = m.records
	m.records++
}

// syntaxErr converts a decoder error met while skipping a value.
func (p *mooncakeLine) syntaxErr(err error) (int64, error) {
	msg, off, ok := syntaxProblem(p.dec, err, bytes.NewReader(p.line), 0, int64(len(p.line)))
	if !ok {
		return off, err
	}
	return off, p.errAt(off, "", msg)
}

// hashIDs reads the hash_ids list whose opening token was already read.
func (p *mooncakeLine) hashIDs(open json.Token, start int64) ([]int64, error) {
	if open != json.Delim('[') {
		return nil, p.errAt(p.start(start), "hash_ids", describe(open)+" is not a list of integers")
	}
	ids := []int64{}
	for i := 0; p.dec.More(); i++ {
		tok, tstart, err := p.token()
		if err != nil {
			return nil, err
		}
		if i == tracev2.MaxHashIDs {
			return nil, p.errAt(p.start(tstart), fmt.Sprintf("hash_ids[%d]", i), fmt.Sprintf("more than %d entries", tracev2.MaxHashIDs))
		}
		n, ok := tok.(json.Number)
		prob := probNotInt
		var id int64
		if ok {
			id, prob = parseInt64(n.String())
		}
		if prob != "" {
			return nil, p.errAt(p.start(tstart), fmt.Sprintf("hash_ids[%d]", i), describe(tok)+" "+prob)
		}
		ids = append(ids, id)
	}
	if _, _, err := p.token(); err != nil { // the closing ]
		return nil, err
	}
	return ids, nil
}
