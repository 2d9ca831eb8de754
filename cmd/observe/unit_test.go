package main

import (
	"bytes"
	"flag"
	"regexp"
	"slices"
	"testing"

	"servesim/internal/httpload"
	"servesim/internal/testkit/clitest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestParseGoodput(t *testing.T) {
	tests := []struct {
		in      string
		want    goodput
		wantErr bool
	}{
		{"", goodput{}, false},
		{"ttft:500", goodput{ttftMs: 500}, false},
		{"ttft:500,tpot:50,e2el:5000", goodput{500, 50, 5000}, false},
		{"ttft:500 tpot:12.5", goodput{ttftMs: 500, tpotMs: 12.5}, false},
		{"TTFT:1", goodput{ttftMs: 1}, false},
		{"itl:5", goodput{}, true},
		{"ttft", goodput{}, true},
		{"ttft:-1", goodput{}, true},
		{"ttft:NaN", goodput{}, true},
		{",", goodput{}, true},
	}
	for _, tc := range tests {
		got, err := parseGoodput(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("parseGoodput(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{[]string{"X-A: 1", "x-b:two words "}, map[string]string{"X-A": "1", "X-B": "two words"}, false},
		{[]string{"Authorization: Bearer k:v"}, map[string]string{"Authorization": "Bearer k:v"}, false},
		{[]string{"novalue"}, nil, true},
		{[]string{": v"}, nil, true},
		{[]string{"bad name: v"}, nil, true},
	}
	for _, tc := range tests {
		got, err := parseHeaders(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseHeaders(%q): error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		for k, v := range tc.want {
			if got.Get(k) != v {
				t.Errorf("parseHeaders(%q)[%s] = %q, want %q", tc.in, k, got.Get(k), v)
			}
		}
	}
}

func TestNewUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		u := newUUID()
		if !re.MatchString(u) || seen[u] {
			t.Fatalf("uuid %q: not v4 or repeated", u)
		}
		seen[u] = true
	}
}

func TestTextChunks(t *testing.T) {
	tests := []struct {
		name string
		r    httpload.Result
		want []int64
	}{
		{"chat: role, 3 tokens, usage", httpload.Result{FirstTokenUS: 20, FirstTokenChunk: 1, TextChunks: 3, ChunkUS: []int64{20, 20, 30, 40, 41}}, []int64{20, 30, 40}},
		{"completions: 2 tokens, usage", httpload.Result{FirstTokenUS: 5, TextChunks: 2, ChunkUS: []int64{5, 9, 10}}, []int64{5, 9}},
		{"index out of range", httpload.Result{FirstTokenUS: 5, FirstTokenChunk: 3, TextChunks: 2, ChunkUS: []int64{5, 9, 10}}, nil},
		{"no token", httpload.Result{ChunkUS: []int64{5}}, nil},
		{"not streamed", httpload.Result{FirstTokenUS: 5, TextChunks: 1}, nil},
	}
	for _, tc := range tests {
		got := textChunks(&tc.r)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSummaryGolden locks the summary's layout and figures for fixed
// results: three completed streams, one HTTP error, one never sent.
func TestSummaryGolden(t *testing.T) {
	tal := newTally(goodput{ttftMs: 45, tpotMs: 11})
	ok := func(id, intended, send int64, gap int64, tokens int) httpload.Result {
		first := send + 40_000 + id*5_000
		chunks := []int64{first, first} // the role chunk, then the first token
		for k := 1; k < tokens; k++ {
			chunks = append(chunks, chunks[k]+gap)
		}
		last := chunks[len(chunks)-1]
		chunks = append(chunks, last) // the usage chunk
		return httpload.Result{Job: httpload.Job{ID: id, IntendedUS: intended, Stream: true}, SendUS: send, FirstChunkUS: first,
			FirstTokenUS: first, FirstTokenChunk: 1, LastChunkUS: last, DoneUS: last, NumChunks: len(chunks), TextChunks: tokens, ChunkUS: chunks,
			PromptTokens: 100, CompletionTokens: tokens, HasUsage: true, Status: httpload.StatusOK}
	}
	for _, r := range []httpload.Result{
		ok(0, 1000, 1100, 10_000, 5),
		ok(1, 2000, 4500, 12_000, 4),
		ok(2, 3000, 3050, 9_000, 6),
		{Job: httpload.Job{ID: 3, IntendedUS: 4000}, SendUS: 4100, DoneUS: 9000, Status: httpload.StatusError, Error: "HTTP 503: busy"},
		{Job: httpload.Job{ID: 4, IntendedUS: 5000}, DoneUS: 5000, Status: httpload.StatusTimeout, Error: "HTTP timeout: deadline passed"},
	} {
		tal.add(&r)
	}
	var b bytes.Buffer
	if err := tal.write(&b, summaryInfo{maxConcurrency: 8}); err != nil {
		t.Fatal(err)
	}
	clitest.Golden(t, *update, "summary.golden", b.String())
}
