package tracev2

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A run fanned out over several client processes (observe --shard I/N)
// leaves one trace per worker, each on its own time origin t0 (the same
// instant when the workers shared --start-at). Merging puts them on one
// origin — the earliest t0, each trace shifted by how much later its own
// started, known from x_ext.t0_unix_us, else created_at — and orders the
// rows by arrival time, so the merged trace is the one a single client
// would have written, with every request once.

// MergedPart is one input of a merge: its name, the origin its own rows
// were normalised with, and the shift (µs) that puts them on the merged
// origin. A consumer reading a companion file of an input (its ITL CSV)
// normalises with Origin and adds ShiftUs.
type MergedPart struct {
	Name    string
	Origin  Origin
	ShiftUs int64
	Rows    int
}

// MergeInfo says how a merge was made.
type MergeInfo struct {
	Parts    []MergedPart
	Warnings []string // e.g. a shard missing from a sharded run
}

// LoadMerged loads every input (see Load) and merges them (see Merge).
func LoadMerged(ins []Input, opts Options) (*Trace, *MergeInfo, error) {
	traces := make([]*Trace, 0, len(ins))
	for _, in := range ins {
		t, err := Load(in, opts)
		if err != nil {
			return nil, nil, err
		}
		traces = append(traces, t)
	}
	return Merge(traces)
}

// Merge merges whole traces of one run. Their headers must agree on what
// was run (mode, workload_spec, workload_seed, warm_up_requests, the
// server and deployment keys both state, the client's rate, arrival and
// sweep level, and the shard count when they are shards), their request
// ids must be distinct, and each needs its t0's wall clock when there are
// several; the workers of one run start together, so every t0 must lie
// within maxMergeSpread (or the longest input's span, if longer) of the
// earliest. The merged
// header is the first trace's with created_at and x_ext.t0_unix_us the
// earliest, no shard, and x_ext.interrupted set if any input was
// interrupted. Records are ordered by arrival_time_us, then by input and
// line; Lines keeps each record's line in its own file (Name lists them).
func Merge(traces []*Trace) (*Trace, *MergeInfo, error) {
	if len(traces) == 0 {
		return nil, nil, &Error{File: "merge", Msg: "no trace to merge"}
	}
	if len(traces) == 1 {
		t := traces[0]
		return t, &MergeInfo{Parts: []MergedPart{{Name: t.Name, Origin: t.Origin, Rows: len(t.Records)}}}, nil
	}
	info := &MergeInfo{}
	t0s := make([]time.Time, len(traces))
	for i, t := range traces {
		when, err := traceStart(t)
		if err != nil {
			return nil, nil, err
		}
		t0s[i] = when
		if err := sameRun(traces[0], t); err != nil {
			return nil, nil, err
		}
	}
	if err := checkShards(traces, info); err != nil {
		return nil, nil, err
	}
	first := slices.MinFunc(t0s, func(a, b time.Time) int { return a.Compare(b) })
	if err := checkSpread(traces, t0s, first); err != nil {
		return nil, nil, err
	}
	out := &Trace{Header: traces[0].Header.Clone()}
	type place struct{ file, line int }
	var places []place
	var names []string
	n := 0
	for _, t := range traces {
		n += len(t.Records)
	}
	out.Records = make([]Record, 0, n)
	interrupted := false
	for i, t := range traces {
		shift := t0s[i].Sub(first).Microseconds()
		names = append(names, t.Name)
		info.Parts = append(info.Parts, MergedPart{Name: t.Name, Origin: t.Origin, ShiftUs: shift, Rows: len(t.Records)})
		for k := range t.Records {
			rec := t.Records[k]
			rec.Shift(shift)
			out.Records = append(out.Records, rec)
			places = append(places, place{i, t.Lines[k]})
		}
		out.Columns = unionColumns(out.Columns, t.Columns)
		out.Skipped += t.Skipped
		if x := t.Header.XExt; x != nil && x.Interrupted != nil && *x.Interrupted {
			interrupted = true
		}
	}
	order := make([]int, len(out.Records))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(out.Records[a].ArrivalTimeUs, out.Records[b].ArrivalTimeUs)
	})
	sorted := make([]Record, len(order))
	out.Lines = make([]int, len(order))
	seen := make(map[int64]place, len(order))
	for k, i := range order {
		sorted[k], out.Lines[k] = out.Records[i], places[i].line
		id := sorted[k].RequestID
		if p, dup := seen[id]; dup {
			return nil, nil, &Error{File: names[places[i].file], Line: places[i].line, Column: 1, What: "column request_id",
				Msg: fmt.Sprintf("%d is also on line %d of %s: the traces are not disjoint slices of one run", id, p.line, names[p.file])}
		}
		seen[id] = places[i]
	}
	out.Records = sorted
	out.Name = strings.Join(names, "+")
	h := out.Header
	h.CreatedAt = FormatCreatedAt(first)
	if h.XExt != nil {
		x := *h.XExt
		x.T0UnixUs, x.Shard = first.UnixMicro(), ""
		if x.Interrupted != nil {
			x.Interrupted = &interrupted
		}
		h.XExt = &x
	}
	return out, info, nil
}

// traceStart is the wall-clock instant of a trace's t0.
func traceStart(t *Trace) (time.Time, error) {
	if x := t.Header.XExt; x != nil && x.T0UnixUs > 0 {
		return time.UnixMicro(x.T0UnixUs), nil
	}
	if when, err := time.Parse(time.RFC3339Nano, t.Header.CreatedAt); err == nil {
		return when, nil
	}
	return time.Time{}, &Error{File: t.Name, Msg: "no start time (x_ext.t0_unix_us or created_at): traces cannot be merged without one"}
}

// maxMergeSpread is how far apart the workers of one run may start: they
// share --start-at, or are started by one job within minutes.
const maxMergeSpread = time.Hour

// checkSpread refuses an input whose t0 is further from the earliest than
// maxMergeSpread and the longest input's span (from its t0 to its last
// arrival): its rows would be moved away from the run's (a t0 off by
// years), not merged into it.
func checkSpread(traces []*Trace, t0s []time.Time, first time.Time) error {
	limit := maxMergeSpread
	for _, t := range traces {
		for k := range t.Records {
			limit = max(limit, time.Duration(t.Records[k].ArrivalTimeUs)*time.Microsecond)
		}
	}
	for i, t := range traces {
		if d := t0s[i].Sub(first); d > limit {
			return &Error{File: t.Name, Msg: fmt.Sprintf("starts %v after the earliest input (t0 %s, x_ext.t0_unix_us or created_at); "+
				"the workers of one run start within %v of each other: not the same run", d.Round(time.Second),
				t0s[i].UTC().Format(time.RFC3339), limit)}
		}
	}
	return nil
}

// sameRun fails when t's header does not describe the same run as first's.
func sameRun(first, t *Trace) error {
	a, b := first.Header, t.Header
	seed := func(h *Header) string {
		if h.WorkloadSeed == nil {
			return ""
		}
		return fmt.Sprint(*h.WorkloadSeed)
	}
	for _, f := range []struct{ name, x, y string }{
		{"mode", a.Mode, b.Mode}, {"workload_spec", a.WorkloadSpec, b.WorkloadSpec},
		{"workload_seed", seed(a), seed(b)}, {"warm_up_requests", fmt.Sprint(a.WarmUpRequests), fmt.Sprint(b.WarmUpRequests)},
	} {
		if f.x != f.y {
			return &Error{File: t.Name, Msg: fmt.Sprintf("%s %q differs from %s's %q: not the same run", f.name, f.y, first.Name, f.x)}
		}
	}
	return sameSetup(first, t)
}

// sameSetup fails when t's header states another server (the deployment
// keys both headers state, BLIS's server keys among them) or another
// client (rate, arrival process, sweep level) than first's.
func sameSetup(first, t *Trace) error {
	da, db := first.Header.Deployment(), t.Header.Deployment()
	for _, k := range slices.Sorted(maps.Keys(da)) {
		if v, ok := db[k]; ok && !SameValue(da[k], v) {
			return &Error{File: t.Name, Msg: fmt.Sprintf("deployment %s %v differs from %s's %v: not the same run", k, v, first.Name, da[k])}
		}
	}
	client := func(h *Header) *Client {
		if h.XExt != nil && h.XExt.Client != nil {
			return h.XExt.Client
		}
		return &Client{}
	}
	ca, cb := client(first.Header), client(t.Header)
	for _, f := range []struct {
		name string
		x, y any
	}{{"rate_rps", ca.RateRPS, cb.RateRPS}, {"arrival", ca.Arrival, cb.Arrival}, {"sweep_level", ca.SweepLevel, cb.SweepLevel}} {
		if f.x != f.y {
			return &Error{File: t.Name, Msg: fmt.Sprintf("x_ext.client.%s %v differs from %s's %v: not the same run", f.name, f.y, first.Name, f.x)}
		}
	}
	return nil
}

// checkShards checks the shards of a sharded run: one count, no slice
// twice; a missing slice is a warning (that worker's requests are absent).
func checkShards(traces []*Trace, info *MergeInfo) error {
	shard := func(t *Trace) string {
		if x := t.Header.XExt; x != nil {
			return x.Shard
		}
		return ""
	}
	sharded := 0
	for _, t := range traces {
		if shard(t) != "" {
			sharded++
		}
	}
	if sharded == 0 {
		return nil
	}
	count, seen := 0, map[int]string{}
	for _, t := range traces {
		s := shard(t)
		if s == "" {
			return &Error{File: t.Name, Msg: "is not a shard (x_ext.shard), but other inputs are"}
		}
		i, n, err := ParseShard(s)
		if err != nil {
			return &Error{File: t.Name, Msg: "x_ext.shard: " + err.Error()}
		}
		if count != 0 && n != count {
			return &Error{File: t.Name, Msg: fmt.Sprintf("shard %s is not of the same fan-out as the others (of %d)", s, count)}
		}
		count = n
		if other, dup := seen[i]; dup {
			return &Error{File: t.Name, Msg: fmt.Sprintf("shard %s is also %s", s, other)}
		}
		seen[i] = t.Name
	}
	for i := range count {
		if _, ok := seen[i]; !ok {
			info.Warnings = append(info.Warnings, fmt.Sprintf("shard %d/%d is missing: its requests are not in the merged trace", i, count))
		}
	}
	return nil
}

// ParseShard reads x_ext.shard as written: "I/N", two decimal integers
// and nothing else, 0 <= I < N.
func ParseShard(s string) (i, n int, err error) {
	is, ns, ok := strings.Cut(s, "/")
	digits := func(x string) bool {
		return x != "" && len(x) <= 9 && strings.Trim(x, "0123456789") == ""
	}
	if !ok || !digits(is) || !digits(ns) {
		return 0, 0, fmt.Errorf("%q is not I/N (two integers, as in 0/4)", s)
	}
	i, _ = strconv.Atoi(is)
	n, _ = strconv.Atoi(ns)
	if n < 1 || i >= n {
		return 0, 0, fmt.Errorf("%q: the slice index must be in [0, N) and N at least 1", s)
	}
	return i, n, nil
}

// Shift moves a record's times (not its durations) by us, as a merge puts
// a trace on another origin; a 0 other than the arrival's stays "never" (or
// "no deadline").
func (r *Record) Shift(us int64) {
	r.ArrivalTimeUs += us
	for _, t := range []*int64{&r.SendTimeUs, &r.FirstChunkTimeUs, &r.LastChunkTimeUs, &r.FirstTokenTimeUs, &r.DeadlineUs} {
		if *t != 0 {
			*t += us
		}
	}
}

// unionColumns has every optional column either has.
func unionColumns(a, b Columns) Columns {
	return Columns{VLLMPriority: a.VLLMPriority || b.VLLMPriority, SLOTarget: a.SLOTarget || b.SLOTarget,
		XRequestID: a.XRequestID || b.XRequestID, Adapter: a.Adapter || b.Adapter, ThinkTime: a.ThinkTime || b.ThinkTime,
		FirstTokenTime: a.FirstTokenTime || b.FirstTokenTime, CachedTokens: a.CachedTokens || b.CachedTokens,
		Instance: a.Instance || b.Instance, Preemptions: a.Preemptions || b.Preemptions, HashIDs: a.HashIDs || b.HashIDs}
}
