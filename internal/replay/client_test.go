package replay

import (
	"math/rand/v2"
	"testing"

	"servesim/internal/tracev2"
)

// clientTrace simulates a client by hand: arrivals every gapUs, service
// times drawn around serviceUs, at most cap in flight (0 = open loop), the
// next held request sent sendGapUs after a slot frees; dispatch adds lagUs.
func clientTrace(n, cap int, arrivalGapUs, serviceUs, sendGapUs, lagUs int64, seed uint64) RecordRows {
	rng := rand.New(rand.NewPCG(seed, 1))
	var ends []int64 // of requests in flight, unsorted
	out := make(RecordRows, 0, n)
	prune := func(at int64) {
		keep := ends[:0]
		for _, e := range ends {
			if e > at {
				keep = append(keep, e)
			}
		}
		ends = keep
	}
	var last int64 // the queue is FIFO: no send before the one before
	for i := range n {
		a := int64(i+1) * arrivalGapUs
		s := max(a+lagUs, last)
		prune(s)
		if cap > 0 && len(ends) >= cap {
			// Wait for the earliest end among those in flight.
			k := 0
			for j := range ends {
				if ends[j] < ends[k] {
					k = j
				}
			}
			s = max(s, ends[k]+sendGapUs)
			ends = append(ends[:k], ends[k+1:]...)
			prune(s)
		}
		last = s
		e := s + serviceUs/2 + rng.Int64N(serviceUs)
		ends = append(ends, e)
		out = append(out, tracev2.Record{RequestID: int64(i), ArrivalTimeUs: a, SendTimeUs: s,
			FirstChunkTimeUs: s + 100, LastChunkTimeUs: e, Status: "ok"})
	}
	return out
}

func TestDetectClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rows    RecordRows
		capped  bool
		cap     int
		gapUs   int64
		maxGapD int64 // tolerance on the gap
	}{
		{name: "open loop, light", rows: clientTrace(2000, 0, 100_000, 50_000, 0, 80, 1)},
		{name: "open loop, overloaded server", rows: clientTrace(2000, 0, 1_000, 500_000, 0, 80, 2)},
		{name: "cap never reached", rows: clientTrace(2000, 256, 100_000, 50_000, 60, 80, 3)},
		{name: "cap 256, saturated", rows: clientTrace(3000, 256, 1_000, 600_000, 60, 80, 4), capped: true, cap: 256, gapUs: 60},
		{name: "cap 8, saturated from the start", rows: clientTrace(1000, 8, 1_000, 90_000, 0, 0, 5), capped: true, cap: 8, gapUs: 0},
		{name: "cap 32, 2 ms send gap", rows: clientTrace(1500, 32, 5_000, 400_000, 2_000, 30, 6), capped: true, cap: 32, gapUs: 2_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := DetectClient(tc.rows)
			if err != nil {
				t.Fatal(err)
			}
			if f.Capped != tc.capped {
				t.Fatalf("capped = %v, want %v (%s)", f.Capped, tc.capped, f)
			}
			if tc.capped && (f.Client.MaxConcurrency != tc.cap || f.Client.SendGapUs != tc.gapUs) {
				t.Errorf("found cap %d, gap %d µs; want %d, %d µs (%s)", f.Client.MaxConcurrency, f.Client.SendGapUs, tc.cap, tc.gapUs, f)
			}
			if f.String() == "" {
				t.Error("empty description")
			}
		})
	}
}

// TestDetectClientSkipsRowsWithoutTimes: failed rows (no end, or no send)
// are left out of the evidence and never make a cap.
func TestDetectClientSkipsRowsWithoutTimes(t *testing.T) {
	rows := clientTrace(400, 16, 1_000, 200_000, 0, 0, 7)
	for i := range rows {
		if i%3 == 0 {
			rows[i].LastChunkTimeUs = 0
			rows[i].Status = "error"
		}
	}
	f, err := DetectClient(rows)
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows != 400-134 {
		t.Errorf("%d rows of evidence, want %d", f.Rows, 400-134)
	}
	if f.Capped && f.Client.MaxConcurrency > 16 {
		t.Errorf("found cap %d above the real 16", f.Client.MaxConcurrency)
	}
	empty, err := DetectClient(RecordRows{})
	if err != nil || empty.Capped || empty.Rows != 0 {
		t.Errorf("empty trace: %+v, %v", empty, err)
	}
}
