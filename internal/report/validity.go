package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"servesim/internal/tracev2"
)

// ValidityConfig tunes the run-validity checks (docs/calibrate.md §9). A zero field takes
// the default named in its comment; negative values are input errors.
type ValidityConfig struct {
	// MinRows is the fewest measured rows a trend check needs (default 8).
	MinRows int
	// SaturationTTFTGrowth: median TTFT of the last quarter of sends over the first
	// quarter's at or above which the run counts as saturated (default 2).
	SaturationTTFTGrowth float64
	// SaturationMinIncrease: the TTFT rise must also be at least this (default 50ms).
	SaturationMinIncrease time.Duration
	// SaturationInflightGrowth: mean requests in flight, last quarter over first
	// quarter, must also reach this (default 1.25): the queue grew.
	SaturationInflightGrowth float64
	// LagP95Max: p95 of send − arrival above which the client lagged (default 20ms).
	LagP95Max time.Duration
	// TruncatedMaxFraction: share of rows with truncation evidence above which the
	// run is truncated (default 0.01).
	TruncatedMaxFraction float64
	// WarmCacheMinTokens: cached tokens on an early request above which the cache
	// was warm before the run (default: the header's block_size, else 16).
	WarmCacheMinTokens int
	// ColdStartWindowFraction: share of the first sends examined (default 0.05;
	// at least 3 rows).
	ColdStartWindowFraction float64
	// ColdStartFactor: median TTFT (or TPOT) of that window over the rest's at or
	// above which the run cold-started (default 2).
	ColdStartFactor float64
	// ColdStartMinIncrease: the TTFT excess must also be at least this (default
	// 20ms; a tenth of it for TPOT).
	ColdStartMinIncrease time.Duration
}

func (v ValidityConfig) withDefaults() (ValidityConfig, error) {
	if v.MinRows < 0 || v.WarmCacheMinTokens < 0 || v.SaturationMinIncrease < 0 || v.LagP95Max < 0 ||
		v.ColdStartMinIncrease < 0 || !finiteNonNeg(v.SaturationTTFTGrowth) || !finiteNonNeg(v.SaturationInflightGrowth) ||
		!finiteNonNeg(v.TruncatedMaxFraction) || !finiteNonNeg(v.ColdStartWindowFraction) || !finiteNonNeg(v.ColdStartFactor) {
		return v, inputErrorf("report: validity settings must be finite and >= 0: %+v", v)
	}
	def := func(p *float64, d float64) {
		if *p == 0 {
			*p = d
		}
	}
	defDur := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	if v.MinRows == 0 {
		v.MinRows = 8
	}
	def(&v.SaturationTTFTGrowth, 2)
	defDur(&v.SaturationMinIncrease, 50*time.Millisecond)
	def(&v.SaturationInflightGrowth, 1.25)
	defDur(&v.LagP95Max, 20*time.Millisecond)
	def(&v.TruncatedMaxFraction, 0.01)
	def(&v.ColdStartWindowFraction, 0.05)
	def(&v.ColdStartFactor, 2)
	defDur(&v.ColdStartMinIncrease, 20*time.Millisecond)
	return v, nil
}

// Validity is the verdict on the real run itself, before grading: could a
// simulator be fairly judged against it? (ours, report key "validity")
type Validity struct {
	Valid   bool            `json:"valid"`
	Checks  []ValidityCheck `json:"checks"`
	Windows []Window        `json:"windows"`
}

// Validity check names, in report order.
const (
	CheckSaturated    = "saturated"
	CheckClientLagged = "client_lagged"
	CheckTruncated    = "truncated"
	CheckWarmCache    = "warm_cache"
	CheckColdStart    = "cold_start"
)

// Check statuses.
const (
	StatusOK          = "ok"
	StatusFlagged     = "flagged"
	StatusNotAssessed = "not_assessed"
)

// ValidityCheck is one check's outcome: its headline measure, the threshold it
// was held to, and a sentence saying what was seen.
type ValidityCheck struct {
	Name      string  `json:"name"`
	Status    string  `json:"status"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Detail    string  `json:"detail"`
	// Fix, when set, is what would make the simulation comparable: for a
	// lagging client that held requests at a cap, the replay that models it.
	Fix    string  `json:"fix,omitempty"`
	Window *Window `json:"window,omitempty"`
}

// Window is a stretch of the run on the normalised time axis, in µs.
type Window struct {
	Label    string `json:"label"`
	Graded   bool   `json:"graded"`
	StartUs  int64  `json:"start_us"`
	EndUs    int64  `json:"end_us"`
	Requests int    `json:"requests"`
}

// Flagged lists the names of the flagged checks.
func (v *Validity) Flagged() []string {
	var out []string
	for _, c := range v.Checks {
		if c.Status == StatusFlagged {
			out = append(out, c.Name)
		}
	}
	return out
}

// measured is one usable real row, in send order, for the trend checks.
type measured struct {
	id                int64
	send, first, last int64
	ttft, tpot        float64 // tpot < 0 when output < 2
}

func computeValidity(in *Input, m *matching, s *settings) Validity {
	cfg := s.validity
	run := make([]measured, 0, len(m.rows))
	lags := make([]float64, 0, len(m.rows))
	nonWarm := make([]*row, 0, len(m.rows))
	for i := range m.rows {
		rw := &m.rows[i]
		if rw.bucket == bucketWarmUp {
			continue
		}
		nonWarm = append(nonWarm, rw)
		rec := rw.rec
		if rec.SendTimeUs > 0 {
			lags = append(lags, math.Max(0, float64(rec.SendTimeUs-rec.ArrivalTimeUs)))
		}
		if rec.Status != "ok" || !validTiming(rec) {
			continue
		}
		first := firstTime(rec, s.firstToken)
		mr := measured{id: rec.RequestID, send: rec.SendTimeUs, first: first, last: rec.LastChunkTimeUs, ttft: float64(first - rec.SendTimeUs), tpot: -1}
		if rec.OutputTokens >= 2 {
			mr.tpot = float64(rec.LastChunkTimeUs-first) / float64(rec.OutputTokens-1)
		}
		run = append(run, mr)
	}
	slices.SortFunc(run, func(a, b measured) int {
		if c := cmp.Compare(a.send, b.send); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id) // ids are unique: a total order, so the result is deterministic
	})

	v := Validity{Checks: []ValidityCheck{
		saturation(run, cfg),
		clientLag(lags, in.Trace, cfg),
		truncation(in, nonWarm, m, cfg),
		warmCache(in, nonWarm, cfg),
		coldStart(run, cfg),
	}}
	v.Valid = len(v.Flagged()) == 0
	v.Windows = windows(m, s)
	return v
}

// median is the p50 of xs, by sampledPercentile.
func median(xs []float64) float64 { return sampledPercentile(xs, 50) }

// sampledPercentile is Percentile over at most 50 000 values: past that it takes
// every k-th value. The validity checks are heuristics over trends, so a
// million-row trace then costs a few small sorts instead of several full ones.
func sampledPercentile(xs []float64, p float64) float64 {
	const limit = 50_000
	if len(xs) > limit {
		k := (len(xs) + limit - 1) / limit
		sample := make([]float64, 0, limit)
		for i := 0; i < len(xs); i += k {
			sample = append(sample, xs[i])
		}
		xs = sample
	}
	return Percentile(xs, p)
}

func ttfts(rs []measured) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.ttft
	}
	return out
}

func tpots(rs []measured) []float64 {
	var out []float64
	for _, r := range rs {
		if r.tpot >= 0 {
			out = append(out, r.tpot)
		}
	}
	return out
}

// inflight returns, for each row of run (sorted by send), how many rows were in
// flight (sent, not yet finished) at its send instant, itself included.
func inflight(run []measured) []float64 {
	lasts := make([]int64, len(run))
	for i, r := range run {
		lasts[i] = r.last
	}
	slices.Sort(lasts)
	out := make([]float64, len(run))
	started := 0
	for i, r := range run {
		for started < len(run) && run[started].send <= r.send {
			started++ // sends ≤ t
		}
		done, _ := slices.BinarySearch(lasts, r.send+1) // finished ≤ t
		out[i] = float64(started - done)
	}
	return out
}

func saturation(run []measured, cfg ValidityConfig) ValidityCheck {
	c := ValidityCheck{Name: CheckSaturated, Threshold: cfg.SaturationTTFTGrowth}
	if len(run) < cfg.MinRows || len(run) < 8 {
		c.Status = StatusNotAssessed
		c.Detail = fmt.Sprintf("%d measured rows; the trend needs at least %d", len(run), max(cfg.MinRows, 8))
		return c
	}
	q := len(run) / 4
	head, tail := run[:q], run[len(run)-q:]
	t1, t4 := median(ttfts(head)), median(ttfts(tail))
	fl := inflight(run)
	f1, f4 := Mean(fl[:q]), Mean(fl[len(fl)-q:])
	growth := t4 / math.Max(t1, 1)
	c.Value = growth
	c.Window = &Window{Label: "last quarter of sends", StartUs: tail[0].send, EndUs: maxLast(tail), Requests: len(tail)}
	c.Detail = fmt.Sprintf("median TTFT went from %s (first quarter of sends) to %s (last quarter), requests in flight from %.1f to %.1f",
		fmtDur(t1), fmtDur(t4), f1, f4)
	if growth >= cfg.SaturationTTFTGrowth && t4-t1 >= float64(cfg.SaturationMinIncrease.Microseconds()) &&
		f4 >= cfg.SaturationInflightGrowth*f1 {
		c.Status = StatusFlagged
		c.Detail += ": the queue grew without bound, so latencies reflect how long the run lasted more than the load"
		return c
	}
	c.Status = StatusOK
	c.Window = nil
	return c
}

func maxLast(rs []measured) int64 {
	var m int64
	for _, r := range rs {
		m = max(m, r.last)
	}
	return m
}

func clientLag(lags []float64, trace []tracev2.Record, cfg ValidityConfig) ValidityCheck {
	lim := float64(cfg.LagP95Max.Microseconds())
	c := ValidityCheck{Name: CheckClientLagged, Threshold: lim}
	if len(lags) == 0 {
		c.Status = StatusNotAssessed
		c.Detail = "no row has a send time"
		return c
	}
	p95 := sampledPercentile(lags, 95)
	c.Value = p95
	c.Detail = fmt.Sprintf("send lag (send - arrival): p95 %s, max %s, limit %s", fmtDur(p95), fmtDur(slices.Max(lags)), fmtDur(lim))
	if p95 > lim {
		c.Status = StatusFlagged
		c.Detail += ": the client fell behind its schedule, so the offered load differs from the plan"
		timed := make([]*tracev2.Record, 0, len(trace))
		for i := range trace {
			if _, _, _, ok := tracev2.RecordSpan(&trace[i]); ok {
				timed = append(timed, &trace[i])
			}
		}
		cp := tracev2.FindClientCap(len(timed), func(i int) (int64, int64, int64) {
			a, s, e, _ := tracev2.RecordSpan(timed[i])
			return a, s, e
		})
		if cp.Capped {
			c.Fix = fmt.Sprintf("replay with --client-max-concurrency %d --client-send-gap %dus (replay detects the cap by default unless --detect-client=false)", cp.MaxConcurrency, cp.SendGapUs)
			c.Detail += "; " + cp.String() + ": a closed loop, so " + c.Fix
		}
		return c
	}
	c.Status = StatusOK
	return c
}

func truncation(in *Input, rows []*row, m *matching, cfg ValidityConfig) ValidityCheck {
	c := ValidityCheck{Name: CheckTruncated, Threshold: cfg.TruncatedMaxFraction}
	if len(rows) == 0 {
		c.Status = StatusNotAssessed
		c.Detail = "no rows after warm-up"
		return c
	}
	var maxLen int64
	if p := in.Header.Server.MaxModelLen; p != nil {
		maxLen = *p
	}
	cut, unjudged := 0, 0
	for _, rw := range rows {
		rec := rw.rec
		if rec.FinishReason != "length" {
			continue
		}
		want, known := in.RequestedOutputTokens[rec.RequestID]
		switch {
		case known && rec.OutputTokens < want:
			cut++
		case maxLen > 0 && int64(realPrompt(rec)+rec.OutputTokens) >= maxLen:
			cut++
		case !known && maxLen == 0:
			unjudged++
		}
	}
	evidence := cut + m.outputMismatch
	c.Value = float64(evidence) / float64(len(rows))
	c.Detail = fmt.Sprintf("%d of %d rows stopped on length below the requested output or at max_model_len; %d matched pairs differ in output tokens (%d token mismatches in all)",
		cut, len(rows), m.outputMismatch, m.tokenMismatches)
	if unjudged > 0 {
		c.Detail += fmt.Sprintf("; %d rows ended on length with neither the requested length nor max_model_len known", unjudged)
	}
	if c.Value > cfg.TruncatedMaxFraction {
		c.Status = StatusFlagged
		c.Detail += ": generations were cut short, so real and simulated requests did different work"
		return c
	}
	c.Status = StatusOK
	return c
}

func warmCache(in *Input, rows []*row, cfg ValidityConfig) ValidityCheck {
	minTok := cfg.WarmCacheMinTokens
	if minTok == 0 {
		minTok = 16
		if b := in.Header.Server.BlockSize; b != nil && *b > 0 {
			minTok = *b
		}
	}
	c := ValidityCheck{Name: CheckWarmCache, Threshold: float64(minTok)}
	var sent []*tracev2.Record
	reported := false
	firstOut := int64(math.MaxInt64)
	for _, rw := range rows {
		rec := rw.rec
		reported = reported || rec.CachedTokens > 0
		if rec.SendTimeUs <= 0 {
			continue
		}
		sent = append(sent, rec)
		if rec.FirstChunkTimeUs > 0 {
			firstOut = min(firstOut, rec.FirstChunkTimeUs)
		}
	}
	if !reported || len(sent) == 0 {
		c.Status = StatusNotAssessed
		c.Detail = "no row reports cached prompt tokens (ext_cached_tokens)"
		return c
	}
	slices.SortStableFunc(sent, func(a, b *tracev2.Record) int { return cmp.Compare(a.SendTimeUs, b.SendTimeUs) })
	// Early requests were sent before any request of the run had its first token:
	// nothing of this run can have filled the prefix cache for them yet.
	early, worst := 0, 0
	for i, rec := range sent {
		if i > 0 && rec.SendTimeUs >= firstOut {
			break
		}
		early++
		worst = max(worst, rec.CachedTokens)
	}
	c.Value = float64(worst)
	c.Window = &Window{Label: "requests sent before the first response", StartUs: sent[0].SendTimeUs,
		EndUs: sent[early-1].SendTimeUs, Requests: early}
	c.Detail = fmt.Sprintf("the %d requests sent before the first response report up to %d cached prompt tokens (limit %d)", early, worst, minTok)
	if worst > minTok {
		c.Status = StatusFlagged
		c.Detail += ": the prefix cache was warm before the run, while the simulation starts cold"
		return c
	}
	c.Status = StatusOK
	c.Window = nil
	return c
}

func coldStart(run []measured, cfg ValidityConfig) ValidityCheck {
	c := ValidityCheck{Name: CheckColdStart, Threshold: cfg.ColdStartFactor}
	w := max(3, int(math.Ceil(cfg.ColdStartWindowFraction*float64(len(run)))))
	if len(run) < 2*w+cfg.MinRows {
		c.Status = StatusNotAssessed
		c.Detail = fmt.Sprintf("%d measured rows; the check needs at least %d", len(run), 2*w+cfg.MinRows)
		return c
	}
	head, rest := run[:w], run[w:]
	th, tr := median(ttfts(head)), median(ttfts(rest))
	ratio := th / math.Max(tr, 1)
	minInc := float64(cfg.ColdStartMinIncrease.Microseconds())
	flagged := ratio >= cfg.ColdStartFactor && th-tr >= minInc
	c.Value = ratio
	c.Detail = fmt.Sprintf("the first %d sends have median TTFT %s against %s for the rest", w, fmtDur(th), fmtDur(tr))
	if ph, pr := tpots(head), tpots(rest); len(ph) > 0 && len(pr) > 0 {
		mh, mr := median(ph), median(pr)
		pratio := mh / math.Max(mr, 1)
		c.Detail += fmt.Sprintf(", median TPOT %s against %s", fmtDur(mh), fmtDur(mr))
		if pratio >= cfg.ColdStartFactor && mh-mr >= minInc/10 {
			flagged = true
			c.Value = math.Max(c.Value, pratio)
		}
	}
	if !flagged {
		c.Status = StatusOK
		return c
	}
	end := head[len(head)-1].send
	c.Status = StatusFlagged
	c.Window = &Window{Label: "cold-start transient", StartUs: head[0].send, EndUs: end, Requests: w}
	c.Detail += fmt.Sprintf(": the server was still warming up; consider --warmup-duration %s", (time.Duration(end+1)*time.Microsecond).Round(time.Millisecond)+time.Millisecond)
	return c
}

// windows says which stretches of the run were excluded as warm-up and which
// were graded.
func windows(m *matching, s *settings) []Window {
	var out []Window
	warm := Window{Label: "warm-up", StartUs: math.MaxInt64}
	graded := Window{Label: "matched requests", Graded: true, StartUs: math.MaxInt64}
	for i := range m.rows {
		rw := &m.rows[i]
		var w *Window
		switch rw.bucket {
		case bucketWarmUp:
			w = &warm
		case bucketMatched:
			w = &graded
		default:
			continue
		}
		start := rw.rec.SendTimeUs
		if start <= 0 {
			start = rw.rec.ArrivalTimeUs
		}
		w.StartUs = min(w.StartUs, start)
		w.EndUs = max(w.EndUs, rw.rec.LastChunkTimeUs, start)
		w.Requests++
	}
	if warm.Requests > 0 {
		warm.Label = fmt.Sprintf("warm-up (request_id < %d", s.warmupN)
		if s.warmupDurUs > 0 {
			warm.Label += fmt.Sprintf(" or arrival < %s", fmtDur(float64(s.warmupDurUs)))
		}
		warm.Label += ")"
		out = append(out, warm)
	}
	if graded.Requests > 0 {
		out = append(out, graded)
	}
	return out
}
