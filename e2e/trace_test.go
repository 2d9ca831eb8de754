package e2e

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/montanaflynn/stats"

	"servesim/internal/tracev2"
)

// run is one observe run: its trace, its ITL rows, and what the test
// measured from them.
type run struct {
	name   string
	prefix string // PREFIX of PREFIX.yaml, PREFIX.csv, PREFIX.itl.csv
	trace  *tracev2.Trace
	itl    map[int64][]int64 // request id → chunk arrival times, in chunk order
}

// loadRun reads PREFIX.csv (with its header) and PREFIX.itl.csv.
func loadRun(t *testing.T, name, prefix string) *run {
	t.Helper()
	_, data, itlPath := tracev2.PrefixPaths(prefix)
	tr, err := tracev2.Load(tracev2.Input{Path: data}, tracev2.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f, err := os.Open(itlPath)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer f.Close()
	rows, err := tracev2.ReadITL(f, itlPath, tr.Origin)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := &run{name: name, prefix: prefix, trace: tr, itl: map[int64][]int64{}}
	slices.SortFunc(rows, func(a, b tracev2.ITLRow) int {
		if a.RequestID != b.RequestID {
			return int(a.RequestID - b.RequestID)
		}
		return a.ChunkIndex - b.ChunkIndex
	})
	for _, row := range rows {
		r.itl[row.RequestID] = append(r.itl[row.RequestID], row.TimestampUs)
	}
	return r
}

// ttftMs and e2eMs are a record's latencies from its actual send, in ms.
func ttftMs(rec *tracev2.Record) float64 {
	return float64(rec.FirstChunkTimeUs-rec.SendTimeUs) / 1000
}

func e2eMs(rec *tracev2.Record) float64 {
	return float64(rec.LastChunkTimeUs-rec.SendTimeUs) / 1000
}

// tokenGapsMs are the gaps between consecutive token chunks of every
// request, in ms: the chunks from the first token to the last token (the
// trailing finish-only and usage-only chunks are left out).
func (r *run) tokenGapsMs() []float64 {
	var gaps []float64
	for i := range r.trace.Records {
		rec := &r.trace.Records[i]
		ts := r.itl[rec.RequestID]
		n := min(len(ts), rec.OutputTokens)
		for k := 1; k < n; k++ {
			gaps = append(gaps, float64(ts[k]-ts[k-1])/1000)
		}
	}
	return gaps
}

// column gathers one value per record.
func (r *run) column(f func(*tracev2.Record) float64) []float64 {
	out := make([]float64, len(r.trace.Records))
	for i := range r.trace.Records {
		out[i] = f(&r.trace.Records[i])
	}
	return out
}

func median(t *testing.T, xs []float64) float64 {
	t.Helper()
	m, err := stats.Median(xs)
	if err != nil {
		t.Fatalf("median of %d values: %v", len(xs), err)
	}
	return m
}

// maxInService is the largest number of requests of r generating at once:
// a request holds a server slot at least from its first token to its last
// token chunk.
func (r *run) maxInService() int {
	type edge struct {
		t     int64
		delta int
	}
	var edges []edge
	for i := range r.trace.Records {
		rec := &r.trace.Records[i]
		ts := r.itl[rec.RequestID]
		if len(ts) == 0 || rec.OutputTokens < 1 {
			continue
		}
		last := ts[min(len(ts), rec.OutputTokens)-1]
		edges = append(edges, edge{rec.FirstChunkTimeUs, +1}, edge{last, -1})
	}
	// Ends before starts at equal times: a slot freed and taken in the same
	// microsecond is not two requests at once.
	slices.SortFunc(edges, func(a, b edge) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.delta - b.delta
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// mergeRuns writes one trace that holds the given runs one after the other,
// gapUs of idle time apart, with its ITL file: times are shifted, request ids
// renumbered and session ids prefixed with the run's name, so `calibrate fit`
// (which takes one trace) can fit on several load levels at once. The header
// is the first run's.
func mergeRuns(t *testing.T, prefix string, gapUs int64, runs ...*run) {
	t.Helper()
	var recs []tracev2.Record
	chunks := map[int64][]int64{}
	var offset, idBase int64
	for _, r := range runs {
		var end, maxID int64
		for _, rec := range r.trace.Records {
			for _, p := range []*int64{&rec.ArrivalTimeUs, &rec.SendTimeUs, &rec.FirstChunkTimeUs, &rec.LastChunkTimeUs, &rec.FirstTokenTimeUs, &rec.DeadlineUs} {
				if *p > 0 {
					*p += offset
				}
			}
			end = max(end, rec.LastChunkTimeUs)
			maxID = max(maxID, rec.RequestID)
			if ts := r.itl[rec.RequestID]; len(ts) > 0 {
				shifted := make([]int64, len(ts))
				for i, v := range ts {
					shifted[i] = v + offset
				}
				chunks[rec.RequestID+idBase] = shifted
			}
			rec.RequestID += idBase
			if rec.SessionID != "" {
				rec.SessionID = r.name + "/" + rec.SessionID
			}
			recs = append(recs, rec)
		}
		offset, idBase = end+gapUs, idBase+maxID+1
	}
	slices.SortStableFunc(recs, func(a, b tracev2.Record) int { return int(a.SendTimeUs - b.SendTimeUs) })
	hdr, data, itlPath := tracev2.PrefixPaths(prefix)
	w, err := tracev2.CreateFiles(hdr, data, runs[0].trace.Header, runs[0].trace.Columns, false)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatalf("merge: %v", err)
		}
	}
	if err := w.Close(runs[0].trace.Header); err != nil {
		t.Fatalf("merge: %v", err)
	}
	f, err := os.Create(itlPath)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	iw, err := tracev2.NewITLWriter(f)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	for i := range recs {
		if err := iw.WriteRequest(recs[i].RequestID, chunks[recs[i].RequestID]); err != nil {
			t.Fatalf("merge: %v", err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("merge: %v", err)
	}
}

// fmtMs formats milliseconds for the summary.
func fmtMs(ms float64) string { return fmt.Sprintf("%.1f", ms) }
