package importer

import (
	"reflect"
	"strings"
	"testing"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

// azureRec is an expected Azure record (status ok, send = arrival).
func azureRec(id int64, client string, arrival int64, in, out int) tracev2.Record {
	return tracev2.Record{RequestID: id, ClientID: client, InputTokens: in, OutputTokens: out,
		ArrivalTimeUs: arrival, SendTimeUs: arrival, Status: "ok"}
}

// Values checked by hand against the files, e.g. code: first row
// "2023-11-16 18:17:03.9799600,4808,10", last row "2023-11-16
// 19:14:19.9280160,549,173"; 19:14:19.928016 − 18:17:03.979960 = 3435.948056 s.
func TestAzureRealSamples(t *testing.T) {
	tests := []struct {
		file        string
		n           int
		first, last tracev2.Record
		createdAt   string
	}{
		{"azure-llm-2023/data/AzureLLMInferenceTrace_code.csv", 8819,
			azureRec(0, "azure-code", 0, 4808, 10), azureRec(8818, "azure-code", 3435948056, 549, 173),
			"2023-11-16T18:17:03.979960Z"},
		{"azure-llm-2023/data/AzureLLMInferenceTrace_conv.csv", 19366,
			azureRec(0, "azure-conv", 0, 374, 44), azureRec(19365, "azure-conv", 3501721937, 197, 183),
			"2023-11-16T18:15:46.680590Z"},
		// The slice committed at the repository's root (so a fresh clone
		// runs it): last row 18:25:46.6519260,1143,396, 599.971336 s in.
		{"azure-llm-2023/AzureLLMInferenceTrace_conv_10min.csv", 2867,
			azureRec(0, "azure-conv_10min", 0, 374, 44), azureRec(2866, "azure-conv_10min", 599971336, 1143, 396),
			"2023-11-16T18:15:46.680590Z"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := shareddata.Path(t, tt.file)
			imp, err := NewAzure(path, openFile(t, path), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := imp.Header(); got.CreatedAt != tt.createdAt || got.Mode != "real" ||
				got.TraceVersion != 3 || got.TimeUnit != "us" || got.WarmUpRequests != 0 {
				t.Errorf("header = %+v, want created_at %s, real, v3, us, warm-up 0", got, tt.createdAt)
			}
			recs := collect(t, imp)
			firstLast(t, recs, tt.n, tt.first, tt.last)
			for i := 1; i < len(recs); i++ { // the files are sorted by TIMESTAMP
				if recs[i].ArrivalTimeUs < recs[i-1].ArrivalTimeUs {
					t.Fatalf("record %d arrives before record %d", i, i-1)
				}
			}
			if w := imp.Warnings(); len(w) != 0 {
				t.Errorf("warnings = %q, want none", w)
			}
		})
	}
}

// Rows 1, 2 and 20 of the samples, by hand: code 18:17:03.9799600,
// 18:17:04.0319600 (+52000 µs), 18:17:34.4626860 (+30.482726 s); conv
// 18:15:46.6805900, 18:15:50.9951690 (+4.314579 s), 18:15:59.7056780
// (+13.025088 s).
func TestAzureTestdataSamples(t *testing.T) {
	const code, conv = "azure-code_head20", "azure-conv_head20"
	tests := []struct {
		file                  string
		first, second, twenty tracev2.Record
	}{
		{"testdata/azure/AzureLLMInferenceTrace_code_head20.csv",
			azureRec(0, code, 0, 4808, 10), azureRec(1, code, 52000, 3180, 8),
			azureRec(19, code, 30482726, 6587, 18)},
		{"testdata/azure/AzureLLMInferenceTrace_conv_head20.csv",
			azureRec(0, conv, 0, 374, 44), azureRec(1, conv, 4314579, 396, 109),
			azureRec(19, conv, 13025088, 1353, 142)},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			imp, err := NewAzure(tt.file, openFile(t, tt.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			recs := collect(t, imp)
			firstLast(t, recs, 20, tt.first, tt.twenty)
			if !reflect.DeepEqual(recs[1], tt.second) {
				t.Errorf("second record:\n got %+v\nwant %+v", recs[1], tt.second)
			}
		})
	}
}

func TestAzureClientIDAndOrigin(t *testing.T) {
	in := "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
		"2024-05-10 00:00:00.0000000+00:00,1,2\n" + // 2024 layout, with a zone offset
		"2024-05-10 02:00:01.0000015+02:00,3,4\n" // 1.0000015 s later, another zone
	imp, err := NewAzure("-", strings.NewReader(in), Options{ClientID: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	recs := collect(t, imp)
	want := []tracev2.Record{azureRec(0, "prod", 0, 1, 2), azureRec(1, "prod", 1000002, 3, 4)} // 1.5 µs rounds half away from zero
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("got %+v\nwant %+v", recs, want)
	}
	if got, want := imp.Header().CreatedAt, "2024-05-10T00:00:00.000000Z"; got != want {
		t.Errorf("created_at = %s, want %s", got, want)
	}
	for _, tt := range []struct{ name, want string }{
		{"data/AzureLLMInferenceTrace_code.csv", "azure-code"},
		{"AzureLLMInferenceTrace_conv.csv.gz", "azure-conv"},
		{"-", "azure"},
		{"", "azure"},
		{"My Trace.csv", "azure-my-trace"},
	} {
		if got := clientID(Options{}, "azure", tt.name, "AzureLLMInferenceTrace"); got != tt.want {
			t.Errorf("clientID(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
