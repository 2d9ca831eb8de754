package tracev2

import (
	"bytes"
	"fmt"
	"math"
)

// decode turns the split fields of the current row into rec and validates it
// (spec §4.5, §4.7). Nothing here allocates except strings seen for the first
// time (one allocation per row for all of them) and ext_hash_ids.
func (r *Reader) decode(rec *Record) error {
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
	*rec = Record{}
	r.pend = r.pend[:0]
	r.pbuf = r.pbuf[:0]
	var err error
	for i, id := range r.bind {
		b := f[i]
		switch id {
		case colUnknown:
		case colRequestID:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 {
				return r.intError(i, b, fail)
			}
			rec.RequestID = v
		case colClientID:
			r.str(id, b, &rec.ClientID)
		case colTenantID:
			r.str(id, b, &rec.TenantID)
		case colSLOClass:
			r.str(id, b, &rec.SLOClass)
		case colVLLMPriority:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.VLLMPriority = int(v)
		case colSessionID:
			r.str(id, b, &rec.SessionID)
		case colRoundIndex:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.RoundIndex = int(v)
		case colPrefixGroup:
			r.str(id, b, &rec.PrefixGroup)
		case colPrefixLength:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.PrefixLength = int(v)
		case colStreaming:
			rec.Streaming, err = r.boolField(i, b)
		case colInputTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.InputTokens = int(v)
		case colOutputTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.OutputTokens = int(v)
		case colTextTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.TextTokens = int(v)
		case colImageTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.ImageTokens = int(v)
		case colAudioTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.AudioTokens = int(v)
		case colVideoTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.VideoTokens = int(v)
		case colReasonRatio:
			rec.ReasonRatio, err = r.ratioField(i, b)
		case colModel:
			r.str(id, b, &rec.Model)
		case colDeadlineUs:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 {
				return r.intError(i, b, fail)
			}
			rec.DeadlineUs = v
		case colSLOTargetUs:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 {
				return r.intError(i, b, fail)
			}
			rec.SLOTargetUs = v
		case colServerInputTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.ServerInputTokens = int(v)
		case colArrivalTimeUs:
			v, fail := parseInt(b)
			if fail != parseOK {
				return r.intError(i, b, fail)
			}
			rec.ArrivalTimeUs = v
		case colSendTimeUs:
			v, fail := parseInt(b)
			if fail != parseOK {
				return r.intError(i, b, fail)
			}
			rec.SendTimeUs = v
		case colFirstChunkTimeUs:
			v, fail := parseInt(b)
			if fail != parseOK {
				return r.intError(i, b, fail)
			}
			rec.FirstChunkTimeUs = v
		case colLastChunkTimeUs:
			v, fail := parseInt(b)
			if fail != parseOK {
				return r.intError(i, b, fail)
			}
			rec.LastChunkTimeUs = v
		case colNumChunks:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.NumChunks = int(v)
		case colStatus:
			r.str(id, b, &rec.Status)
		case colErrorMessage:
			r.str(id, bytes.TrimSpace(b), &rec.ErrorMessage)
		case colFinishReason:
			r.str(id, bytes.TrimSpace(b), &rec.FinishReason)
		case colXRequestID:
			r.str(id, bytes.TrimSpace(b), &rec.XRequestID)
		case colAdapter:
			r.str(id, bytes.TrimSpace(b), &rec.Adapter)
		case colThinkTimeUs:
			if b = bytes.TrimSpace(b); len(b) > 0 {
				v, fail := parseInt(b)
				if fail != parseOK || v < 0 {
					return r.intError(i, b, fail)
				}
				rec.ThinkTimeUs = v
			}
		case colExtFirstTokenTimeUs:
			v, fail := parseInt(b)
			if fail != parseOK {
				return r.intError(i, b, fail)
			}
			rec.FirstTokenTimeUs = v
		case colExtCachedTokens:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.CachedTokens = int(v)
		case colExtInstance:
			r.str(id, b, &rec.Instance)
		case colExtPreemptions:
			v, fail := parseInt(b)
			if fail != parseOK || v < 0 || v > math.MaxInt {
				return r.intError(i, b, fail)
			}
			rec.Preemptions = int(v)
		case colExtHashIDs:
			rec.HashIDs, err = r.hashIDs(i, b)
		}
		if err != nil {
			return err
		}
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

func (r *Reader) boolField(i int, b []byte) (bool, error) {
	v, fail := parseBool(b)
	switch fail {
	case parseOK:
		return v, nil
	case parseEmpty:
		return false, r.fieldError(i, "empty, want true or false")
	}
	return false, r.fieldError(i, quote(b)+" is not a boolean")
}

func (r *Reader) ratioField(i int, b []byte) (float64, error) {
	v, fail := parseFloat(b)
	switch fail {
	case parseOK:
		if math.IsNaN(v) || v < 0 || v > 1 {
			return 0, r.fieldError(i, quote(b)+" is outside [0, 1]")
		}
		return v, nil
	case parseEmpty:
		return 0, r.fieldError(i, "empty, want a number")
	case parseRange:
		return 0, r.fieldError(i, quote(b)+" is outside [0, 1]")
	}
	return 0, r.fieldError(i, quote(b)+" is not a number")
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
				return nil, r.fieldError(i, quote(b[j:k])+" is not an integer (want space-separated integers)")
			}
			out = append(out, v)
		}
		j = k
	}
	return out, nil
}

// checkRow applies the checks that involve several columns (spec §4.7).
func (r *Reader) checkRow(rec *Record) error {
	if rec.DeadlineUs > 0 && rec.ArrivalTimeUs > 0 && rec.DeadlineUs < rec.ArrivalTimeUs {
		return r.fieldError(r.idx[colDeadlineUs], fmt.Sprintf("%d is before arrival_time_us %d", rec.DeadlineUs, rec.ArrivalTimeUs))
	}
	if r.simulated && rec.SendTimeUs < rec.ArrivalTimeUs {
		r.warnField(r.idx[colSendTimeUs], fmt.Sprintf("%d is before arrival_time_us %d", rec.SendTimeUs, rec.ArrivalTimeUs))
	}
	if rec.FirstChunkTimeUs > 0 && rec.SendTimeUs > 0 && rec.FirstChunkTimeUs < rec.SendTimeUs {
		r.warnField(r.idx[colFirstChunkTimeUs], fmt.Sprintf("%d is before send_time_us %d", rec.FirstChunkTimeUs, rec.SendTimeUs))
	}
	if rec.LastChunkTimeUs > 0 && rec.FirstChunkTimeUs > 0 && rec.LastChunkTimeUs < rec.FirstChunkTimeUs {
		r.warnField(r.idx[colLastChunkTimeUs], fmt.Sprintf("%d is before first_chunk_time_us %d", rec.LastChunkTimeUs, rec.FirstChunkTimeUs))
	}
	if rec.Status == "ok" && rec.FirstChunkTimeUs == 0 {
		r.warnField(r.idx[colFirstChunkTimeUs], "0 (never) in a row with status ok")
	}
	return nil
}
