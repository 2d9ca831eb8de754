package jsonscan

import (
	"strings"
	"testing"
)

// BenchmarkScan reads the documents jsonscan's callers read: a streamed
// chat-completion chunk (a few fields read, the rest skipped), a Mooncake
// trace line (numbers and an array of integers), and a larger document
// skipped whole.
//
//	go test ./internal/jsonscan -run '^$' -bench Scan -benchmem
func BenchmarkScan(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-8f1c2a","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct",` +
		`"choices":[{"index":0,"delta":{"role":"assistant","content":" the quick brown fox"},"logprobs":null,"finish_reason":null}],` +
		`"usage":{"prompt_tokens":512,"completion_tokens":17,"total_tokens":529,"prompt_tokens_details":{"cached_tokens":256}}}`)
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = "12345" + string(rune('0'+i%10))
	}
	line := []byte(`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [` + strings.Join(ids, ", ") + `]}`)
	var big strings.Builder
	big.WriteString("[")
	for i := range 200 {
		if i > 0 {
			big.WriteString(",")
		}
		big.WriteString(`{"a": [1, -2.5e+3, "x\"y", true, false, null], "b": {"c": "caf\u00e9", "d": 12345.678}}`)
	}
	big.WriteString("]")
	doc := []byte(big.String())
	b.Run("chunk", func(b *testing.B) {
		b.SetBytes(int64(len(chunk)))
		b.ReportAllocs()
		for range b.N {
			s := New(chunk)
			n := 0
			err := s.Object(func(key []byte) error {
				switch string(key) {
				case "choices":
					return s.Array(func() error {
						return s.Object(func(key []byte) error {
							if string(key) == "delta" {
								return s.Object(func([]byte) error {
									v, err := s.Str()
									n += len(v)
									return err
								})
							}
							return s.Skip()
						})
					})
				case "model":
					v, err := s.Str()
					n += len(v)
					return err
				default:
					return s.Skip()
				}
			})
			if err != nil || s.End() != nil || n == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("mooncake", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for range b.N {
			s := New(line)
			var sum int64
			err := s.Object(func(key []byte) error {
				if string(key) == "hash_ids" {
					return s.Array(func() error {
						v, err := s.Int()
						sum += v
						return err
					})
				}
				_, err := s.Num()
				return err
			})
			if err != nil || s.End() != nil || sum == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("skip", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for range b.N {
			s := New(doc)
			if err := s.Skip(); err != nil || s.End() != nil {
				b.Fatal(err)
			}
		}
	})
}
