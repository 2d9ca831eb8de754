package sweep

import (
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
	// Interval is what the sweep's interval asked (nil: none); its runs
	// are IntervalRows, which give the rows their Band and the answer its
	// intervals.
	Interval     *Interval `json:"interval,omitempty"`
	IntervalRows []Row     `json:"interval_rows,omitempty"`
	Answer       *Answer   `json:"answer,omitempty"`
}

// Finish completes a document after its rows are in: the prices used and,
// unless it is a shard's, the answer.
func (d *Doc) Finish(prices Prices) {
	d.Format = DocFormat
	SortRows(d.Rows)
	SortRows(d.IntervalRows)
	d.setBands()
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
	if d.Interval != nil {
		header = append(header, csvBandColumns()...)
	}
	fleets := anyFleet(d.Rows)
	if fleets {
		header = append(header, csvFleetColumns...)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for i := range d.Rows {
		rec := csvRecord(&d.Rows[i], d.Keys)
		if d.Interval != nil {
			rec = append(rec, csvBand(d.Rows[i].Band)...)
		}
		if fleets {
			rec = append(rec, csvFleet(d.Rows[i].Fleet)...)
		}
		if err := cw.Write(rec); err != nil {
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

// csvFleetColumns are a fleet's totals (Row.Fleet), when a row has one.
var csvFleetColumns = []string{"fleet_autoscaled", "fleet_gpu_hours", "fleet_replica_hours", "fleet_dollars",
	"fleet_dollars_per_million_tokens", "fleet_peak_replicas", "fleet_scale_ups", "fleet_scale_downs"}

func anyFleet(rows []Row) bool {
	for i := range rows {
		if rows[i].Fleet != nil {
			return true
		}
	}
	return false
}

func csvFleet(f *FleetRow) []string {
	if f == nil {
		return make([]string, len(csvFleetColumns))
	}
	perM := ""
	if f.DollarsPerMTok != nil {
		perM = csvNum(*f.DollarsPerMTok)
	}
	return []string{strconv.FormatBool(f.Autoscaled), csvNum(f.GPUHours), csvNum(f.ReplicaHours), csvNum(f.Dollars), perM,
		strconv.Itoa(f.PeakReplicas), strconv.Itoa(f.ScaleUps), strconv.Itoa(f.ScaleDowns)}
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

// Merge joins the documents of the shards of one sweep into the document
// the sweep prints when it runs whole. Every shard of the split must be
// there exactly once, from the same inputs: every field but the shard and
// the rows is the same in every document, and a GPU has one price. Each
// row's SLO verdict and costs are computed again from the SLO, the prices
// and the row's measurements, whatever the shard said.
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
		if err := sameSweep(names[0], first, names[i], d); err != nil {
			return nil, err
		}
		if i > 0 && cnt != n {
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
	prices, err := mergePrices(names, docs)
	if err != nil {
		return nil, err
	}
	slo, err := parseSLO(first.SLO, Pos{File: names[0]})
	if err != nil {
		return nil, err
	}
	out := *first
	out.Shard, out.Rows, out.IntervalRows = "", nil, nil
	for _, d := range docs {
		out.Rows = append(out.Rows, d.Rows...)
		out.IntervalRows = append(out.IntervalRows, d.IntervalRows...)
	}
	for i := range out.IntervalRows {
		if c := out.IntervalRows[i].Case; c < 0 || c >= first.Cases {
			return nil, inputErr(Pos{File: names[0]}, "interval_rows", "case %d is not a case of the sweep", c)
		}
		out.IntervalRows[i].finish(slo, prices)
	}
	seen := make([]bool, first.Cases)
	for i := range out.Rows {
		seen[out.Rows[i].Case] = true
		out.Rows[i].finish(slo, prices)
	}
	for k, ok := range seen {
		if !ok {
			return nil, inputErr(Pos{File: byIndex[k%n]}, "rows", "case %d has no row: the shard did not finish", k)
		}
	}
	out.Finish(prices)
	return &out, nil
}

// sameSweep checks that document d (file name) is a shard of the sweep of
// document first (file firstName): every field but the shard, the rows and
// the prices of the GPUs its rows ran on is equal.
func sameSweep(firstName string, first *Doc, name string, d *Doc) error {
	for _, f := range []struct {
		field string
		a, b  any
	}{
		{"format", first.Format, d.Format}, {"command", first.Command, d.Command},
		{"fingerprint", first.Fingerprint, d.Fingerprint}, {"cases", first.Cases, d.Cases},
		{"keys", first.Keys, d.Keys}, {"load_keys", first.LoadKeys, d.LoadKeys}, {"base", first.Base, d.Base},
		{"slo", first.SLO, d.SLO}, {"find", first.Find, d.Find}, {"precision", first.Precision, d.Precision},
		{"interval", first.Interval, d.Interval},
	} {
		if a, b := jsonText(f.a), jsonText(f.b); a != b {
			return inputErr(Pos{File: name}, f.field, "%s here, %s in %s: shards of one sweep differ only in their shard and rows", b, a, firstName)
		}
	}
	return nil
}

// mergePrices joins the shards' price tables: a GPU priced in several
// shards must have one price.
func mergePrices(names []string, docs []*Doc) (Prices, error) {
	var out Prices
	from := map[string]int{}
	for i, d := range docs {
		for _, p := range d.Prices {
			key := strings.ToLower(p.GPU)
			if j, ok := from[key]; ok {
				if q, _ := out.Lookup(p.GPU); q != p {
					return out, inputErr(Pos{File: names[i]}, "prices", "%s at $%v/h (%s) here, $%v/h (%s) in %s", p.GPU, p.USDPerHour, p.Source, q.USDPerHour, q.Source, names[j])
				}
				continue
			}
			if err := checkPrice(p.USDPerHour); err != nil {
				return out, inputErr(Pos{File: names[i]}, "prices", "%s: %v", p.GPU, err)
			}
			from[key] = i
			out = out.set(p)
		}
	}
	return out, nil
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
