package tracev2

import (
	"encoding/json"
	"math"
	"strconv"
)

// AppendJSON appends v as json.Marshal encodes it. A replay writes a
// SimResult per request; encoding/json's reflection and indentation pass
// were a fifth of replaying a production trace.
func (v *SimResult) AppendJSON(dst []byte) []byte {
	return v.appendJSON(jsonObject{b: dst})
}

// AppendJSONIndent appends v as json.MarshalIndent(v, prefix, indent)
// encodes it.
func (v *SimResult) AppendJSONIndent(dst []byte, prefix, indent string) []byte {
	return v.appendJSON(jsonObject{b: dst, indented: true, prefix: prefix, indent: indent})
}

// appendJSON writes the fields in SimResult's order, omitempty as tagged.
func (v *SimResult) appendJSON(o jsonObject) []byte {
	o.int("request_id", v.RequestID)
	o.float("ttft_us", v.TTFTUs)
	o.float("e2e_us", v.E2EUs)
	o.int("input_tokens", int64(v.InputTokens))
	o.int("output_tokens", int64(v.OutputTokens))
	if v.SLOClass != "" {
		o.str("slo_class", v.SLOClass)
	}
	if v.Model != "" {
		o.str("model", v.Model)
	}
	if v.ITLMeanUs != 0 {
		o.float("itl_mean_us", v.ITLMeanUs)
	}
	o.int("arrival_us", v.ArrivalUs)
	o.float("scheduling_delay_us", v.SchedulingDelayUs)
	o.int("num_preemptions", int64(v.NumPreemptions))
	o.int("cached_input_tokens", int64(v.CachedInputTokens))
	if v.Instance != "" {
		o.str("instance", v.Instance)
	}
	if v.WaitInFlightUs != 0 {
		o.float("wait_in_flight_us", v.WaitInFlightUs)
	}
	if v.StepInFlightUs != 0 {
		o.float("step_in_flight_us", v.StepInFlightUs)
	}
	return o.end()
}

// jsonObject writes one JSON object's members as encoding/json does,
// compact or indented (json.Indent's layout).
type jsonObject struct {
	b              []byte
	indented       bool
	prefix, indent string
	members        int
}

func (o *jsonObject) key(k string) {
	if o.members == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.members++
	if o.indented {
		o.b = append(o.b, '\n')
		o.b = append(o.b, o.prefix...)
		o.b = append(o.b, o.indent...)
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
	if o.indented {
		o.b = append(o.b, ' ')
	}
}

func (o *jsonObject) end() []byte {
	switch {
	case o.members == 0:
		o.b = append(o.b, '{', '}')
	case o.indented:
		o.b = append(o.b, '\n')
		o.b = append(o.b, o.prefix...)
		o.b = append(o.b, '}')
	default:
		o.b = append(o.b, '}')
	}
	return o.b
}

func (o *jsonObject) int(k string, x int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, x, 10)
}

// float is encoding/json's float64 encoding: the shortest decimal that
// reads back, in %f form between 1e-6 and 1e21, else %e with a two-digit
// exponent trimmed to one (1e-07 -> 1e-7). NaN and infinities have none:
// the caller refuses them.
func (o *jsonObject) float(k string, f float64) {
	o.key(k)
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && (f != 0 || !math.Signbit(f)) {
		// Whole µs, most times: the same digits, without the float search.
		o.b = strconv.AppendInt(o.b, int64(f), 10)
		return
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	o.b = strconv.AppendFloat(o.b, f, format, -1, 64)
	if n := len(o.b); format == 'e' && n >= 4 && o.b[n-4] == 'e' && o.b[n-3] == '-' && o.b[n-2] == '0' {
		o.b[n-2] = o.b[n-1]
		o.b = o.b[:n-1]
	}
}

// str writes plain strings as they are and any other through
// encoding/json, which escapes control characters, quotes, backslashes,
// HTML's <, > and &, and non-ASCII line separators, and mends invalid
// UTF-8.
func (o *jsonObject) str(k, s string) {
	o.key(k)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			o.b = append(o.b, q...)
			return
		}
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, s...)
	o.b = append(o.b, '"')
}
