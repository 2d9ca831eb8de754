package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"servesim/internal/exitcode"
)

// DocFormat names the JSON document of a sweep (and of a shard of one).
const DocFormat = "servesim-sweep/1"

// Doc is a sweep's output: what was swept, every row, and (except in a
// shard's document) the answer. A shard's JSON document is what `sweep
// merge` reads.
type Doc struct {
	Format  string `json:"format"`
	Command string `json:"command"` // "run sweep", "replay sweep"
	// Fingerprint identifies the inputs (workload or trace, base
	// deployment, grid, SLO, question, prices): only shards of the same
	// sweep merge.
	Fingerprint string   `json:"fingerprint"`
	Shard       string   `json:"shard,omitempty"` // "I/N"; empty for a whole sweep
	Cases       int      `json:"cases"`           // cases of the whole grid
	Keys        []string `json:"keys"`            // swept keys, in grid order
	LoadKeys    []string `json:"load_keys"`       // the keys that set the load (rate, ...)
	Base        []Param  `json:"base"`            // what every case shares: model, GPU, workload or trace
	SLO         string   `json:"slo,omitempty"`
	Find        string   `json:"find,omitempty"`
	Precision   float64  `json:"precision,omitempty"` // max-rate only
	Prices      []Price  `json:"prices"`              // of the GPUs the rows ran on
	Rows        []Row    `json:"rows"`
	Answer      *Answer  `json:"answer,omitempty"`
}

// Finish completes a document after its rows are in: the prices used and,
// unless it is a shard's, the answer.
func (d *Doc) Finish(prices Prices) {
	d.Format = DocFormat
	SortRows(d.Rows)
	d.Prices = prices.Used(d.Rows)
	d.Answer = nil
	if d.Shard == "" {
		d.Answer = Analyze(d)
	}
}

// NotMet returns a NotMetError when the sweep has an SLO and no case meets
// it, else nil.
func (d *Doc) NotMet() error {
	if d.Answer == nil || d.Answer.Met {
		return nil
	}
	return &NotMetError{Msg: strings.Join(d.Answer.Verdict, "; ")}
}

// WriteJSON writes the document as indented JSON.
func (d *Doc) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("sweep: write json: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Columns are the CSV columns after the case, role and swept keys.
var csvColumns = func() []string {
	cols := []string{"rate_rps", "status", "injected_requests", "completed_requests", "failed_requests",
		"queue_growth", "duration_s", "throughput_rps", "output_tokens_per_s", "goodput_rps", "slo_attainment"}
	for _, m := range sloMetrics {
		for _, s := range sloStats {
			cols = append(cols, m+"_"+s+"_ms")
		}
	}
	return append(cols, "kv_utilization_mean", "kv_utilization_peak", "preemptions", "gpu", "gpus",
		"cost_per_hour_usd", "cost_per_million_output_tokens_usd", "slo_met", "slo_failures", "reason")
}()

// WriteCSV writes one line per row: case, role, the swept keys, then
// csvColumns. Absent values (the latencies of an unstable run, an unknown
// cost, an SLO verdict without SLO) are empty cells.
func (d *Doc) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := append(append([]string{"case", "role"}, d.Keys...), csvColumns...)
	if err := cw.Write(header); err != nil {
		return err
	}
	for i := range d.Rows {
		if err := cw.Write(csvRecord(&d.Rows[i], d.Keys)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRecord(r *Row, keys []string) []string {
	num := csvNum
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	rec := []string{strconv.Itoa(r.Case), r.Role}
	for _, k := range keys {
		rec = append(rec, r.Param(k))
	}
	rec = append(rec, num(r.RateRPS), r.Status, strconv.FormatInt(r.Injected, 10), strconv.FormatInt(r.Completed, 10),
		strconv.FormatInt(r.Failed, 10), num(r.QueueGrowth), num(r.DurationS), num(r.ThroughputRPS), num(r.TokensPerSec),
		num(r.GoodputRPS), num(r.SLOAttainment))
	for _, m := range sloMetrics {
		for _, s := range sloStats {
			if v, ok := r.Latency(m, s); ok {
				rec = append(rec, num(v))
			} else {
				rec = append(rec, "")
			}
		}
	}
	met := ""
	if r.SLOMet != nil {
		met = strconv.FormatBool(*r.SLOMet)
	}
	return append(rec, num(r.KVUtilizationMean), num(r.KVUtilizationPeak), strconv.FormatInt(r.Preemptions, 10), r.GPU,
		strconv.Itoa(r.GPUs), opt(r.CostPerHour), opt(r.CostPerMTok), met, strings.Join(r.SLOFailures, "; "), r.Reason)
}

// csvDigits is the significant digits of a float in the CSV: more than any
// figure of a run holds (a latency of an hour in ms keeps 0.01 ms), fewer
// than float64 arithmetic leaves as noise (47.638600000000004).
const csvDigits = 9

// csvNum is a float's CSV cell: the shortest form of the value rounded to
// csvDigits significant digits.
func csvNum(v float64) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', csvDigits, 64), 64)
	if err != nil { // ±Inf rounds to itself; NaN too
		r = v
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// DecodeDoc reads a sweep's JSON document; name is used in errors.
func DecodeDoc(name string, data []byte) (*Doc, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d Doc
	if err := dec.Decode(&d); err != nil {
		return nil, inputErr(Pos{File: name}, "", "not a sweep document: %v", err)
	}
	if d.Format != DocFormat {
		return nil, inputErr(Pos{File: name}, "format", "%q: want %q (the JSON a sweep writes with --format json)", d.Format, DocFormat)
	}
	if d.Cases < 1 || d.Cases > MaxCases {
		return nil, inputErr(Pos{File: name}, "cases", "%d is outside [1, %d]", d.Cases, MaxCases)
	}
	if _, _, err := parseShard(d.Shard); err != nil {
		return nil, inputErr(Pos{File: name}, "shard", "%v", err)
	}
	for i, r := range d.Rows {
		if r.Case < 0 || r.Case >= d.Cases {
			return nil, inputErr(Pos{File: name}, fmt.Sprintf("rows[%d].case", i), "%d is outside [0, %d)", r.Case, d.Cases)
		}
	}
	return &d, nil
}

// Merge joins the documents of the shards of one sweep into the document
// the sweep prints when it runs whole. Every shard of the split must be
// there exactly once, from the same inputs.
func Merge(names []string, docs []*Doc) (*Doc, error) {
	if len(docs) == 0 {
		return nil, exitcode.Usagef("nothing to merge: name the shard files")
	}
	first := docs[0]
	n := 0
	byIndex := map[int]string{}
	for i, d := range docs {
		idx, cnt, err := parseShard(d.Shard)
		if err != nil {
			return nil, inputErr(Pos{File: names[i]}, "shard", "%v", err)
		}
		switch {
		case d.Fingerprint != first.Fingerprint || d.Command != first.Command || d.Cases != first.Cases:
			return nil, inputErr(Pos{File: names[i]}, "fingerprint", "made from other inputs than %s (another grid, workload, trace, deployment, SLO or price table)", names[0])
		case i > 0 && cnt != n:
			return nil, inputErr(Pos{File: names[i]}, "shard", "%s is one of %d shards, %s one of %d", d.Shard, cnt, names[0], n)
		}
		n = cnt
		if other, dup := byIndex[idx]; dup {
			return nil, inputErr(Pos{File: names[i]}, "shard", "shard %d/%d is also %s", idx, cnt, other)
		}
		byIndex[idx] = names[i]
		for _, r := range d.Rows {
			if r.Case < 0 || r.Case >= d.Cases || r.Case%cnt != idx {
				return nil, inputErr(Pos{File: names[i]}, "rows", "case %d does not belong to shard %d/%d", r.Case, idx, cnt)
			}
		}
	}
	var missing []string
	for i := 0; i < n; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return nil, exitcode.Usagef("shards missing: %s (every shard of the split is needed)", strings.Join(missing, ", "))
	}
	out := *first
	out.Shard, out.Rows = "", nil
	prices := Prices{}
	for _, d := range docs {
		out.Rows = append(out.Rows, d.Rows...)
		for _, p := range d.Prices {
			prices = prices.set(p)
		}
	}
	seen := make([]bool, first.Cases)
	for _, r := range out.Rows {
		seen[r.Case] = true
	}
	for k, ok := range seen {
		if !ok {
			return nil, inputErr(Pos{File: byIndex[k%n]}, "rows", "case %d has no row: the shard did not finish", k)
		}
	}
	out.Finish(prices)
	return &out, nil
}

// maxShards bounds the shards of a merge (cli.MaxShards, which this
// engine-free package does not import).
const maxShards = 1 << 20

// parseShard reads "I/N" ("" is the whole sweep, 0/1).
func parseShard(s string) (idx, cnt int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	idx, err1 := strconv.Atoi(a)
	cnt, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || cnt < 1 || cnt > maxShards || idx < 0 || idx >= cnt {
		return 0, 0, fmt.Errorf("%q is not I/N with 0 ≤ I < N ≤ %d", s, maxShards)
	}
	return idx, cnt, nil
}
