package httpload

import "servesim/internal/jsonscan"

// chunk is what the client needs from one OpenAI response object: a
// streamed chunk ("chat.completion.chunk", "text_completion") or a whole
// non-streamed body. Byte slices point into the decoded data.
type chunk struct {
	text      bool   // some choice carried generated text, reasoning or a tool call
	finish    []byte // last non-null finish_reason, raw
	hasFinish bool

	usage      bool // a non-null usage object
	prompt     int  // usage.prompt_tokens
	completion int  // usage.completion_tokens
	cached     int  // usage.prompt_tokens_details.cached_tokens
	hasCached  bool

	isErr  bool   // an error object instead of a completion
	errMsg []byte // its message, raw
}

// decodeChunk reads one JSON object into c (which it resets). It recognises
// choices[].delta / choices[].message with content, reasoning_content,
// reasoning and tool_calls; choices[].text (completions); finish_reason;
// usage with prompt_tokens_details.cached_tokens; and the two error shapes
// vLLM uses ({"error": {...}} and {"object": "error", "message": ...}).
// Everything else, a known key whose value has another shape included, is
// validated and skipped: a chunk is rejected only when it is not JSON (or a
// count is out of range). It does not allocate.
func decodeChunk(data []byte, c *chunk) error {
	*c = chunk{}
	s := jscan{jsonscan.New(data)}
	err := s.Object(func(key []byte) error {
		switch string(key) {
		case "choices":
			if s.Peek() != '[' {
				return s.Skip() // null, or a shape no server sends: nothing to read
			}
			return s.Array(func() error { return s.choice(c) })
		case "usage":
			if s.Peek() != '{' {
				return s.Skip()
			}
			c.usage = true
			return s.usage(c)
		case "error":
			if s.Null() {
				return nil
			}
			c.isErr = true
			return s.errorValue(c)
		case "object":
			if s.Peek() != '"' {
				return s.Skip()
			}
			v, err := s.Str()
			if string(v) == "error" {
				c.isErr = true
			}
			return err
		case "message":
			if s.Peek() != '"' {
				return s.Skip()
			}
			v, err := s.Str()
			if len(c.errMsg) == 0 {
				c.errMsg = v
			}
			return err
		default:
			return s.Skip()
		}
	})
	if err != nil {
		return err
	}
	if !c.isErr {
		c.errMsg = nil // a top-level "message" means nothing without an error
	}
	return s.End()
}

func (s *jscan) choice(c *chunk) error {
	if s.Peek() != '{' {
		return s.Skip()
	}
	return s.Object(func(key []byte) error {
		switch string(key) {
		case "delta", "message":
			if s.Peek() != '{' {
				return s.Skip()
			}
			return s.Object(func(k []byte) error {
				switch string(k) {
				case "content", "reasoning_content", "reasoning":
					return s.textField(c)
				case "tool_calls":
					if s.Peek() != '[' {
						return s.Skip()
					}
					n := 0
					err := s.Array(func() error { n++; return s.Skip() })
					if n > 0 {
						c.text = true
					}
					return err
				default:
					return s.Skip()
				}
			})
		case "text":
			return s.textField(c)
		case "finish_reason":
			if s.Peek() != '"' {
				return s.Skip()
			}
			v, err := s.Str()
			c.finish, c.hasFinish = v, err == nil
			return err
		default:
			return s.Skip()
		}
	})
}

// textField reads a string-or-null value; a non-empty string is generated text.
func (s *jscan) textField(c *chunk) error {
	if s.Null() {
		return nil
	}
	if s.Peek() != '"' {
		return s.Skip()
	}
	v, err := s.Str()
	if len(v) > 0 {
		c.text = true
	}
	return err
}

func (s *jscan) usage(c *chunk) error {
	return s.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "prompt_tokens", "completion_tokens":
			if !s.atNumber() {
				return s.Skip()
			}
			n, e := s.count()
			if string(key) == "prompt_tokens" {
				c.prompt = n
			} else {
				c.completion = n
			}
			err = e
		case "prompt_tokens_details":
			if s.Peek() != '{' {
				return s.Skip()
			}
			return s.Object(func(k []byte) error {
				if string(k) != "cached_tokens" || !s.atNumber() {
					return s.Skip()
				}
				var e error
				c.cached, e = s.count()
				c.hasCached = e == nil
				return e
			})
		default:
			err = s.Skip()
		}
		return err
	})
}

// atNumber reports whether the next value is a number (a count); anything
// else in a count's place is skipped, as a field of no known shape is.
func (s *jscan) atNumber() bool {
	b := s.Peek()
	return b == '-' || b >= '0' && b <= '9'
}

// errorValue reads the value of an "error" key: an object with a message, or
// a bare string.
func (s *jscan) errorValue(c *chunk) error {
	switch s.Peek() {
	case '"':
		v, err := s.Str()
		c.errMsg = v
		return err
	case '{':
		return s.Object(func(key []byte) error {
			if string(key) != "message" || s.Peek() != '"' {
				return s.Skip()
			}
			v, err := s.Str()
			c.errMsg = v
			return err
		})
	default:
		return s.Skip()
	}
}
