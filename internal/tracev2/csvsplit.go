package tracev2

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unicode/utf8"
)

const (
	// maxRowBytes is the longest accepted row (docs/tracev2.md §4.7), quoted line
	// breaks included.
	maxRowBytes = 1 << 20
	// bufSize is the read buffer; most rows fit in it and are parsed in place.
	bufSize = 64 << 10
	// maxDrainBytes bounds how far a line over maxRowBytes is read to find
	// its end.
	maxDrainBytes = 64 << 20
)

// errRowTooLong marks a row longer than maxRowBytes; the line was consumed.
var errRowTooLong = errors.New("row is longer than 1 MiB")

// lineSource yields physical lines and counts them.
type lineSource struct {
	br    *bufio.Reader
	name  string
	line  int    // physical line number of the last line returned
	long  []byte // assembles a line longer than the bufio buffer
	bytes int64  // bytes of the lines returned so far (for size estimates)
	lines int    // lines returned so far, without those before line0
	torn  bool   // the last line returned had no line end: the input's last
}

// next returns the next physical line without its "\n" or "\r\n". The slice
// is valid until the next call. At the end it returns io.EOF; a line over
// maxRowBytes is consumed and reported as errRowTooLong; other errors are
// read failures.
func (s *lineSource) next() ([]byte, error) {
	b, err := s.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], b...)
		drained := int64(len(b))
		for err == bufio.ErrBufferFull {
			b, err = s.br.ReadSlice('\n')
			if len(s.long) <= maxRowBytes {
				s.long = append(s.long, b...)
			}
			// A line is drained to its end so the next row can be read, but
			// not forever: /dev/zero has no line end.
			if drained += int64(len(b)); drained > maxDrainBytes {
				return nil, &Error{File: s.name, Line: s.line + 1, Column: 1,
					Msg: fmt.Sprintf("a line longer than %d MiB: not a trace", maxDrainBytes>>20)}
			}
		}
		b = s.long
		if len(b) > maxRowBytes+2 {
			s.line++
			if err != nil && err != io.EOF {
				return nil, inputError(s.name, s.line, err)
			}
			return nil, errRowTooLong
		}
	}
	if err != nil && err != io.EOF {
		return nil, inputError(s.name, s.line+1, err)
	}
	if len(b) == 0 {
		return nil, io.EOF
	}
	s.line++
	s.bytes += int64(len(b))
	s.lines++
	s.torn = b[len(b)-1] != '\n'
	if n := len(b); b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b, nil
}

// splitter cuts a row into fields (RFC 4180, as encoding/csv reads it without
// LazyQuotes). A row without a double quote is cut in place; a quoted row is
// unescaped into buf and may pull more lines from the source.
type splitter struct {
	src    *lineSource
	fields [][]byte
	buf    []byte
	ends   []int
}

// split cuts the row that begins with line.
func (s *splitter) split(line []byte) error {
	if bytes.IndexByte(line, '"') >= 0 {
		return s.splitQuoted(line)
	}
	// No quotes: cut at every comma, eight bytes at a time. For each
	// little-endian word, m gets the high bit of every byte equal to ','
	// (exact zero-byte test of w XOR ",,,,,,,,").
	const ones7, commas = 0x7f7f7f7f7f7f7f7f, 0x2c2c2c2c2c2c2c2c
	s.fields = s.fields[:0]
	start, i := 0, 0
	for ; i+8 <= len(line); i += 8 {
		x := binary.LittleEndian.Uint64(line[i:]) ^ commas
		m := ^(((x & ones7) + ones7) | x | ones7)
		for m != 0 {
			j := i + bits.TrailingZeros64(m)>>3
			s.fields = append(s.fields, line[start:j])
			start = j + 1
			m &= m - 1
		}
	}
	for ; i < len(line); i++ {
		if line[i] == ',' {
			s.fields = append(s.fields, line[start:i])
			start = i + 1
		}
	}
	s.fields = append(s.fields, line[start:])
	return nil
}

func (s *splitter) splitQuoted(cur []byte) error {
	s.fields = s.fields[:0]
	s.buf = s.buf[:0]
	s.ends = s.ends[:0]
	pos := 0
	for {
		if pos < len(cur) && cur[pos] == '"' {
			openLine, openCol := s.src.line, charPos(cur, pos)
			pos++
		quoted:
			for {
				i := bytes.IndexByte(cur[pos:], '"')
				if i < 0 {
					// A line break inside quotes reads as "\n" whatever the
					// file's line ends; stray '\r's before it go too, so
					// that decode -> encode -> decode is stable.
					seg := cur[pos:]
					for len(seg) > 0 && seg[len(seg)-1] == '\r' {
						seg = seg[:len(seg)-1]
					}
					s.buf = append(s.buf, seg...)
					s.buf = append(s.buf, '\n')
					next, err := s.src.next()
					if err == io.EOF {
						return &Error{File: s.src.name, Line: openLine, Column: openCol, What: "csv syntax",
							Msg: `extraneous or missing " in quoted field (the quoted field is never closed)`}
					}
					if err != nil {
						return err
					}
					if len(s.buf)+len(next) > maxRowBytes {
						return errRowTooLong
					}
					cur, pos = next, 0
					continue
				}
				s.buf = append(s.buf, cur[pos:pos+i]...)
				pos += i + 1
				if pos >= len(cur) {
					s.ends = append(s.ends, len(s.buf))
					s.fieldsFromBuf()
					return nil
				}
				switch cur[pos] {
				case '"':
					s.buf = append(s.buf, '"')
					pos++
				case ',':
					pos++
					s.ends = append(s.ends, len(s.buf))
					break quoted
				default:
					return &Error{File: s.src.name, Line: s.src.line, Column: charPos(cur, pos), What: "csv syntax",
						Msg: `extraneous or missing " in quoted field`}
				}
			}
			continue
		}
		i := bytes.IndexByte(cur[pos:], ',')
		f := cur[pos:]
		if i >= 0 {
			f = cur[pos : pos+i]
		}
		if j := bytes.IndexByte(f, '"'); j >= 0 {
			return &Error{File: s.src.name, Line: s.src.line, Column: charPos(cur, pos+j), What: "csv syntax",
				Msg: `bare " in unquoted field`}
		}
		s.buf = append(s.buf, f...)
		s.ends = append(s.ends, len(s.buf))
		if i < 0 {
			s.fieldsFromBuf()
			return nil
		}
		pos += i + 1
	}
}

func (s *splitter) fieldsFromBuf() {
	start := 0
	for _, e := range s.ends {
		s.fields = append(s.fields, s.buf[start:e])
		start = e
	}
}

// charPos is the 1-based character position of byte offset i in line.
func charPos(line []byte, i int) int {
	if i > len(line) {
		i = len(line)
	}
	return utf8.RuneCount(line[:i]) + 1
}
