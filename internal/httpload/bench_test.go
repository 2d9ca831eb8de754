package httpload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSSEParse measures SSE chunks parsed and decoded per second on
// one core: a chat stream of role, 512 content chunks, usage and [DONE],
// fed in 16 KiB reads as the client reads it.
func BenchmarkSSEParse(b *testing.B) {
	var stream bytes.Buffer
	ev := func(s string) { stream.WriteString("data: " + s + "\n\n") }
	ev(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-14B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`)
	for i := range 512 {
		ev(fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-14B","choices":[{"index":0,"delta":{"content":" tok%d"},"logprobs":null,"finish_reason":null}]}`, i))
	}
	ev(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-14B","choices":[],"usage":{"prompt_tokens":512,"total_tokens":1024,"completion_tokens":512,"prompt_tokens_details":{"cached_tokens":0}}}`)
	ev("[DONE]")
	data := stream.Bytes()
	const chunks = 514
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	r := Result{Job: Job{MaxTokens: 512}}
	d := newStreamDecoder(&r, 0)
	start := time.Now()
	for b.Loop() {
		r.ChunkUS, r.NumChunks, r.TextChunks, r.FirstChunkUS, r.FirstTokenUS = r.ChunkUS[:0], 0, 0, 0, 0
		d.done = false
		for off := 0; off < len(data); off += readBufBytes {
			if err := d.feed(data[off:min(off+readBufBytes, len(data))], 1); err != nil {
				b.Fatal(err)
			}
		}
		if !d.done || r.NumChunks != chunks {
			b.Fatalf("decoded %d chunks, done %v", r.NumChunks, d.done)
		}
	}
	b.ReportMetric(float64(b.N)*chunks/time.Since(start).Seconds(), "chunks/s")
}

// BenchmarkRecordedStreams decodes the recorded streams of testdata/sse.
func BenchmarkRecordedStreams(b *testing.B) {
	var all [][]byte
	for name := range recordedStreams() {
		data, err := os.ReadFile(filepath.Join("testdata", "sse", name))
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, data := range all {
			_, _ = decodeStream([][]byte{data})
		}
	}
}
