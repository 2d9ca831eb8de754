package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"servesim/internal/exitcode"
	"servesim/internal/httpload"
	"servesim/internal/report"
	"servesim/internal/workload"
)

// resultConfig is --result-json and the flags that shape it, named as
// vllm bench serve names them (--percentile-metrics, --metric-percentiles,
// --save-detailed, --label, --metadata).
type resultConfig struct {
	path        string
	metrics     []string  // metrics given percentiles
	percentiles []float64 // in (0, 100]
	detailed    bool      // per-request arrays too
	label       string
	metadata    [][2]string // KEY=VALUE, written as top-level keys
}

// percentileMetrics are the metrics --percentile-metrics accepts.
var percentileMetrics = []string{"ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"}

// parseResultFlags reads the result flags; path "" means no result file.
func parseResultFlags(path, metrics, percentiles string, detailed bool, label string, metadata []string) (resultConfig, error) {
	r := resultConfig{path: path, detailed: detailed, label: label}
	for _, m := range strings.Split(metrics, ",") {
		m = strings.TrimSpace(m)
		if !slices.Contains(percentileMetrics, m) {
			return r, exitcode.Usagef("--percentile-metrics %q: unknown metric %q (valid: %s)", metrics, m, strings.Join(percentileMetrics, ", "))
		}
		r.metrics = append(r.metrics, m)
	}
	for _, p := range strings.Split(percentiles, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return r, exitcode.Usagef("--metric-percentiles %q: %q is not a percentile in (0, 100]", percentiles, p)
		}
		r.percentiles = append(r.percentiles, v)
	}
	for _, kv := range metadata {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return r, exitcode.Usagef("--metadata %q: want KEY=VALUE", kv)
		}
		r.metadata = append(r.metadata, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	if path == "" && (detailed || label != "" || len(metadata) > 0) {
		return r, exitcode.Usagef("--result-detailed, --label and --metadata shape --result-json: give it")
	}
	return r, nil
}

// benchFacts are the traffic's settings in vllm bench serve's terms.
type benchFacts struct {
	requestRate any // requests/s, or "inf" (closed loops, played traces)
	burstiness  any // the gamma shape of the arrivals (1 = Poisson), "inf" for constant, nil when mixed
	ramp        *workload.RateRamp
}

// resultRow is what the result file keeps of one request.
type resultRow struct {
	id, intendedUS, sendUS int64
	in, out                int
	ok                     bool
	ttft, latency          float64   // s
	itl                    []float64 // s, between text chunks; with --result-detailed only
	err                    string
}

// tokenBucketUs is the resolution of the output-token time series behind
// max_output_tokens_per_s (10 ms: 1.4 MB per hour of run).
const tokenBucketUs = 10_000

// resultRows collects, on the sink, what the result file needs beyond the
// tally: per-request rows in request order, tokens per 10 ms, and the
// spans of the successful requests (for the peak concurrency).
type resultRows struct {
	detailed bool
	rows     []resultRow
	tokens   []uint32   // output tokens (text chunks) per 10 ms since t0
	spans    [][2]int64 // send, last chunk of each successful request
}

func (c *resultRows) add(r *httpload.Result, info *reqInfo) {
	row := resultRow{id: r.Job.ID, intendedUS: r.Job.IntendedUS, sendUS: r.SendUS, ok: r.Status == httpload.StatusOK, err: r.Error}
	row.in = r.PromptTokens
	if row.in == 0 && info != nil {
		row.in = info.prefixLength + info.inputTokens
	}
	if row.ok {
		row.out = r.GeneratedTokens()
		first := r.FirstTokenUS
		if first == 0 {
			first = r.FirstChunkUS
		}
		row.ttft = float64(first-r.SendUS) / 1e6
		row.latency = float64(r.LastChunkUS-r.SendUS) / 1e6
		c.spans = append(c.spans, [2]int64{r.SendUS, r.LastChunkUS})
		cs := textChunks(r)
		if len(cs) == 0 {
			cs = []int64{first}
		}
		for k, t := range cs {
			b := int(t / tokenBucketUs)
			if b >= len(c.tokens) {
				c.tokens = append(c.tokens, make([]uint32, b+1-len(c.tokens))...)
			}
			c.tokens[b]++
			if c.detailed && k > 0 {
				row.itl = append(row.itl, float64(t-cs[k-1])/1e6)
			}
		}
	}
	c.rows = append(c.rows, row)
}

// peaks are vllm bench serve's max_output_tokens_per_s (the most output
// tokens in one second, seconds counted from the first successful send)
// and max_concurrent_requests (the most successful requests in flight).
func (c *resultRows) peaks() (tokensPerS float64, concurrent int) {
	if len(c.spans) == 0 {
		return 0, 0
	}
	s0 := c.spans[0][0]
	var ev [][2]int64 // time, +1 start / −1 end
	for _, s := range c.spans {
		s0 = min(s0, s[0])
		ev = append(ev, [2]int64{s[0], 1}, [2]int64{s[1], -1})
	}
	slices.SortFunc(ev, func(a, b [2]int64) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1]) // an end before a start at the same instant
	})
	n := 0
	for _, e := range ev {
		n += int(e[1])
		concurrent = max(concurrent, n)
	}
	perS := map[int64]float64{}
	for b, k := range c.tokens {
		if k > 0 {
			perS[(int64(b)*tokenBucketUs-s0)/1_000_000] += float64(k)
		}
	}
	for _, v := range perS {
		tokensPerS = max(tokensPerS, v)
	}
	return tokensPerS, concurrent
}

// resultInfo is what the result file says besides the measurements.
type resultInfo struct {
	model, backend string
	maxConcurrency int
	facts          benchFacts
	t0, end        time.Time
	goodput        bool
}

// kv is one key of a JSON object written in order.
type kv struct {
	k string
	v any
}

// writeResult renders the result JSON in vllm bench serve's schema and key
// order (one line, as Python's json.dump writes it).
func writeResult(rc resultConfig, info resultInfo, t *tally, rows *resultRows) ([]byte, error) {
	slices.SortFunc(rows.rows, func(a, b resultRow) int { return int(a.id - b.id) })
	dur := float64(t.lastDoneUS) / 1e6
	rate := func(n float64) float64 {
		if dur <= 0 {
			return 0
		}
		return n / dur
	}
	var label any
	if rc.label != "" {
		label = rc.label
	}
	var maxConc any
	if info.maxConcurrency > 0 {
		maxConc = info.maxConcurrency
	}
	out := []kv{{"date", info.end.Local().Format("20060102-150405")}, {"endpoint_type", info.backend}, {"backend", info.backend},
		{"label", label}, {"model_id", info.model}, {"tokenizer_id", info.model}, {"num_prompts", len(rows.rows)}}
	for _, m := range rc.metadata {
		out = append(out, kv{m[0], m[1]})
	}
	out = append(out, kv{"request_rate", info.facts.requestRate}, kv{"burstiness", info.facts.burstiness}, kv{"max_concurrency", maxConc})
	if r := info.facts.ramp; r != nil {
		out = append(out, kv{"ramp_up_strategy", r.Strategy}, kv{"ramp_up_start_rps", r.StartRPS}, kv{"ramp_up_end_rps", r.EndRPS})
	}
	var goodput any
	if info.goodput {
		goodput = rate(float64(t.goodputOK))
	}
	out = append(out, kv{"duration", dur}, kv{"completed", t.ok}, kv{"failed", t.failed},
		kv{"total_input_tokens", t.inputTokens}, kv{"total_output_tokens", t.outputTokens},
		kv{"request_throughput", rate(float64(t.ok))}, kv{"request_goodput", goodput},
		kv{"output_throughput", rate(float64(t.outputTokens))}, kv{"total_token_throughput", rate(float64(t.inputTokens + t.outputTokens))})
	queue := make([]float64, len(rows.rows))
	for i, r := range rows.rows {
		if r.sendUS > 0 {
			queue[i] = float64(r.sendUS-r.intendedUS) / 1e6
		}
	}
	if rc.detailed {
		col := func(f func(r *resultRow) any) []any {
			v := make([]any, len(rows.rows))
			for i := range rows.rows {
				v[i] = f(&rows.rows[i])
			}
			return v
		}
		out = append(out, kv{"input_lens", col(func(r *resultRow) any { return r.in })},
			kv{"output_lens", col(func(r *resultRow) any { return r.out })},
			kv{"ttfts", col(func(r *resultRow) any { return r.ttft })},
			kv{"itls", col(func(r *resultRow) any { return append([]float64{}, r.itl...) })},
			kv{"latencies", col(func(r *resultRow) any { return r.latency })},
			kv{"start_times", col(func(r *resultRow) any { return float64(r.sendUS) / 1e6 })},
			kv{"queue_times", queue},
			kv{"generated_texts", col(func(*resultRow) any { return "" })},
			kv{"errors", col(func(r *resultRow) any { return r.err })})
	} else {
		out = append(out, kv{"queue_times", queue})
	}
	peakTok, peakConc := rows.peaks()
	out = append(out, kv{"max_output_tokens_per_s", peakTok}, kv{"max_concurrent_requests", peakConc}, kv{"rtfx", 0.0})
	if r := info.facts.ramp; r != nil {
		out = append(out, kv{"rps_change_events", rampEvents(r, rows.rows, info.t0)})
	}
	for _, m := range rc.metrics {
		vals, mean, ok := metricValues(m, t, rows, info)
		if !ok {
			continue
		}
		out = append(out, kv{"mean_" + m + "_ms", mean}, kv{"median_" + m + "_ms", report.Percentile(vals, 50)}, kv{"std_" + m + "_ms", report.StdDev(vals)})
		for _, p := range rc.percentiles {
			out = append(out, kv{"p" + percentileWord(p) + "_" + m + "_ms", report.Percentile(vals, p)})
		}
	}
	return encodeOrdered(out)
}

// metricValues are a metric's values in ms and its mean, and whether the
// result reports it (the queue metrics only under a concurrency cap).
func metricValues(m string, t *tally, rows *resultRows, info resultInfo) ([]float64, float64, bool) {
	switch m {
	case "ttft":
		return t.ttft, report.Mean(t.ttft), true
	case "tpot":
		return t.tpot, report.Mean(t.tpot), true
	case "e2el":
		return t.e2el, report.Mean(t.e2el), true
	case "itl":
		gaps, avg := t.itlMs()
		return gaps, avg, true
	}
	if info.maxConcurrency == 0 {
		return nil, 0, false
	}
	var vals []float64
	for _, r := range rows.rows {
		if !r.ok {
			continue
		}
		q := float64(r.sendUS-r.intendedUS) / 1000
		if m == "e2el_including_client_queue" {
			q += r.latency * 1000
		}
		vals = append(vals, q)
	}
	if m == "e2el_including_client_queue" && info.facts.requestRate == "inf" {
		return nil, 0, false // vllm bench serve reports it for a finite rate only
	}
	return vals, report.Mean(vals), true
}

// rampEvents are vllm bench serve's rps_change_events: each time the
// ramp's rate passes a whole number of requests/s, that number and the
// (intended) wall-clock instant.
func rampEvents(r *workload.RateRamp, rows []resultRow, t0 time.Time) []any {
	n := int64(len(rows))
	at := func(i int) string {
		us := int64(0)
		if i < len(rows) {
			us = rows[i].intendedUS
		}
		return t0.Add(time.Duration(us) * time.Microsecond).Local().Format("2006-01-02T15:04:05.000000")
	}
	last := int(r.StartRPS)
	events := []any{[]kv{{"rps", last}, {"timestamp", at(0)}}}
	for i := range rows {
		cur := int(r.Rate(float64(i), n))
		for v := last + 1; v <= cur; v++ {
			events = append(events, []kv{{"rps", v}, {"timestamp", at(i)}})
		}
		last = max(last, cur)
	}
	return events
}

// percentileWord names a percentile as vllm bench serve's keys do: 99 for
// 99.0, 99.9 for 99.9.
func percentileWord(p float64) string {
	if p == math.Trunc(p) {
		return strconv.Itoa(int(p))
	}
	return strconv.FormatFloat(p, 'f', -1, 64)
}

// encodeOrdered writes the keys in order on one line, as Python's
// json.dump writes vllm bench serve's dict: ", " and ": " between items,
// floats in Python's repr (200.0, 9.9e-05). Non-finite numbers become null.
func encodeOrdered(kvs []kv) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeValue(&b, kvs); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func encodeValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case float64:
		b.WriteString(pyFloat(x))
	case []float64:
		all := make([]any, len(x))
		for i, f := range x {
			all[i] = f
		}
		return encodeValue(b, all)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := encodeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []kv:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			k, _ := json.Marshal(e.k)
			b.Write(k)
			b.WriteString(": ")
			if err := encodeValue(b, e.v); err != nil {
				return fmt.Errorf("key %s: %w", e.k, err)
			}
		}
		b.WriteByte('}')
	default:
		out, err := json.Marshal(x) // strings, ints, bools
		if err != nil {
			return fmt.Errorf("result json: %w", err)
		}
		b.Write(out)
	}
	return nil
}

// pyFloat renders f as Python's repr does: the shortest round-trip digits,
// an exponent below 1e-4 and from 1e16 on, ".0" on whole numbers.
func pyFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
