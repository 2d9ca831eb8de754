package replay

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"servesim/internal/tracev2"
)

// TestResultWriterMatchesWriteSimResults: results settled in any order come
// out byte for byte as tracev2.WriteSimResults writes them.
func TestResultWriterMatchesWriteSimResults(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 7, 300} {
		for _, format := range []tracev2.SimResultFormat{tracev2.SimResultArray, tracev2.SimResultJSONL} {
			ids := make([]int64, n)
			var results []tracev2.SimResult
			for i := range ids {
				ids[i] = int64(i*3 + 5)
				if r.IntN(4) == 0 {
					continue // did not complete
				}
				results = append(results, tracev2.SimResult{RequestID: ids[i], TTFTUs: float64(r.IntN(1e6)), E2EUs: r.Float64() * 1e7,
					InputTokens: r.IntN(9000), OutputTokens: r.IntN(900), SLOClass: []string{"", "critical", "<b&c>"}[r.IntN(3)],
					ITLMeanUs: float64(r.IntN(3)) * 1234.5, ArrivalUs: int64(r.IntN(1e9)), Instance: "instance_0"})
			}
			var want bytes.Buffer
			if err := tracev2.WriteSimResults(&want, results, format); err != nil {
				t.Fatal(err)
			}
			// Settle in a shuffled order, the ones without result too.
			byID := map[int64]*tracev2.SimResult{}
			for i := range results {
				byID[results[i].RequestID] = &results[i]
			}
			order := r.Perm(n)
			var got bytes.Buffer
			w := NewResultWriter(&got, format, func() []int64 { return ids })
			for _, k := range order[:n*3/4] {
				if err := w.Settle(ids[k], byID[ids[k]]); err != nil {
					t.Fatal(err)
				}
			}
			// The rest are never settled: Close writes what they had.
			for _, k := range order[n*3/4:] {
				if res := byID[ids[k]]; res != nil {
					w.Settle(ids[k], res)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("n=%d format %d:\n got %q\nwant %q", n, format, trim(got.String()), trim(want.String()))
			}
		}
	}
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

func TestResultWriterRejectsNaN(t *testing.T) {
	var b bytes.Buffer
	w := NewResultWriter(&b, tracev2.SimResultArray, func() []int64 { return []int64{1} })
	err := w.Settle(1, &tracev2.SimResult{RequestID: 1, TTFTUs: math.NaN()})
	if err == nil || err.Error() != "write sim results: request 1: time NaN is not finite" {
		t.Errorf("err %v", err)
	}
}

// TestResultWriterSync: after Sync the writing goroutine has written what
// was settled (up to its 64 KB buffer) and leaves the io.Writer alone until
// the next Settle, so the caller may read it (the race detector watches).
func TestResultWriterSync(t *testing.T) {
	ids := make([]int64, 3000)
	for i := range ids {
		ids[i] = int64(i)
	}
	var b bytes.Buffer
	w := NewResultWriter(&b, tracev2.SimResultJSONL, func() []int64 { return ids })
	var seen []int
	for i := range ids {
		if err := w.Settle(ids[i], &tracev2.SimResult{RequestID: ids[i], TTFTUs: 1000, E2EUs: 2000}); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			w.Sync()
			seen = append(seen, b.Len())
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	per := b.Len() / len(ids)
	for k, n := range seen {
		// Everything settled is written but for what the buffer holds.
		if settled := (k + 1) * 1000 * per; n > settled || n < settled-64<<10 {
			t.Errorf("after %d results %d bytes written, want %d less at most 64 KB", (k+1)*1000, n, settled)
		}
	}
}
