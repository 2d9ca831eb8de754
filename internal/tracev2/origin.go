package tracev2

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// EpochThresholdUs separates absolute Unix-epoch times from offsets: a time
// value at or above 10^15 µs (2001-09-09) is epoch, a smaller one is an
// offset from t0 (docs/tracev2.md §5). Zero keeps its meaning "never".
const EpochThresholdUs int64 = 1_000_000_000_000_000

// IsEpoch reports whether t is an absolute Unix-epoch time in µs.
func IsEpoch(t int64) bool { return t >= EpochThresholdUs }

// Origin rules (docs/tracev2.md §5).
const (
	// RuleOffsets: no epoch values; times are used as they are.
	RuleOffsets = 1
	// RuleEpochSend: arrival_time_us is an offset, send and chunk times are
	// epoch (BLIS observe); E0 = min over rows of (send − arrival).
	RuleEpochSend = 2
	// RuleEpochArrival: arrival_time_us is epoch too (converted traces);
	// E0 = min over rows of arrival.
	RuleEpochArrival = 3
)

// Origin is a file's time origin: the estimated Unix-epoch µs E0 of t0 and
// the rule that gave it. Normalising subtracts E0 from every epoch value, so
// every time becomes an offset from the workload start. The zero Origin
// leaves times unchanged.
type Origin struct {
	Rule int   // RuleOffsets, RuleEpochSend or RuleEpochArrival; 0 = unknown (no change)
	E0   int64 // Unix-epoch µs of t0; 0 under RuleOffsets
}

// Time normalises one time value: epoch values lose E0, offsets and the
// sentinel 0 are unchanged. ITL timestamps use it too.
func (o Origin) Time(t int64) int64 {
	if o.E0 != 0 && t >= EpochThresholdUs {
		return t - o.E0
	}
	return t
}

// Normalize rewrites every time column of rec on the origin t0:
// arrival, send, first and last chunk, deadline and ext_first_token_time_us.
// Durations (slo_target_us, think_time_us) are not times and stay.
func (o Origin) Normalize(rec *Record) {
	if o.E0 == 0 {
		return
	}
	rec.ArrivalTimeUs = o.Time(rec.ArrivalTimeUs)
	rec.SendTimeUs = o.Time(rec.SendTimeUs)
	rec.FirstChunkTimeUs = o.Time(rec.FirstChunkTimeUs)
	rec.LastChunkTimeUs = o.Time(rec.LastChunkTimeUs)
	rec.DeadlineUs = o.Time(rec.DeadlineUs)
	rec.FirstTokenTimeUs = o.Time(rec.FirstTokenTimeUs)
}

// originTracker classifies every time column while rows stream by: the first
// non-zero value fixes whether the column is epoch or offset, and a later
// value of the other kind is an error on its line. It keeps the two E0
// candidates, so the origin is known at the end of one pass. Per row it
// works on bit masks over the six time columns (bit k = timeCols()[k]).
type originTracker struct {
	seen      uint8 // columns whose kind is fixed
	epoch     uint8 // of those, the epoch ones
	firstLine [6]int
	firstCol  [6]int
	minDiff   int64 // min(send − arrival) over rows with epoch send and offset arrival
	haveDiff  bool
	minArr    int64 // min epoch arrival
	haveArr   bool
	result    Origin
}

// timeCols lists the time columns in mask bit order.
func timeCols() [6]colID {
	return [6]colID{colArrivalTimeUs, colSendTimeUs, colFirstChunkTimeUs, colLastChunkTimeUs,
		colDeadlineUs, colExtFirstTokenTimeUs}
}

func timeValues(rec *Record) [6]int64 {
	return [6]int64{rec.ArrivalTimeUs, rec.SendTimeUs, rec.FirstChunkTimeUs, rec.LastChunkTimeUs,
		rec.DeadlineUs, rec.FirstTokenTimeUs}
}

// masks gives the non-zero and the epoch time values of rec.
func masks(rec *Record) (nz, ep uint8) {
	for k, v := range timeValues(rec) {
		if v != 0 {
			nz |= 1 << k
			if v >= EpochThresholdUs {
				ep |= 1 << k
			}
		}
	}
	return nz, ep
}

// check reports a value whose kind differs from its column's.
func (t *originTracker) check(rec *Record, line int, idx *[numCols]int, name string) error {
	nz, ep := masks(rec)
	bad := nz & t.seen & (ep ^ t.epoch)
	if bad == 0 {
		return nil
	}
	k := bits.TrailingZeros8(bad)
	id, v := timeCols()[k], timeValues(rec)[k]
	msg := fmt.Sprintf("%d is an offset, but earlier rows (from line %d) hold Unix-epoch times", v, t.firstLine[k])
	if ep&(1<<k) != 0 {
		msg = fmt.Sprintf("%d is a Unix-epoch time, but earlier rows (from line %d) hold offsets", v, t.firstLine[k])
	}
	return &Error{File: name, Line: line, Column: idx[id] + 1, What: "column " + id.name(), Msg: msg}
}

func (t *originTracker) commit(rec *Record, line int, idx *[numCols]int) {
	nz, ep := masks(rec)
	if fresh := nz &^ t.seen; fresh != 0 {
		for k, id := range timeCols() {
			if fresh&(1<<k) != 0 {
				t.firstLine[k], t.firstCol[k] = line, idx[id]+1
			}
		}
		t.seen |= fresh
		t.epoch |= ep & fresh
	}
	if ep&1 != 0 { // epoch arrival
		if !t.haveArr || rec.ArrivalTimeUs < t.minArr {
			t.minArr, t.haveArr = rec.ArrivalTimeUs, true
		}
	} else if ep&2 != 0 { // epoch send, offset arrival
		if d := rec.SendTimeUs - rec.ArrivalTimeUs; !t.haveDiff || d < t.minDiff {
			t.minDiff, t.haveDiff = d, true
		}
	}
}

// settle picks the rule at the end of the file.
func (t *originTracker) settle(name string) error {
	switch {
	case t.epoch&1 != 0:
		t.result = Origin{Rule: RuleEpochArrival, E0: t.minArr}
	case t.epoch&2 != 0:
		t.result = Origin{Rule: RuleEpochSend, E0: t.minDiff}
	case t.epoch != 0:
		k := bits.TrailingZeros8(t.epoch)
		return &Error{File: name, Line: t.firstLine[k], Column: t.firstCol[k], What: "column " + timeCols()[k].name(),
			Msg: "holds Unix-epoch times while arrival_time_us and send_time_us hold offsets; the time origin cannot be estimated"}
	default:
		t.result = Origin{Rule: RuleOffsets}
	}
	return nil
}

// Trace is a whole trace in memory, for consumers that index it (calibrate).
type Trace struct {
	Name    string // file name used in messages
	Header  *Header
	Columns Columns
	Records []Record
	Lines   []int  // physical line where each record starts, for messages
	Origin  Origin // the origin the records were normalised with
	Skipped int    // rows skipped in lenient mode
}

// ReadAll reads r to the end and normalises every record on the file's time
// origin. Memory grows with the trace: streaming consumers use Read, with
// Reader.Normalize after ScanOrigin when the file may hold epoch times.
func ReadAll(r *Reader) (*Trace, error) {
	t := &Trace{}
	recs, lines, err := readChunked(r)
	if err != nil {
		return nil, err
	}
	t.Records, t.Lines = recs, lines
	o, err := r.Origin()
	if err != nil {
		return nil, err
	}
	if r.norm == nil {
		for i := range t.Records {
			o.Normalize(&t.Records[i])
		}
	}
	t.Name, t.Header, t.Columns, t.Origin, t.Skipped = r.Name(), r.Header(), r.Columns(), o, r.Skipped()
	return t, nil
}

// readChunked reads every record into one slice. A million records of a few
// hundred bytes each must not be copied again and again as append grows the
// slice (1.25x at a time): after the first rows it sizes the slice from the
// file size (Reader.estimateRows), and rows beyond the estimate go to chunks
// that are copied once at the end.
func readChunked(r *Reader) ([]Record, []int, error) {
	const firstRows, maxChunk = 256, 1 << 14
	recs := make([]Record, 0, firstRows)
	lines := make([]int, 0, firstRows)
	var chunks [][]Record
	estimated := false
	n := 0
	for {
		dst := &recs
		if len(recs) == cap(recs) && !estimated {
			estimated = true
			if est := r.estimateRows(); est > len(recs) {
				recs = append(make([]Record, 0, est), recs...)
				lines = append(make([]int, 0, est), lines...)
			}
		}
		if len(recs) == cap(recs) {
			if len(chunks) == 0 || len(chunks[len(chunks)-1]) == cap(chunks[len(chunks)-1]) {
				chunks = append(chunks, make([]Record, 0, min(max(cap(recs)/4, firstRows), maxChunk)))
			}
			dst = &chunks[len(chunks)-1]
		}
		c := *dst
		c = c[:len(c)+1] // a zero slot, never used before
		r.zeroed = true
		err := r.Read(&c[len(c)-1])
		r.zeroed = false
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		*dst = c
		n++
		lines = append(lines, r.Line())
	}
	switch {
	case n == 0:
		return nil, nil, nil // as append from nil would leave them
	case len(chunks) == 0:
		return recs, lines, nil
	}
	all := make([]Record, 0, n)
	all = append(all, recs...)
	recs = nil // let the collector take it while the rest is copied
	for i, c := range chunks {
		all = append(all, c...)
		chunks[i] = nil
	}
	return all, lines, nil
}

// IndexByID maps each request_id to its record's index. A duplicated
// request_id is an *Error naming both lines (docs/tracev2.md §7: uniqueness is checked
// by consumers that index the trace).
func (t *Trace) IndexByID() (map[int64]int, error) {
	idx := make(map[int64]int, len(t.Records))
	for i := range t.Records {
		id := t.Records[i].RequestID
		if j, dup := idx[id]; dup {
			return nil, &Error{File: t.Name, Line: t.Lines[i], Column: 1, What: "column request_id",
				Msg: fmt.Sprintf("%d is duplicated (first on line %d)", id, t.Lines[j])}
		}
		idx[id] = i
	}
	return idx, nil
}

// Load opens a trace (see Open), reads it whole and normalises it.
func Load(in Input, opts Options) (*Trace, error) {
	r, _, err := Open(in, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ReadAll(r)
}

// ScanOrigin reads a trace once, validating every row, and returns its time
// origin. A streaming consumer of a file (not stdin) calls it first, then
// opens the trace again and calls Reader.Normalize with the result, keeping
// memory flat. Without a first pass a consumer may stream as is when
// Header.OffsetsOnly holds (our writers) — the reader still rejects any epoch
// value mixed into an offset column.
func ScanOrigin(in Input, opts Options) (Origin, error) {
	opts.Warn = nil // the second pass repeats every warning
	r, _, err := Open(in, opts)
	if err != nil {
		return Origin{}, err
	}
	defer r.Close()
	var rec Record
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return r.Origin()
		}
		if err != nil {
			return Origin{}, err
		}
	}
}
