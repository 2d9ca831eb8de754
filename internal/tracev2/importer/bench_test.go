package importer

import (
	"bytes"
	"io"
	"os"
	"testing"

	"servesim/internal/testkit/shareddata"
)

// benchImport measures importing the real sample at rel (skipped when absent).
func benchImport(b *testing.B, format Format, rel string) {
	path := shareddata.Path(b, rel)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	rows := 0
	for i := 0; i < b.N; i++ {
		imp, err := Open(format, path, bytes.NewReader(data), Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := imp.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkAzureConv(b *testing.B) {
	benchImport(b, FormatAzure, "azure-llm-2023/data/AzureLLMInferenceTrace_conv.csv")
}

func BenchmarkMooncakeConversation(b *testing.B) {
	benchImport(b, FormatMooncake, "mooncake/FAST25-release/traces/conversation_trace.jsonl")
}
