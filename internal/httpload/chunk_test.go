package httpload

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeChunk(t *testing.T) {
	type want struct {
		text                      bool
		finish                    string
		usage                     bool
		prompt, completion, cache int
		hasCached, isErr          bool
		errMsg                    string
	}
	tests := []struct {
		name string
		in   string
		want want
		bad  string // error substring; "" = valid
	}{
		{"role only", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, want{}, ""},
		{"content", `{"choices":[{"delta":{"content":"hi"}}]}`, want{text: true}, ""},
		{"null content", `{"choices":[{"delta":{"content":null}}]}`, want{}, ""},
		{"reasoning_content", `{"choices":[{"delta":{"reasoning_content":"hm"}}]}`, want{text: true}, ""},
		{"reasoning", `{"choices":[{"delta":{"reasoning":"hm"}}]}`, want{text: true}, ""},
		{"empty tool calls", `{"choices":[{"delta":{"tool_calls":[]}}]}`, want{}, ""},
		{"tool call", `{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}`, want{text: true}, ""},
		{"completion text", `{"choices":[{"text":" a","finish_reason":"length"}]}`, want{text: true, finish: "length"}, ""},
		{"message (non-streamed)", `{"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
			want{text: true, finish: "stop", usage: true, prompt: 3, completion: 1}, ""},
		{"usage only", `{"choices":[],"usage":{"prompt_tokens":10,"total_tokens":15,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":8}}}`,
			want{usage: true, prompt: 10, completion: 5, cache: 8, hasCached: true}, ""},
		{"usage null details", `{"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":null}}`, want{usage: true, prompt: 1, completion: 2}, ""},
		{"usage null", `{"choices":[{"delta":{"content":"a"}}],"usage":null}`, want{text: true}, ""},
		{"float count", `{"usage":{"prompt_tokens":1.0e1,"completion_tokens":2}}`, want{usage: true, prompt: 10, completion: 2}, ""},
		{"several choices", `{"choices":[{"delta":{}},{"delta":{"content":"b"},"finish_reason":"stop"}]}`, want{text: true, finish: "stop"}, ""},
		{"escaped key", `{"\u0063hoices":[{"delta":{"content":"b"}}]}`, want{text: true}, ""},
		{"error object", `{"error":{"message":"boom \"x\"","type":"InternalServerError","code":500}}`, want{isErr: true, errMsg: `boom \"x\"`}, ""},
		{"error string", `{"error":"bad"}`, want{isErr: true, errMsg: "bad"}, ""},
		{"object error", `{"object":"error","message":"too long","type":"BadRequestError","code":400}`, want{isErr: true, errMsg: "too long"}, ""},
		{"message without error", `{"message":"hello"}`, want{}, ""},
		{"unknown fields skipped", `{"x":[1,{"a":[true,false,null]},-0.5e-3,"s"],"choices":[]}`, want{}, ""},
		{"whitespace", " \t\n{ \"choices\" : [ { \"text\" : \"a\" } ] } \r\n", want{text: true}, ""},
		{"truncated", `{"choices":[{"delta":{"content":"a`, want{}, "unterminated string"},
		{"trailing data", `{} {}`, want{}, "data after the value"},
		{"not an object", `[1]`, want{}, "expected an object"},
		{"bad literal", `{"a":nul}`, want{}, "invalid literal"},
		{"bad number", `{"a":01}`, want{}, "expected ',' or '}'"},
		{"bad escape", `{"a":"\x"}`, want{}, "bad escape"},
		{"control char", "{\"a\":\"\x01\"}", want{}, "control character"},
		{"negative count", `{"usage":{"prompt_tokens":-1}}`, want{}, "out of range"},
		{"deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), want{}, "expected an object"},
		{"deep inside", `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, want{}, "nested too deeply"},
		{"empty", ``, want{}, "expected an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c chunk
			err := decodeChunk([]byte(tc.in), &c)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("got error %v, want one containing %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v", err)
			}
			got := want{text: c.text, finish: string(c.finish), usage: c.usage, prompt: c.prompt, completion: c.completion,
				cache: c.cached, hasCached: c.hasCached, isErr: c.isErr, errMsg: string(c.errMsg)}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sse", "chat_usage.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var c chunk
	p := NewSSEParser(0)
	n := 0
	emit := func(d []byte) error {
		n++
		if string(d) != "[DONE]" {
			return decodeChunk(d, &c)
		}
		return nil
	}
	_ = p.Feed(data, emit) // grow the buffers once
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Feed(data[:100], emit); err != nil {
			t.Fatal(err)
		}
		if err := p.Feed(data[100:], emit); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("SSE parse and chunk decode: %v allocations per stream, want 0", allocs)
	}
}

// FuzzDecodeChunk: never panic; accept exactly the documents encoding/json
// accepts (within the nesting bound).
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range []string{`{}`, `{"choices":[{"delta":{"content":"a"}}]}`, `{"usage":{"prompt_tokens":1}}`, `{"error":{"message":"x"}}`, `[`, `{"a":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c chunk
		err := decodeChunk(b, &c)
		if strings.Contains(string(b), "[[[[[[[[") || strings.Contains(string(b), "{{{{") {
			return // may pass the nesting bound that encoding/json does not have
		}
		var obj map[string]json.RawMessage
		jerr := json.Unmarshal(b, &obj)
		if (err == nil) != (jerr == nil && obj != nil) {
			// A valid document whose counts are out of range is our only extra rejection.
			if err != nil && strings.Contains(err.Error(), "out of range") {
				return
			}
			t.Fatalf("decodeChunk error %v, encoding/json error %v, for %q", err, jerr, b)
		}
	})
}

// FuzzSSEParser: never panic; any split gives the events of the whole.
func FuzzSSEParser(f *testing.F) {
	for _, name := range []string{"chat_usage.sse", "chat_crlf.sse", "completions_usage.sse"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sse", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(len(b)/2))
	}
	f.Fuzz(func(t *testing.T, b []byte, at uint16) {
		i := int(at) % (len(b) + 1)
		whole, err1 := collect(t, 1<<16, string(b))
		split, err2 := collect(t, 1<<16, string(b[:i]), string(b[i:]))
		if (err1 == nil) != (err2 == nil) || strings.Join(whole, "\x00") != strings.Join(split, "\x00") || len(whole) != len(split) {
			t.Fatalf("split at %d: %q (%v) vs whole %q (%v)", i, split, err2, whole, err1)
		}
	})
}
