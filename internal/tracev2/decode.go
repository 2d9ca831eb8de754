package tracev2

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// errSlow makes decodeRow retry a row on the precise path. The fast path
// never builds an error message: anything unusual (a short or long row, a
// bad value) is re-done on the split row, which gives the located error or
// warning.
var errSlow = errors.New("tracev2: retry the row on the split path")

// decodeRow decodes one physical row (line, without its line end) into rec.
// A row without double quotes is decoded in one pass over the line, numbers
// parsed while their field end is found; other rows, and every row that
// fails on that path, are split into fields first (csvsplit.go).
func (r *Reader) decodeRow(line []byte, rec *Record) error {
	if !r.slowOnly && bytes.IndexByte(line, '"') < 0 {
		r.fast, r.line, r.pos, r.short = true, line, 0, false
		err := r.decode(rec)
		r.fast = false
		if err != errSlow {
			return err
		}
	}
	if err := r.sp.split(line); err != nil {
		return err
	}
	return r.decode(rec)
}

// decode turns the current row into rec and validates it (docs/tracev2.md §4.5, §4.7).
// Nothing here allocates except strings seen for the first time (one
// allocation per row for all of them) and ext_hash_ids.
func (r *Reader) decode(rec *Record) error {
	if !r.fast {
		if err := r.checkFieldCount(); err != nil {
			return err
		}
	}
	if !r.zeroed {
		// A 400-byte record with pointers is costly to clear while the
		// collector runs (write barriers): ReadAll's fresh slots skip it.
		*rec = Record{}
	}
	r.zeroed = false
	r.pend = r.pend[:0]
	r.pbuf = r.pbuf[:0]
	for i, id := range r.bind {
		// Integer columns go through one table (numKinds) into r.nums,
		// copied to rec by storeNums; the others are decoded here.
		if k := numKinds[id]; k != numNone {
			v, fail := r.intAt(i)
			if b := &numBounds[k]; fail != parseOK || v < b.lo || v > b.hi {
				if k == numCount {
					return r.countError(i, r.cur, fail)
				}
				return r.intError(i, r.cur, fail)
			}
			r.nums[id] = v
			continue
		}
		switch id {
		case colClientID:
			r.str(id, r.fieldAt(i), &rec.ClientID)
		case colTenantID:
			r.str(id, r.fieldAt(i), &rec.TenantID)
		case colSLOClass:
			r.str(id, r.fieldAt(i), &rec.SLOClass)
		case colSessionID:
			r.str(id, r.fieldAt(i), &rec.SessionID)
		case colPrefixGroup:
			r.str(id, r.fieldAt(i), &rec.PrefixGroup)
		case colModel:
			r.str(id, r.fieldAt(i), &rec.Model)
		case colStatus:
			r.str(id, r.fieldAt(i), &rec.Status)
		case colExtInstance:
			r.str(id, r.fieldAt(i), &rec.Instance)
		case colErrorMessage:
			r.str(id, bytes.TrimSpace(r.fieldAt(i)), &rec.ErrorMessage)
		case colFinishReason:
			r.str(id, bytes.TrimSpace(r.fieldAt(i)), &rec.FinishReason)
		case colXRequestID:
			r.str(id, bytes.TrimSpace(r.fieldAt(i)), &rec.XRequestID)
		case colAdapter:
			r.str(id, bytes.TrimSpace(r.fieldAt(i)), &rec.Adapter)
		case colStreaming:
			b := r.fieldAt(i)
			v, fail := parseBool(b)
			if fail != parseOK {
				return r.boolError(i, b, fail)
			}
			rec.Streaming = v
		case colReasonRatio:
			b := r.fieldAt(i)
			v, fail := parseFloat(b)
			if fail != parseOK || math.IsNaN(v) || v < 0 || v > 1 {
				return r.ratioError(i, b, fail)
			}
			rec.ReasonRatio = v
		case colThinkTimeUs:
			// Trimmed, and empty means 0 (docs/tracev2.md §4.5).
			if b := bytes.TrimSpace(r.fieldAt(i)); len(b) > 0 {
				v, fail := parseInt(b)
				if fail != parseOK || v < 0 {
					return r.intError(i, b, fail)
				}
				rec.ThinkTimeUs = v
			}
		case colExtHashIDs:
			ids, err := r.hashIDs(i, r.fieldAt(i))
			if err != nil {
				return err
			}
			rec.HashIDs = ids
		default: // colUnknown: skip the field
			r.fieldAt(i)
		}
	}
	r.storeNums(rec)
	return r.finishRow(rec)
}

// numKind says how an integer column is bounded, and so which message
// explains a value out of bounds.
type numKind uint8

const (
	numNone   numKind = iota // not an integer column
	numAny                   // any int64: times
	numNonNeg                // ≥ 0: ids, deadlines
	numInt                   // in [0, MaxInt]: indices and event counts
	numCount                 // in [0, MaxTokens]: token counts
)

// numBounds are the bounds of each numKind.
var numBounds = [...]struct{ lo, hi int64 }{
	numNone:   {0, -1},
	numAny:    {math.MinInt64, math.MaxInt64},
	numNonNeg: {0, math.MaxInt64},
	numInt:    {0, math.MaxInt},
	numCount:  {0, MaxTokens},
}

// numKinds is the numKind of each column.
var numKinds = [numCols]numKind{
	colRequestID:           numNonNeg,
	colDeadlineUs:          numNonNeg,
	colSLOTargetUs:         numNonNeg,
	colArrivalTimeUs:       numAny,
	colSendTimeUs:          numAny,
	colFirstChunkTimeUs:    numAny,
	colLastChunkTimeUs:     numAny,
	colExtFirstTokenTimeUs: numAny,
	colRoundIndex:          numInt,
	colPrefixLength:        numCount,
	colInputTokens:         numCount,
	colOutputTokens:        numCount,
	colTextTokens:          numCount,
	colImageTokens:         numCount,
	colAudioTokens:         numCount,
	colVideoTokens:         numCount,
	colServerInputTokens:   numCount,
	colNumChunks:           numInt,
	colVLLMPriority:        numInt,
	colExtCachedTokens:     numCount,
	colExtPreemptions:      numInt,
}

// storeNums copies the integer columns of the row from r.nums to rec. A
// column the file lacks was never written and stays 0.
func (r *Reader) storeNums(rec *Record) {
	rec.RequestID = r.nums[colRequestID]
	rec.DeadlineUs = r.nums[colDeadlineUs]
	rec.SLOTargetUs = r.nums[colSLOTargetUs]
	rec.ArrivalTimeUs = r.nums[colArrivalTimeUs]
	rec.SendTimeUs = r.nums[colSendTimeUs]
	rec.FirstChunkTimeUs = r.nums[colFirstChunkTimeUs]
	rec.LastChunkTimeUs = r.nums[colLastChunkTimeUs]
	rec.FirstTokenTimeUs = r.nums[colExtFirstTokenTimeUs]
	rec.RoundIndex = int(r.nums[colRoundIndex])
	rec.PrefixLength = int(r.nums[colPrefixLength])
	rec.InputTokens = int(r.nums[colInputTokens])
	rec.OutputTokens = int(r.nums[colOutputTokens])
	rec.TextTokens = int(r.nums[colTextTokens])
	rec.ImageTokens = int(r.nums[colImageTokens])
	rec.AudioTokens = int(r.nums[colAudioTokens])
	rec.VideoTokens = int(r.nums[colVideoTokens])
	rec.ServerInputTokens = int(r.nums[colServerInputTokens])
	rec.NumChunks = int(r.nums[colNumChunks])
	rec.VLLMPriority = int(r.nums[colVLLMPriority])
	rec.CachedTokens = int(r.nums[colExtCachedTokens])
	rec.Preemptions = int(r.nums[colExtPreemptions])
}

// finishRow ends a decoded row: the fast path's field count is checked,
// the row's new strings are stored, and the record is validated.
func (r *Reader) finishRow(rec *Record) error {
	if r.fast && (r.short || r.pos <= len(r.line)) {
		return errSlow // fewer or more fields than the column row
	}
	if len(r.pend) > 0 {
		s := string(r.pbuf)
		for _, p := range r.pend {
			*p.dst = s[p.start:p.end]
		}
	}
	if err := r.checkRow(rec); err != nil {
		return err
	}
	if err := r.origin.check(rec, r.rowLine, &r.idx, r.name); err != nil {
		return err
	}
	r.origin.commit(rec, r.rowLine, &r.idx)
	return nil
}

// checkFieldCount compares a split row with the column row (docs/tracev2.md §4.5).
func (r *Reader) checkFieldCount() error {
	f := r.sp.fields
	if len(f) < r.ncols {
		return &Error{File: r.name, Line: r.rowLine, Column: len(f) + 1, What: "column " + r.colName(len(f)),
			Msg: fmt.Sprintf("missing: the row has %d fields, the column row %d", len(f), r.ncols)}
	}
	if len(f) > r.ncols {
		for _, x := range f[r.ncols:] {
			if len(x) != 0 {
				return &Error{File: r.name, Line: r.rowLine, Column: r.ncols + 1, What: "row",
					Msg: fmt.Sprintf("%d fields, but the column row has %d", len(f), r.ncols)}
			}
		}
		r.warns.add((&Error{File: r.name, Line: r.rowLine, Column: r.ncols + 1, What: "row",
			Msg: fmt.Sprintf("%d trailing empty fields ignored", len(f)-r.ncols)}).Error())
	}
	return nil
}

// fieldAt returns field i: from the split row, or on the fast path the bytes
// up to the next comma of the line.
func (r *Reader) fieldAt(i int) []byte {
	if !r.fast {
		return r.sp.fields[i]
	}
	if r.pos > len(r.line) {
		r.short = true
		return nil
	}
	rest := r.line[r.pos:]
	for j, c := range rest {
		if c == ',' {
			r.pos += j + 1
			return rest[:j]
		}
	}
	r.pos = len(r.line) + 1
	return rest
}

// intAt parses field i as a base-10 int64 and leaves the field in r.cur.
// On the fast path it reads the digits in place, so the field end costs
// nothing; a field that is not a plain number of at most 18 digits goes to
// the slow path, whose parseInt classifies it exactly.
func (r *Reader) intAt(i int) (int64, parseFail) {
	if !r.fast {
		r.cur = r.sp.fields[i]
		return parseInt(r.cur)
	}
	line, p := r.line, r.pos
	if p > len(line) {
		r.short = true
		return 0, parseEmpty
	}
	neg := p < len(line) && line[p] == '-'
	if neg || (p < len(line) && line[p] == '+') {
		p++
	}
	start := p
	var u uint64
	for p < len(line) {
		d := line[p] - '0'
		if d > 9 {
			break
		}
		u = u*10 + uint64(d)
		p++
	}
	if n := p - start; n == 0 || n > 18 || (p < len(line) && line[p] != ',') {
		return 0, parseSyntax
	}
	r.cur = line[r.pos:p]
	r.pos = p + 1
	if neg {
		return -int64(u), parseOK
	}
	return int64(u), parseOK
}

// colName names field i of the column row, for messages.
func (r *Reader) colName(i int) string {
	if i < len(r.bind) && r.bind[i] != colUnknown {
		return r.bind[i].name()
	}
	return fmt.Sprintf("#%d", i+1)
}

// str stores a string field: an interned string when the value was seen
// before, otherwise a slice of the row's one allocation.
func (r *Reader) str(c colID, b []byte, dst *string) {
	if len(b) == 0 {
		return
	}
	if s, ok := r.intern.lookup(c, b); ok {
		*dst = s
		return
	}
	if s, ok := r.intern.add(c, b); ok {
		*dst = s
		return
	}
	r.pend = append(r.pend, pendingStr{dst: dst, start: len(r.pbuf), end: len(r.pbuf) + len(b)})
	r.pbuf = append(r.pbuf, b...)
}

// intError explains why an integer field failed to parse.
func (r *Reader) intError(i int, b []byte, fail parseFail) error {
	if r.fast {
		return errSlow
	}
	switch fail {
	case parseOK:
		if len(b) > 0 && b[0] == '-' {
			return r.fieldError(i, quote(b)+" is negative")
		}
		return r.fieldError(i, quote(b)+" is out of range")
	case parseEmpty:
		return r.fieldError(i, "empty, want an integer")
	case parseRange:
		return r.fieldError(i, quote(b)+" is out of range")
	}
	return r.fieldError(i, quote(b)+" is not an integer")
}

// countError is intError for a token count, whose bound is MaxTokens.
func (r *Reader) countError(i int, b []byte, fail parseFail) error {
	if fail == parseOK && len(b) > 0 && b[0] != '-' {
		if r.fast {
			return errSlow
		}
		return r.fieldError(i, fmt.Sprintf("%s exceeds %d, the largest token count a trace may hold", quote(b), MaxTokens))
	}
	return r.intError(i, b, fail)
}

func (r *Reader) boolError(i int, b []byte, fail parseFail) error {
	if r.fast {
		return errSlow
	}
	if fail == parseEmpty {
		return r.fieldError(i, "empty, want true or false")
	}
	return r.fieldError(i, quote(b)+" is not a boolean")
}

func (r *Reader) ratioError(i int, b []byte, fail parseFail) error {
	if r.fast {
		return errSlow
	}
	switch fail {
	case parseEmpty:
		return r.fieldError(i, "empty, want a number")
	case parseSyntax:
		return r.fieldError(i, quote(b)+" is not a number")
	}
	return r.fieldError(i, quote(b)+" is outside [0, 1]")
}

// hashIDs parses space-separated int64s; empty means none.
func (r *Reader) hashIDs(i int, b []byte) ([]int64, error) {
	n := 0
	for j := 0; j < len(b); {
		for j < len(b) && b[j] == ' ' {
			j++
		}
		if j < len(b) {
			n++
		}
		for j < len(b) && b[j] != ' ' {
			j++
		}
	}
	if n == 0 {
		return nil, nil
	}
	if n > MaxHashIDs {
		if r.fast {
			return nil, errSlow
		}
		return nil, r.fieldError(i, fmt.Sprintf("%d entries, more than %d", n, MaxHashIDs))
	}
	out := make([]int64, 0, n)
	for j := 0; j < len(b); {
		for j < len(b) && b[j] == ' ' {
			j++
		}
		k := j
		for k < len(b) && b[k] != ' ' {
			k++
		}
		if k > j {
			v, fail := parseInt(b[j:k])
			if fail != parseOK {
				if r.fast {
					return nil, errSlow
				}
				return nil, r.fieldError(i, quote(b[j:k])+" is not an integer (want space-separated integers)")
			}
			out = append(out, v)
		}
		j = k
	}
	return out, nil
}

// checkRow applies the checks that involve several columns (docs/tracev2.md §4.7).
func (r *Reader) checkRow(rec *Record) error {
	if rec.PrefixLength+rec.InputTokens > MaxTokens {
		return r.fieldError(r.idx[colInputTokens], fmt.Sprintf("prefix_length %d + input_tokens %d exceed %d, the largest prompt a trace may hold",
			rec.PrefixLength, rec.InputTokens, MaxTokens))
	}
	if rec.DeadlineUs > 0 && rec.ArrivalTimeUs > 0 && rec.DeadlineUs < rec.ArrivalTimeUs {
		return r.fieldError(r.idx[colDeadlineUs], fmt.Sprintf("%d is before arrival_time_us %d", rec.DeadlineUs, rec.ArrivalTimeUs))
	}
	for _, c := range []struct {
		id colID
		v  int64
	}{{colSendTimeUs, rec.SendTimeUs}, {colFirstChunkTimeUs, rec.FirstChunkTimeUs}, {colLastChunkTimeUs, rec.LastChunkTimeUs},
		{colExtFirstTokenTimeUs, rec.FirstTokenTimeUs}} {
		if c.v < 0 && r.idx[c.id] >= 0 {
			// A recorded instant is at least 1 µs after t0 (docs/tracev2.md §5); a
			// replay injects a row without a positive send time at its
			// arrival time.
			v := c.v
			r.warnField(r.idx[c.id], func() string {
				return fmt.Sprintf("%d is negative: not an instant of the run (recorded times are ≥ 1, 0 is never)", v)
			})
		}
	}
	if r.simulated && rec.SendTimeUs < rec.ArrivalTimeUs {
		r.warnField(r.idx[colSendTimeUs], func() string {
			return fmt.Sprintf("%d is before arrival_time_us %d", rec.SendTimeUs, rec.ArrivalTimeUs)
		})
	}
	if rec.FirstChunkTimeUs > 0 && rec.SendTimeUs > 0 && rec.FirstChunkTimeUs < rec.SendTimeUs {
		r.warnField(r.idx[colFirstChunkTimeUs], func() string {
			return fmt.Sprintf("%d is before send_time_us %d", rec.FirstChunkTimeUs, rec.SendTimeUs)
		})
	}
	if rec.LastChunkTimeUs > 0 && rec.FirstChunkTimeUs > 0 && rec.LastChunkTimeUs < rec.FirstChunkTimeUs {
		r.warnField(r.idx[colLastChunkTimeUs], func() string {
			return fmt.Sprintf("%d is before first_chunk_time_us %d", rec.LastChunkTimeUs, rec.FirstChunkTimeUs)
		})
	}
	if rec.Status == "ok" && rec.FirstChunkTimeUs == 0 {
		r.warnField(r.idx[colFirstChunkTimeUs], func() string { return "0 (never) in a row with status ok" })
	}
	return nil
}
