package tracev2

import (
	"cmp"
	"fmt"
	"slices"
)

// CapFinding is what FindClientCap read in a trace's timings: whether the
// client that recorded it held requests back at a cap on the requests in
// flight (a closed loop), and the evidence.
type CapFinding struct {
	Capped bool
	// MaxConcurrency and SendGapUs are the cap and the client's median
	// gap from a slot freeing to its next send (zero unless Capped).
	MaxConcurrency int
	SendGapUs      int64
	// PeakInFlight is the most requests in flight at any send (the
	// request sent included).
	PeakInFlight int
	// LateSends counts rows sent well after their intended arrival;
	// AfterEnd, those sent right after another request ended, when the
	// requests in flight plus those that just ended made the peak: the
	// mark of a cap.
	LateSends, AfterEnd int
	Rows                int // rows with a send and an end, the evidence
}

// Thresholds of the detection.
const (
	// capLateUs: a send this much after the run's own dispatch lag (its
	// smallest: a client never sends early) is late: it waited.
	capLateUs = 1000
	// capFollowUs: a late send this soon after another request's end
	// followed it.
	capFollowUs = 5000
	// capMinLate and capShare: at least this many late sends, and this
	// share of them following an end at the peak, make a cap.
	capMinLate = 5
	capShare   = 0.9
)

// String says what was found, in one line.
func (f CapFinding) String() string {
	if f.Capped {
		return fmt.Sprintf("the trace's client kept at most %d requests in flight: %d of its %d late sends left within %g ms of another request's end, as in flight fell below the cap (send gap %d µs)",
			f.MaxConcurrency, f.AfterEnd, f.LateSends, float64(capFollowUs)/1000, f.SendGapUs)
	}
	if f.LateSends == 0 {
		return fmt.Sprintf("no sign of a client cap: no send waited (peak %d in flight)", f.PeakInFlight)
	}
	return fmt.Sprintf("no sign of a client cap: %d of %d late sends followed an end at the peak of %d in flight",
		f.AfterEnd, f.LateSends, f.PeakInFlight)
}

// RecordSpan reads a record's timings for FindClientCap: ok is false for a
// row without a send time or an end (last chunk), which is left out.
func RecordSpan(r *Record) (arrival, send, end int64, ok bool) {
	if r.SendTimeUs <= 0 || r.LastChunkTimeUs < r.SendTimeUs {
		return 0, 0, 0, false
	}
	return r.ArrivalTimeUs, r.SendTimeUs, r.LastChunkTimeUs, true
}

// FindClientCap looks at n requests, the i-th sent at send after its
// intended arrival and ended at end (at(i)), for a capped client: requests
// in flight pinned at a peak N while the late requests are sent right
// after others end. A trace whose client never had to wait shows no cap.
func FindClientCap(n int, at func(i int) (arrival, send, end int64)) CapFinding {
	f := CapFinding{Rows: n}
	if n == 0 {
		return f
	}
	// Events: +1 at a send, −1 at an end; at equal times ends first (a
	// slot freed and taken in the same microsecond).
	type event struct {
		t   int64
		end bool
		i   int32
	}
	ev := make([]event, 0, 2*n)
	minLag := int64(1) << 62
	for i := range n {
		a, s, e := at(i)
		ev = append(ev, event{t: s, i: int32(i)}, event{t: e, end: true, i: int32(i)})
		minLag = min(minLag, s-a)
	}
	slices.SortFunc(ev, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		if a.end != b.end {
			if a.end {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.i, b.i)
	})
	late := minLag + capLateUs

	// One pass: in flight just before each send, the time since the last
	// end, and the ends within capFollowUs before it (a client with a
	// send gap may have freed several slots that it has not refilled yet:
	// with them, in flight is back at the peak).
	type sendInfo struct {
		before  int   // in flight just before the send
		recent  int   // ends in [send − capFollowUs, send]
		sinceUs int64 // since the last end (−1: none yet)
		late    bool
	}
	sends := make([]sendInfo, 0, n)
	inFlight := 0
	var endTimes []int64 // ends so far, in time order
	for _, e := range ev {
		if e.end {
			inFlight--
			endTimes = append(endTimes, e.t)
			continue
		}
		a, s, _ := at(int(e.i))
		si := sendInfo{before: inFlight, sinceUs: -1, late: s-a > late}
		if k := len(endTimes); k > 0 {
			si.sinceUs = s - endTimes[k-1]
			j, _ := slices.BinarySearch(endTimes, s-capFollowUs)
			si.recent = k - j
		}
		sends = append(sends, si)
		inFlight++
		f.PeakInFlight = max(f.PeakInFlight, inFlight)
	}
	var gaps []int64
	for _, s := range sends {
		if !s.late {
			continue
		}
		f.LateSends++
		if s.sinceUs >= 0 && s.sinceUs <= capFollowUs && s.before+s.recent >= f.PeakInFlight {
			f.AfterEnd++
			gaps = append(gaps, s.sinceUs)
		}
	}
	if f.LateSends >= capMinLate && float64(f.AfterEnd) >= capShare*float64(f.LateSends) {
		slices.Sort(gaps)
		f.Capped = true
		f.MaxConcurrency = f.PeakInFlight
		f.SendGapUs = gaps[len(gaps)/2]
	}
	return f
}
