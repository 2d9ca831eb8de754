package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"servesim/internal/tracev2"
)

// arrayCursor reads the elements of one JSON array of the file, one at a
// time, from its own decoder positioned at the array's '['.
type arrayCursor struct {
	v     *VLLM
	name  string
	dec   *json.Decoder
	base  int64 // file offset of the decoder's first byte (the '[')
	count int   // elements read so far
	done  bool  // the closing ']' was read
	// prevEnd is the file offset where the token before the last element (or
	// the ']') ended; where the element starts is computed from it only for
	// error messages (pos).
	prevEnd int64
}

// pos is the file offset of the last element read (or of the ']').
func (c *arrayCursor) pos() int64 { return valueStart(c.v.ra, c.prevEnd) }

func (v *VLLM) openArray(name string, off int64) (*arrayCursor, error) {
	c := &arrayCursor{v: v, name: name, base: off,
		dec: json.NewDecoder(io.NewSectionReader(v.ra, off, v.size-off))}
	c.dec.UseNumber()
	tok, err := c.dec.Token()
	if err != nil {
		return nil, v.decErr(c.dec, off, err)
	}
	if tok != json.Delim('[') {
		return nil, v.errAt(off, name, describe(tok)+" is not a list")
	}
	return c, nil
}

// token returns the next element's first token; done is true at the ']'.
func (c *arrayCursor) token() (tok json.Token, done bool, err error) {
	if c.done {
		return nil, true, nil
	}
	c.prevEnd = c.base + c.dec.InputOffset()
	tok, err = c.dec.Token()
	if err != nil {
		return nil, false, c.v.decErr(c.dec, c.base, err)
	}
	if tok == json.Delim(']') {
		c.done = true
		return nil, true, nil
	}
	c.count++
	return tok, false, nil
}

// fieldName names the current element, e.g. ttfts[3].
func (c *arrayCursor) fieldName() string { return fmt.Sprintf("%s[%d]", c.name, c.count-1) }

// bad is an error about the current element.
func (c *arrayCursor) bad(tok json.Token, prob string) error {
	return c.v.errAt(c.pos(), c.fieldName(), describe(tok)+" "+prob)
}

// float reads a number element; nonNeg rejects negative values.
func (c *arrayCursor) float(nonNeg bool) (float64, bool, error) {
	tok, done, err := c.token()
	if err != nil || done {
		return 0, done, err
	}
	f, prob := jsonFloat(tok, nonNeg)
	if prob != "" {
		return 0, false, c.bad(tok, prob)
	}
	return f, false, nil
}

// jsonFloat checks a number token; it returns the problem or "".
func jsonFloat(tok json.Token, nonNeg bool) (float64, string) {
	n, ok := tok.(json.Number)
	if !ok {
		return 0, probNotNumber
	}
	f, err := n.Float64()
	switch {
	case err != nil && !isRangeErr(err):
		return 0, probNotNumber
	case math.IsInf(f, 0) || math.IsNaN(f):
		return 0, probNotFinite
	case nonNeg && f < 0:
		return 0, probNegative
	}
	return f, ""
}

// count reads a token-count element.
func (c *arrayCursor) countElem() (int, bool, error) {
	tok, done, err := c.token()
	if err != nil || done {
		return 0, done, err
	}
	n, ok := tok.(json.Number)
	if !ok {
		return 0, false, c.bad(tok, probNotInt)
	}
	k, prob := parseCount(n.String(), true)
	if prob != "" {
		return 0, false, c.bad(tok, prob)
	}
	return k, false, nil
}

// gaps reads one itls element, a list of seconds, and returns its sum and
// length.
func (c *arrayCursor) gaps() (sum float64, n int, done bool, err error) {
	tok, done, err := c.token()
	if err != nil || done {
		return 0, 0, done, err
	}
	if tok != json.Delim('[') {
		return 0, 0, false, c.bad(tok, "is not a list of seconds")
	}
	for c.dec.More() {
		prevEnd := c.base + c.dec.InputOffset()
		t, err := c.dec.Token()
		if err != nil {
			return 0, 0, false, c.v.decErr(c.dec, c.base, err)
		}
		f, prob := jsonFloat(t, true)
		if prob != "" {
			return 0, 0, false, c.v.errAt(valueStart(c.v.ra, prevEnd), fmt.Sprintf("%s[%d]", c.fieldName(), n), describe(t)+" "+prob)
		}
		sum += f
		n++
	}
	if _, err := c.dec.Token(); err != nil { // the closing ]
		return 0, 0, false, c.v.decErr(c.dec, c.base, err)
	}
	return sum, n, false, nil
}

// text reads an errors element: a string, or null for none.
func (c *arrayCursor) text() (string, bool, error) {
	tok, done, err := c.token()
	if err != nil || done {
		return "", done, err
	}
	switch s := tok.(type) {
	case string:
		return s, false, nil
	case nil:
		return "", false, nil
	}
	return "", false, c.bad(tok, "is not a string")
}

// short is the error for an array that ended before input_lens.
func (c *arrayCursor) short() error {
	return c.v.errAt(c.pos(), c.name, fmt.Sprintf("has %d elements, input_lens has more", c.count))
}

// read builds the next record from the next element of every array.
func (v *VLLM) read() (tracev2.Record, error) {
	e, done, err := v.nextElems()
	if err != nil || done {
		return tracev2.Record{}, err
	}
	return v.record(&e)
}

// vllmElems are the next element of every array of a vLLM result.
type vllmElems struct {
	in, out           int
	ttft, itlSum      float64
	itlN              int
	msg               string
	start, queue, lat float64
	haveLat           bool
}

// nextElems takes the next element of every array; done at the end of
// them all, which is an error unless they all end together.
func (v *VLLM) nextElems() (e vllmElems, done bool, err error) {
	e.in, done, err = v.in.countElem()
	if err != nil {
		return e, false, err
	}
	if done {
		return e, true, v.checkEnds()
	}
	e.out, done, err = v.out.countElem()
	if err == nil && done {
		err = v.out.short()
	}
	if err != nil {
		return e, false, err
	}
	e.ttft, done, err = v.ttft.float(true)
	if err == nil && done {
		err = v.ttft.short()
	}
	if err != nil {
		return e, false, err
	}
	e.itlSum, e.itlN, done, err = v.itl.gaps()
	if err == nil && done {
		err = v.itl.short()
	}
	if err != nil {
		return e, false, err
	}
	e.msg, done, err = v.errs.text()
	if err == nil && done {
		err = v.errs.short()
	}
	if err != nil {
		return e, false, err
	}
	e.haveLat = v.lat != nil
	for _, f := range [...]struct {
		c      *arrayCursor
		dst    *float64
		nonNeg bool
	}{{v.starts, &e.start, true}, {v.queues, &e.queue, true}, {v.lat, &e.lat, true}} {
		if f.c == nil {
			continue
		}
		x, done, err := f.c.float(f.nonNeg)
		if err == nil && done {
			err = f.c.short()
		}
		if err != nil {
			return e, false, err
		}
		*f.dst = x
	}
	return e, false, nil
}

// record turns one element of every array into a record: times from the
// start (send), queue and latency or ITL arrays, relative to t0.
func (v *VLLM) record(e *vllmElems) (tracev2.Record, error) {
	rec := tracev2.Record{
		RequestID:    v.records,
		ClientID:     v.client,
		Streaming:    true,
		InputTokens:  e.in,
		OutputTokens: e.out,
		Status:       "ok",
	}
	v.records++
	if e.msg != "" {
		rec.Status, rec.ErrorMessage = "error", cleanError(e.msg)
		if rec.ErrorMessage == "" {
			rec.ErrorMessage = "error"
		}
	}
	if v.starts != nil {
		send, prob := durationUs(e.start-v.t0, 1e6)
		arrival, prob2 := durationUs(e.start-e.queue-v.t0, 1e6)
		if prob != "" || prob2 != "" { // t0 is the minimum, so only overflow is possible
			return tracev2.Record{}, v.errAt(v.starts.pos(), v.starts.fieldName(), "is out of range")
		}
		rec.ArrivalTimeUs, rec.SendTimeUs = arrival, max(send, arrival)
	}
	if e.ttft > 0 { // a first token was received
		first, prob := durationUs(e.ttft, 1e6)
		if prob != "" {
			return tracev2.Record{}, v.errAt(v.ttft.pos(), v.ttft.fieldName(), describe(json.Number(fmt.Sprint(e.ttft)))+" "+prob)
		}
		rec.FirstChunkTimeUs = max(rec.SendTimeUs+first, 1) // 0 means never
		span, spanOf := e.itlSum, v.itl
		if e.haveLat {
			span, spanOf = e.lat-e.ttft, v.lat
		}
		gap, prob := durationUs(math.Max(span, 0), 1e6)
		rec.LastChunkTimeUs = rec.FirstChunkTimeUs + gap
		rec.NumChunks = 1 + e.itlN
		if prob == "" && (tracev2.IsEpoch(rec.FirstChunkTimeUs) || tracev2.IsEpoch(rec.LastChunkTimeUs)) {
			prob = probEpoch
		}
		if prob != "" {
			return tracev2.Record{}, v.errAt(spanOf.pos(), spanOf.fieldName(), "the last chunk time "+prob)
		}
	}
	return rec, nil
}

// checkEnds reports an array with more elements than input_lens; else io.EOF.
func (v *VLLM) checkEnds() error {
	for _, c := range [...]*arrayCursor{v.out, v.ttft, v.itl, v.errs, v.starts, v.queues, v.lat} {
		if c == nil {
			continue
		}
		_, done, err := c.token()
		if err != nil {
			return err
		}
		if !done {
			return v.errAt(c.pos(), c.name, fmt.Sprintf("has more elements than input_lens (%d)", v.in.count))
		}
	}
	return io.EOF
}
