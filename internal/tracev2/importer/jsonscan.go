package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Helpers for the JSON importers. Both read with json.Decoder's token stream
// (UseNumber), so that every value's byte offset is known for error messages
// and no more than one value is held at a time.

// describe shows a JSON token in an error message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Number:
		return v.String()
	case string:
		return quote(v)
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	case json.Delim:
		switch v {
		case '[':
			return "a list"
		case '{':
			return "an object"
		}
		return string(v)
	}
	return "a value"
}

// isSep reports JSON whitespace and the separators between tokens.
func isSep(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ':', ',':
		return true
	}
	return false
}

// valueStart returns the offset of the first byte at or after off that is
// not whitespace or a separator: where the next token starts.
func valueStart(ra io.ReaderAt, off int64) int64 {
	var buf [512]byte
	for {
		n, err := ra.ReadAt(buf[:], off)
		for i := 0; i < n; i++ {
			if !isSep(buf[i]) {
				return off + int64(i)
			}
		}
		off += int64(n)
		if err != nil || n == 0 {
			return off
		}
	}
}

// skipValue consumes one JSON value whose first token is tok.
func skipValue(dec *json.Decoder, tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || (d != '[' && d != '{') {
		return nil
	}
	depth := 1
	for depth > 0 {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '[', '{':
				depth++
			default:
				depth--
			}
		}
	}
	return nil
}

// syntaxProblem turns a decoder error into a message and the file offset
// where it occurred; ok is false for I/O errors. ra holds the decoder's input
// at offset base; end is the offset of the end of the input.
//
// json.Decoder.Token reports unreliable SyntaxError offsets, but after a
// failed Token its InputOffset is the start of the offending token; the bad
// byte is then found by decoding from there alone (Decode's offsets are
// exact).
func syntaxProblem(dec *json.Decoder, err error, ra io.ReaderAt, base, end int64) (msg string, off int64, ok bool) {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		msg = "json syntax: " + se.Error()
		if strings.HasPrefix(se.Error(), "invalid character 'N'") ||
			strings.HasPrefix(se.Error(), "invalid character 'I'") {
			msg += " (Python writes NaN and Infinity, which are not JSON)"
		}
		return msg, badByte(ra, base+dec.InputOffset()), true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "json syntax: unexpected end of input", end, true
	}
	return "", base + dec.InputOffset(), false
}

// badByte returns the offset of the first invalid byte of the JSON value
// starting at start (start itself when the value is valid or too long).
func badByte(ra io.ReaderAt, start int64) int64 {
	buf := make([]byte, 4096)
	n, _ := ra.ReadAt(buf, start)
	var raw json.RawMessage
	err := json.NewDecoder(bytes.NewReader(buf[:n])).Decode(&raw)
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 {
		return start + se.Offset - 1
	}
	return start
}
