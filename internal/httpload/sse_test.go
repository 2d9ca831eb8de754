package httpload

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// collect feeds pieces to a fresh parser and returns the events' data.
func collect(t *testing.T, max int, pieces ...string) ([]string, error) {
	t.Helper()
	p := NewSSEParser(max)
	var got []string
	emit := func(d []byte) error { got = append(got, string(d)); return nil }
	for _, s := range pieces {
		if err := p.Feed([]byte(s), emit); err != nil {
			return got, err
		}
	}
	return got, p.Finish(emit)
}

func TestSSEParserGrammar(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"one event", "data: x\n\n", []string{"x"}},
		{"no space after colon", "data:x\n\n", []string{"x"}},
		{"only one space stripped", "data:  x\n\n", []string{" x"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"lone cr", "data: a\r\rdata: b\r\r", []string{"a", "b"}},
		{"comment is ignored", ": ping\n\ndata: a\n\n: keep-alive\n\n", []string{"a"}},
		{"other fields ignored", "event: message\nid: 3\nretry: 10\ndata: a\n\n", []string{"a"}},
		{"multi-line data joined", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"field without colon", "data\n\n", []string{""}},
		{"blank lines without data", "\n\n\n", nil},
		{"done", "data: [DONE]\n\n", []string{"[DONE]"}},
		{"unterminated event dispatched at end", "data: a\n", []string{"a"}},
		{"unterminated line taken at end", "data: a", []string{"a"}},
		{"unknown field named like data", "datax: a\n\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collect(t, 0, tc.in)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			// The same at every split into two pieces, and byte by byte.
			for i := range len(tc.in) + 1 {
				got2, err := collect(t, 0, tc.in[:i], tc.in[i:])
				if err != nil || !slices.Equal(got2, tc.want) {
					t.Fatalf("split at %d: got %q (%v), want %q", i, got2, err, tc.want)
				}
			}
			got3, err := collect(t, 0, strings.Split(tc.in, "")...)
			if err != nil || !slices.Equal(got3, tc.want) {
				t.Fatalf("byte by byte: got %q (%v), want %q", got3, err, tc.want)
			}
		})
	}
}

func TestSSEParserBounds(t *testing.T) {
	long := "data: " + strings.Repeat("x", 100) + "\n\n"
	for _, pieces := range [][]string{{long}, {long[:50], long[50:]}, {"data: " + strings.Repeat("x", 60) + "\ndata: " + strings.Repeat("y", 60) + "\n\n"}} {
		_, err := collect(t, 64, pieces...)
		if !errors.Is(err, errEventTooLong) {
			t.Errorf("pieces of %d: got error %v, want errEventTooLong", len(pieces), err)
		}
	}
	got, err := collect(t, 200, long)
	if err != nil || len(got) != 1 {
		t.Errorf("within the bound: got %d events, error %v", len(got), err)
	}
}

func TestSSEParserEmitErrorStops(t *testing.T) {
	p := NewSSEParser(0)
	stop := errors.New("stop")
	n := 0
	err := p.Feed([]byte("data: a\n\ndata: b\n\n"), func([]byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("got %v after %d events, want stop after 1", err, n)
	}
}

// streamWant is the summary a recorded stream must decode to.
type streamWant struct {
	chunks, text       int
	finish             string
	usage              bool
	prompt, completion int
	cached             int
	hasCached          bool
	errPrefix          string // "" = the stream is complete and valid
}

func recordedStreams() map[string]streamWant {
	return map[string]streamWant{
		"chat_usage.sse":          {chunks: 7, text: 4, finish: "stop", usage: true, prompt: 27, completion: 4, cached: 16, hasCached: true},
		"chat_nousage.sse":        {chunks: 5, text: 3, finish: "length"},
		"chat_crlf.sse":           {chunks: 3, text: 1, finish: "length", usage: true, prompt: 5, completion: 1},
		"completions_usage.sse":   {chunks: 4, text: 3, finish: "length", usage: true, prompt: 12, completion: 4},
		"completions_nousage.sse": {chunks: 3, text: 3, finish: "length"},
		"reasoning.sse":           {chunks: 5, text: 3, finish: "stop", usage: true, prompt: 9, completion: 3, cached: 0, hasCached: true},
		"tool_calls.sse":          {chunks: 4, text: 2, finish: "tool_calls", usage: true, prompt: 30, completion: 2},
		"error_event.sse":         {chunks: 3, text: 1, errPrefix: `server error in chunk 3: engine dead: "oom"`},
		"no_done.sse":             {chunks: 2, text: 2, finish: "length", errPrefix: "no [DONE]"},
		"garbage.sse":             {chunks: 2, text: 1, errPrefix: "chunk 2: invalid JSON"},
	}
}

// decodeStream runs the client's stream decoder over pieces; piece i
// arrives at time i+1.
func decodeStream(pieces [][]byte) (Result, error) {
	r := Result{Job: Job{Stream: true}}
	d := newStreamDecoder(&r, 0)
	for i, p := range pieces {
		if err := d.feed(p, int64(i+1)); err != nil {
			return r, err
		}
	}
	if err := d.finish(); err != nil {
		return r, err
	}
	if !d.done {
		return r, errors.New("no [DONE]")
	}
	return r, nil
}

func checkStream(t *testing.T, how string, r Result, err error, w streamWant) {
	t.Helper()
	if w.errPrefix != "" {
		if err == nil || !strings.HasPrefix(err.Error(), w.errPrefix) {
			t.Fatalf("%s: got error %v, want prefix %q", how, err, w.errPrefix)
		}
	} else if err != nil {
		t.Fatalf("%s: got error %v", how, err)
	}
	got := streamWant{chunks: r.NumChunks, text: r.TextChunks, finish: r.FinishReason, usage: r.HasUsage,
		prompt: r.PromptTokens, completion: r.CompletionTokens, cached: r.CachedTokens, hasCached: r.HasCachedTokens, errPrefix: w.errPrefix}
	if got != w {
		t.Fatalf("%s: got %+v, want %+v", how, got, w)
	}
	if len(r.ChunkUS) != r.NumChunks {
		t.Fatalf("%s: %d chunk stamps for %d chunks", how, len(r.ChunkUS), r.NumChunks)
	}
	if !slices.IsSorted(r.ChunkUS) || (r.NumChunks > 0 && (r.FirstChunkUS != r.ChunkUS[0] || r.LastChunkUS != r.ChunkUS[len(r.ChunkUS)-1])) {
		t.Fatalf("%s: stamps %v inconsistent with first %d last %d", how, r.ChunkUS, r.FirstChunkUS, r.LastChunkUS)
	}
	if w.text > 0 && (r.FirstTokenUS < r.FirstChunkUS || r.FirstTokenUS == 0) {
		t.Fatalf("%s: first token %d before first chunk %d", how, r.FirstTokenUS, r.FirstChunkUS)
	}
}

// TestRecordedStreamsEveryBoundary decodes each recorded stream whole, split
// in two at every byte, and one byte at a time.
func TestRecordedStreamsEveryBoundary(t *testing.T) {
	for name, want := range recordedStreams() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("testdata", "sse", name))
			if err != nil {
				t.Fatal(err)
			}
			r, err := decodeStream([][]byte{b})
			checkStream(t, "whole", r, err, want)
			for i := range len(b) + 1 {
				r, err := decodeStream([][]byte{b[:i], b[i:]})
				checkStream(t, "split", r, err, want)
			}
			pieces := make([][]byte, len(b))
			for i := range b {
				pieces[i] = b[i : i+1]
			}
			r, err = decodeStream(pieces)
			checkStream(t, "bytes", r, err, want)
			if want.errPrefix == "" && want.text > 0 && r.FirstTokenUS <= r.FirstChunkUS && name != "completions_usage.sse" && name != "completions_nousage.sse" {
				t.Errorf("byte by byte: first token %d not after the role chunk %d", r.FirstTokenUS, r.FirstChunkUS)
			}
		})
	}
}
