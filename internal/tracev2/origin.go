package tracev2

import (
	"errors"
	"fmt"
	"io"
)

// EpochThresholdUs separates absolute Unix-epoch times from offsets: a time
// value at or above 10^15 µs (2001-09-09) is epoch, a smaller one is an
// offset from t0 (spec §5). Zero keeps its meaning "never".
const EpochThresholdUs int64 = 1_000_000_000_000_000

// IsEpoch reports whether t is an absolute Unix-epoch time in µs.
func IsEpoch(t int64) bool { return t >= EpochThresholdUs }

// Origin rules (spec §5).
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
// candidates, so the origin is known at the end of one pass.
type originTracker struct {
	cls       [numCols]int8 // 0 unseen, 1 offset, 2 epoch
	firstLine [numCols]int
	firstCol  [numCols]int
	minDiff   int64 // min(send − arrival) over rows with epoch send and offset arrival
	haveDiff  bool
	minArr    int64 // min epoch arrival
	haveArr   bool
	result    Origin
}

func timeValues(rec *Record) [6]struct {
	id colID
	v  int64
} {
	return [6]struct {
		id colID
		v  int64
	}{
		{colArrivalTimeUs, rec.ArrivalTimeUs}, {colSendTimeUs, rec.SendTimeUs},
		{colFirstChunkTimeUs, rec.FirstChunkTimeUs}, {colLastChunkTimeUs, rec.LastChunkTimeUs},
		{colDeadlineUs, rec.DeadlineUs}, {colExtFirstTokenTimeUs, rec.FirstTokenTimeUs},
	}
}

// check reports a value whose kind differs from its column's.
func (t *originTracker) check(rec *Record, line int, idx *[numCols]int, name string) error {
	for _, tv := range timeValues(rec) {
		if tv.v == 0 {
			continue
		}
		k := int8(1)
		if tv.v >= EpochThresholdUs {
			k = 2
		}
		if c := t.cls[tv.id]; c != 0 && c != k {
			msg := fmt.Sprintf("%d is an offset, but earlier rows (from line %d) hold Unix-epoch times", tv.v, t.firstLine[tv.id])
			if k == 2 {
				msg = fmt.Sprintf("%d is a Unix-epoch time, but earlier rows (from line %d) hold offsets", tv.v, t.firstLine[tv.id])
			}
			return &Error{File: name, Line: line, Column: idx[tv.id] + 1, What: "column " + tv.id.name(), Msg: msg}
		}
	}
	return nil
}

func (t *originTracker) commit(rec *Record, line int, idx *[numCols]int) {
	for _, tv := range timeValues(rec) {
		if tv.v == 0 || t.cls[tv.id] != 0 {
			continue
		}
		t.cls[tv.id] = 1
		if tv.v >= EpochThresholdUs {
			t.cls[tv.id] = 2
		}
		t.firstLine[tv.id] = line
		t.firstCol[tv.id] = idx[tv.id] + 1
	}
	if IsEpoch(rec.ArrivalTimeUs) {
		if !t.haveArr || rec.ArrivalTimeUs < t.minArr {
			t.minArr, t.haveArr = rec.ArrivalTimeUs, true
		}
	} else if IsEpoch(rec.SendTimeUs) {
		if d := rec.SendTimeUs - rec.ArrivalTimeUs; !t.haveDiff || d < t.minDiff {
			t.minDiff, t.haveDiff = d, true
		}
	}
}

// settle picks the rule at the end of the file.
func (t *originTracker) settle(name string) error {
	switch {
	case t.cls[colArrivalTimeUs] == 2:
		t.result = Origin{Rule: RuleEpochArrival, E0: t.minArr}
	case t.cls[colSendTimeUs] == 2:
		t.result = Origin{Rule: RuleEpochSend, E0: t.minDiff}
	default:
		for c := colRequestID; c < numCols; c++ {
			if c.isTime() && t.cls[c] == 2 {
				return &Error{File: name, Line: t.firstLine[c], Column: t.firstCol[c], What: "column " + c.name(),
					Msg: "holds Unix-epoch times while arrival_time_us and send_time_us hold offsets; the time origin cannot be estimated"}
			}
		}
		t.result = Origin{Rule: RuleOffsets}
	}
	return nil
}

// Trace is a whole trace in memory, for consumers that index it (calibrate).
type Trace struct {
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
	for {
		var rec Record
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		t.Records = append(t.Records, rec)
		t.Lines = append(t.Lines, r.Line())
	}
	o, err := r.Origin()
	if err != nil {
		return nil, err
	}
	if r.norm == nil {
		for i := range t.Records {
			o.Normalize(&t.Records[i])
		}
	}
	t.Header, t.Columns, t.Origin, t.Skipped = r.Header(), r.Columns(), o, r.Skipped()
	return t, nil
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
