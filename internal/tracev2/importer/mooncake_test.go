package importer

import (
	"reflect"
	"strings"
	"testing"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

// seq returns [from, from+1, ..., to].
func seq(from, to int64) []int64 {
	var s []int64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func moonRec(id int64, client string, ms int64, in, out int, ids []int64) tracev2.Record {
	return tracev2.Record{RequestID: id, ClientID: client, InputTokens: in, OutputTokens: out,
		ArrivalTimeUs: ms * 1000, SendTimeUs: ms * 1000, Status: "ok", HashIDs: ids}
}

// Expected values are the files' first and last lines, read by hand, e.g.
// conversation last line: {"timestamp": 3536999, "input_length": 20774,
// "output_length": 508, "hash_ids": [0, 182750, ..., 182789]}.
func TestMooncakeRealSamples(t *testing.T) {
	const conv, syn = "mooncake-conversation", "mooncake-synthetic"
	tests := []struct {
		file        string
		n           int
		first, last tracev2.Record
	}{
		{"mooncake/FAST25-release/traces/conversation_trace.jsonl", 12031,
			moonRec(0, conv, 0, 6758, 500, seq(0, 13)),
			moonRec(12030, conv, 3536999, 20774, 508, append([]int64{0}, seq(182750, 182789)...))},
		{"mooncake/FAST25-release/traces/synthetic_trace.jsonl", 3993,
			moonRec(0, syn, 0, 40160, 6, seq(0, 78)),
			moonRec(3992, syn, 1022025, 18440, 83, append(seq(17915, 17950), 43923))},
		// The slice committed at the repository's root (so a fresh clone
		// runs it): the conversation trace's first 5 minutes.
		{"mooncake/conversation_trace_5min.jsonl", 918,
			moonRec(0, "mooncake-conversation_5min", 0, 6758, 500, seq(0, 13)),
			moonRec(917, "mooncake-conversation_5min", 297000, 1043, 508, []int64{0, 19716, 19717})},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := shareddata.Path(t, tt.file)
			imp, err := NewMooncake(path, openFile(t, path), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if h := imp.Header(); h.CreatedAt != "" || h.Mode != "real" || h.Server != nil {
				t.Errorf("header = %+v", h)
			}
			recs := collect(t, imp)
			firstLast(t, recs, tt.n, tt.first, tt.last)
			// Every request's blocks cover its prompt: len = ceil(input/512).
			if w := imp.Warnings(); len(w) != 0 {
				t.Errorf("warnings = %q, want none", w)
			}
		})
	}
}

func TestMooncakeTestdataSample(t *testing.T) {
	const c = "mooncake-conversation_head20"
	path := "testdata/mooncake/conversation_trace_head20.jsonl"
	imp, err := NewMooncake(path, openFile(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := collect(t, imp)
	firstLast(t, recs, 20, moonRec(0, c, 0, 6758, 500, seq(0, 13)),
		moonRec(19, c, 3000, 16609, 349, append([]int64{0}, seq(528, 559)...)))
	if want := moonRec(1, c, 0, 7322, 490, append([]int64{0}, seq(14, 27)...)); !reflect.DeepEqual(recs[1], want) {
		t.Errorf("second record:\n got %+v\nwant %+v", recs[1], want)
	}
}

func TestMooncakeDetails(t *testing.T) {
	in := "\uFEFF" + `{"hash_ids": [], "output_length": 2, "extra": {"a": [1, {"b": null}]}, "input_length": 0, "timestamp": 1.5}` + "\n" +
		"   \n" +
		`{"timestamp": 2e3, "input_length": 513, "output_length": 1e0, "hash_ids": [-7, 9]}` + "\r\n" +
		`{"timestamp": 5, "input_length": 1, "output_length": 0}` // no final newline, no hash_ids
	imp, err := NewMooncake("x.jsonl", strings.NewReader(in), Options{ClientID: "kimi"})
	if err != nil {
		t.Fatal(err)
	}
	recs := collect(t, imp)
	want := []tracev2.Record{
		{RequestID: 0, ClientID: "kimi", InputTokens: 0, OutputTokens: 2, ArrivalTimeUs: 1500, SendTimeUs: 1500, Status: "ok", HashIDs: []int64{}},
		{RequestID: 1, ClientID: "kimi", InputTokens: 513, OutputTokens: 1, ArrivalTimeUs: 2000000, SendTimeUs: 2000000, Status: "ok", HashIDs: []int64{-7, 9}},
		{RequestID: 2, ClientID: "kimi", InputTokens: 1, OutputTokens: 0, ArrivalTimeUs: 5000, SendTimeUs: 5000, Status: "ok"},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("got  %+v\nwant %+v", recs, want)
	}
	if w := imp.Warnings(); len(w) != 0 {
		t.Errorf("warnings = %q, want none (513 tokens need 2 blocks)", w)
	}
	imp, err = NewMooncake("y.jsonl", strings.NewReader(`{"timestamp": 0, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, imp)
	if got, want := imp.Warnings(), []string{"y.jsonl:1: hash_ids has 2 blocks, want ceil(input_length/512) = 3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}
