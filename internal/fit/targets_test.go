package fit

import (
	"context"
	"math"
	"slices"
	"testing"

	"servesim/internal/tracev2"
)

// rowsAt builds one request's ITL rows from chunk stamps.
func rowsAt(id int64, stamps ...int64) []tracev2.ITLRow {
	rows := make([]tracev2.ITLRow, len(stamps))
	for i, s := range stamps {
		rows[i] = tracev2.ITLRow{RequestID: id, ChunkIndex: i, TimestampUs: s}
	}
	return rows
}

func TestTokenTimes(t *testing.T) {
	tests := []struct {
		name   string
		stamps []int64
		first  int64
		out    int
		last   int64
		want   []int64
	}{
		{"one chunk per token", []int64{100, 110, 120}, 100, 3, 120, []int64{100, 110, 120}},
		{"Ollama: finish-only and usage-only chunks after the tokens", []int64{100, 110, 120, 121, 121}, 100, 3, 121, []int64{100, 110, 120}},
		{"role-only chunk before the first token", []int64{90, 100, 110, 120, 122}, 100, 3, 122, []int64{100, 110, 120}},
		{"role-only chunk in the first token's microsecond: taken for it", []int64{100, 100, 110, 120}, 100, 3, 120, []int64{100, 100, 110}},
		{"two tokens read together", []int64{100, 110, 110, 130, 131}, 100, 4, 131, []int64{100, 110, 110, 130}},
		{"fewer chunks than tokens", []int64{100, 120}, 100, 3, 120, nil},
		{"no chunk at the first-token time", []int64{95, 105, 115, 125}, 100, 3, 125, nil},
		{"too few chunks after the first token", []int64{90, 100, 110}, 100, 3, 110, nil},
		{"out of order", []int64{100, 120, 110, 130}, 100, 3, 130, nil},
		{"token after the record's last chunk", []int64{100, 110, 120}, 100, 3, 115, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tokenTimes(rowsAt(1, tc.stamps...), tc.first, tc.out, tc.last); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// serverLayout rewrites a synthetic run's chunks as a server streams them:
// Ollama sends a finish-only and a usage-only chunk after the last token;
// vLLM's chat endpoint a role-only chunk before the first. The records'
// chunk times and first-token times follow.
func serverLayout(recs []tracev2.Record, itl []tracev2.ITLRow, server string) ([]tracev2.Record, []tracev2.ITLRow) {
	by := map[int64][]int64{}
	for _, r := range itl {
		by[r.RequestID] = append(by[r.RequestID], r.TimestampUs)
	}
	out := slices.Clone(recs)
	var rows []tracev2.ITLRow
	for i := range out {
		r := &out[i]
		tok := by[r.RequestID]
		r.FirstTokenTimeUs = tok[0]
		stamps := slices.Clone(tok)
		switch server {
		case "ollama":
			end := tok[len(tok)-1]
			stamps = append(stamps, end+700, end+700)
		case "vllm-chat":
			stamps = append([]int64{tok[0] - 40}, stamps...)
			stamps = append(stamps, tok[len(tok)-1]+30)
		}
		r.FirstChunkTimeUs, r.LastChunkTimeUs, r.NumChunks = stamps[0], stamps[len(stamps)-1], len(stamps)
		rows = append(rows, rowsAt(r.RequestID, stamps...)...)
	}
	return out, rows
}

// TestFitITLWithExtraChunks: the chunks that carry no token (Ollama's
// trailing finish and usage chunks, a leading role chunk) do not keep a
// request from its ITL equations, and the fit recovers the coefficients
// from them as from one chunk per token.
func TestFitITLWithExtraChunks(t *testing.T) {
	s := blackboxTruth()
	s.n = 250
	recs, itl := s.make(t)
	for _, server := range []string{"ollama", "vllm-chat"} {
		t.Run(server, func(t *testing.T) {
			r, rows := serverLayout(recs, itl, server)
			dep := testDeployment(t, "blackbox", []float64{0, 0, 0}, []float64{10000, 20, 100})
			res, err := Fit(context.Background(), Config{Deploy: dep, Seed: 1}, Input{Records: r, ITL: rows})
			if err != nil {
				t.Fatal(err)
			}
			if res.ITLRequests != s.n {
				t.Errorf("%d requests fitted from ITL data, want all %d", res.ITLRequests, s.n)
			}
			for i, want := range s.beta {
				if got := res.Beta[i]; math.Abs(got-want) > 0.05*want {
					t.Errorf("beta[%d] = %.5g, want %.5g ± 5%%", i, got, want)
				}
			}
		})
	}
}
