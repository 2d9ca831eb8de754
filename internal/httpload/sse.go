package httpload

import (
	"bytes"
	"errors"
	"fmt"
)

// DefaultMaxEventBytes bounds one SSE line or event, so a server that never
// sends a newline cannot make the client buffer without limit.
const DefaultMaxEventBytes = 4 << 20

// errEventTooLong reports an SSE line or event beyond the parser's bound.
var errEventTooLong = errors.New("sse event longer than the limit")

// SSEParser splits a Server-Sent Events byte stream into the data of its
// events, whatever the byte boundaries of the reads. It follows the SSE
// grammar: lines end in "\n", "\r\n" or "\r"; a blank line dispatches the
// event; "data:" lines (one optional space after the colon) accumulate, joined
// by "\n"; lines starting with ":" are comments (keep-alives); other fields
// ("event", "id", "retry") are ignored.
//
// After its buffers have grown to the largest event seen, Feed allocates
// nothing. The zero value is ready to use with DefaultMaxEventBytes.
type SSEParser struct {
	line    []byte // a line begun in an earlier Feed, not yet terminated
	data    []byte // data of the event being assembled
	hasData bool   // a data field was seen in the current event
	skipLF  bool   // the previous chunk ended in '\r': a leading '\n' ends that same line
	max     int    // bound on a line and on an event; 0 = DefaultMaxEventBytes
}

// NewSSEParser returns a parser bounding each line and event to maxEventBytes
// (DefaultMaxEventBytes when ≤ 0).
func NewSSEParser(maxEventBytes int) *SSEParser {
	return &SSEParser{max: maxEventBytes}
}

func (p *SSEParser) limit() int {
	if p.max <= 0 {
		return DefaultMaxEventBytes
	}
	return p.max
}

// Feed parses b and calls emit with the data of every event completed in it.
// The slice passed to emit is valid only during the call. An error from emit
// stops parsing and is returned as is.
func (p *SSEParser) Feed(b []byte, emit func(data []byte) error) error {
	if p.skipLF && len(b) > 0 {
		p.skipLF = false
		if b[0] == '\n' {
			b = b[1:]
		}
	}
	for len(b) > 0 {
		i := lineEnd(b)
		if i < 0 {
			if len(p.line)+len(b) > p.limit() {
				return fmt.Errorf("sse: line of more than %d bytes: %w", p.limit(), errEventTooLong)
			}
			p.line = append(p.line, b...)
			return nil
		}
		line := b[:i]
		if len(p.line) > 0 {
			if len(p.line)+len(line) > p.limit() {
				return fmt.Errorf("sse: line of more than %d bytes: %w", p.limit(), errEventTooLong)
			}
			p.line = append(p.line, line...)
			line = p.line
		}
		next := i + 1
		if b[i] == '\r' {
			if next < len(b) {
				if b[next] == '\n' {
					next++
				}
			} else {
				p.skipLF = true
			}
		}
		err := p.processLine(line, emit)
		p.line = p.line[:0]
		if err != nil {
			return err
		}
		b = b[next:]
	}
	return nil
}

// Finish ends the stream: a final line without its terminator is taken as a
// complete line, and an event whose blank line never came is dispatched (a
// lenient reading of servers that close right after their last event).
func (p *SSEParser) Finish(emit func(data []byte) error) error {
	if len(p.line) > 0 {
		err := p.processLine(p.line, emit)
		p.line = p.line[:0]
		if err != nil {
			return err
		}
	}
	if p.hasData {
		return p.dispatch(emit)
	}
	return nil
}

func (p *SSEParser) processLine(line []byte, emit func([]byte) error) error {
	if len(line) == 0 {
		if p.hasData {
			return p.dispatch(emit)
		}
		return nil
	}
	if line[0] == ':' {
		return nil // comment, e.g. a keep-alive ": ping"
	}
	field, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	if string(field) != "data" {
		return nil
	}
	if p.hasData {
		p.data = append(p.data, '\n')
	}
	if len(p.data)+len(value) > p.limit() {
		return fmt.Errorf("sse: event of more than %d bytes: %w", p.limit(), errEventTooLong)
	}
	p.data = append(p.data, value...)
	p.hasData = true
	return nil
}

func (p *SSEParser) dispatch(emit func([]byte) error) error {
	err := emit(p.data)
	p.data = p.data[:0]
	p.hasData = false
	return err
}

// lineEnd is the index of the first '\n' or '\r' in b, or -1. Two vectorised
// IndexByte scans beat one byte-by-byte IndexAny on long JSON lines.
func lineEnd(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	seg := b
	if n >= 0 {
		seg = b[:n]
	}
	if r := bytes.IndexByte(seg, '\r'); r >= 0 {
		return r
	}
	return n
}
