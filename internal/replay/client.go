package replay

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"servesim/internal/des/sim"
	"servesim/internal/tracev2"
)

// Client is the load generator that sent a trace's requests, as the replay
// models it (simulator.md §13): at most MaxConcurrency requests in flight
// (0 = an open loop), the next waiting request sent SendGapUs after a slot
// frees. A capped client's rows are injected at their intended arrival
// (arrival_time_us) and the cap decides their send.
type Client = sim.Client

// ClientFinding is what DetectClient read in a trace.
type ClientFinding struct {
	Capped bool
	Client Client // the cap and send gap found (zero unless Capped)
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
	// lateUs: a send this much after the run's own dispatch lag (its
	// smallest: a client never sends early) is late: it waited.
	lateUs = 1000
	// followUs: a late send this soon after another request's end
	// followed it.
	followUs = 5000
	// minLate and capShare: at least this many late sends, and this share
	// of them following an end at the peak, make a cap.
	minLate  = 5
	capShare = 0.9
)

// String says what was found, in one line.
func (f ClientFinding) String() string {
	if f.Capped {
		return fmt.Sprintf("the trace's client kept at most %d requests in flight: %d of its %d late sends left within %s of another request's end, as in flight fell below the cap (send gap %d µs)",
			f.Client.MaxConcurrency, f.AfterEnd, f.LateSends, fmtUs(followUs), f.Client.SendGapUs)
	}
	if f.LateSends == 0 {
		return fmt.Sprintf("no sign of a client cap: no send waited (peak %d in flight)", f.PeakInFlight)
	}
	return fmt.Sprintf("no sign of a client cap: %d of %d late sends followed an end at the peak of %d in flight",
		f.AfterEnd, f.LateSends, f.PeakInFlight)
}

func fmtUs(us int64) string { return fmt.Sprintf("%g ms", float64(us)/1000) }

// DetectClient reads the rows once and looks for a capped client: requests
// in flight pinned at a peak N while the late requests are sent right after
// others end. Rows with no send time or no end (last chunk) are left out of
// the count; a trace whose client never had to wait shows no cap, and none
// is needed to replay it.
func DetectClient(rows Rows) (ClientFinding, error) {
	rd, err := rows.Open()
	if err != nil {
		return ClientFinding{}, err
	}
	defer rd.Close()
	type span struct{ arrival, send, end int64 }
	var spans []span
	var rec tracev2.Record
	for {
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ClientFinding{}, err
		}
		if HasSpan(&rec) {
			spans = append(spans, span{rec.ArrivalTimeUs, rec.SendTimeUs, rec.LastChunkTimeUs})
		}
	}
	return detect(len(spans), func(i int) (int64, int64, int64) {
		s := spans[i]
		return s.arrival, s.send, s.end
	}), nil
}

// HasSpan reports whether DetectClient counts rec: it has a send and an end
// (a trace without such rows shows no client, and need not be read for
// one).
func HasSpan(rec *tracev2.Record) bool {
	return rec.SendTimeUs > 0 && rec.LastChunkTimeUs >= rec.SendTimeUs
}

// detect is DetectClient on n spans given by at(i).
func detect(n int, at func(i int) (arrival, send, end int64)) ClientFinding {
	f := ClientFinding{Rows: n}
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
	late := minLag + lateUs

	// One pass: in flight before each send, and the last end before it.
	// One pass: in flight just before each send, the time since the last
	// end, and the ends within followUs before it (a client with a send
	// gap may have freed several slots that it has not refilled yet: with
	// them, in flight is back at the peak).
	type sendInfo struct {
		before  int   // in flight just before the send
		recent  int   // ends in [send − followUs, send]
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
			j, _ := slices.BinarySearch(endTimes, s-followUs)
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
		if s.sinceUs >= 0 && s.sinceUs <= followUs && s.before+s.recent >= f.PeakInFlight {
			f.AfterEnd++
			gaps = append(gaps, s.sinceUs)
		}
	}
	if f.LateSends >= minLate && float64(f.AfterEnd) >= capShare*float64(f.LateSends) {
		slices.Sort(gaps)
		f.Capped = true
		f.Client = Client{MaxConcurrency: f.PeakInFlight, SendGapUs: gaps[len(gaps)/2]}
	}
	return f
}
