package report

import (
	"strings"
	"time"
)

// Goodput is the report's goodput block (docs/calibrate.md §8, §10).
type Goodput struct {
	Targets  map[string]SLOTarget     `json:"targets"`
	PerClass map[string]*ClassGoodput `json:"per_class"`
}

// ClassGoodput is one SLO class's attainment on both sides.
type ClassGoodput struct {
	Count               int                `json:"count"`
	RealSLOAttainment   float64            `json:"real_slo_attainment"`
	SimSLOAttainment    float64            `json:"sim_slo_attainment"`
	RealGoodputRPS      float64            `json:"real_goodput_rps"`
	SimGoodputRPS       float64            `json:"sim_goodput_rps"`
	RealAttainmentByDim map[string]float64 `json:"real_attainment_by_dim"`
	SimAttainmentByDim  map[string]float64 `json:"sim_attainment_by_dim"`
	SkippedITL          bool               `json:"skipped_itl,omitempty"`
}

// Goodput dimensions.
const (
	dimTTFT = "ttft"
	dimITL  = "itl"
	dimE2E  = "e2e"
)

// dimTally counts met and evaluated requests per gated dimension.
type dimTally struct{ met, evaluated map[string]int }

func newTally() dimTally { return dimTally{met: map[string]int{}, evaluated: map[string]int{}} }

func (d dimTally) note(dim string, met bool) {
	d.evaluated[dim]++
	if met {
		d.met[dim]++
	}
}

func (d dimTally) fractions() map[string]float64 {
	out := make(map[string]float64, len(d.evaluated))
	for dim, n := range d.evaluated {
		if n > 0 {
			out[dim] = float64(d.met[dim]) / float64(n)
		}
	}
	return out
}

// judge applies one class's targets to one side's latencies (µs). itlOK is false
// when the request's ITL cannot be evaluated. failed marks a real row that did not
// succeed: every gated dimension counts as evaluated and missed.
func judge(t SLOTarget, ttft, e2e, itl float64, itlOK, failed bool, tally dimTally) (good, skippedITL bool) {
	good = !failed && ttft > 0 && e2e >= ttft
	timingOK := good
	check := func(dim string, targetMs, valueUs float64) {
		if targetMs <= 0 {
			return
		}
		met := timingOK && valueUs <= targetMs*1000
		tally.note(dim, met)
		good = good && met
	}
	check(dimTTFT, t.TTFTMs, ttft)
	check(dimE2E, t.E2EMs, e2e)
	if t.ITLMs > 0 {
		if itlOK || failed {
			check(dimITL, t.ITLMs, itl)
		} else {
			skippedITL = true
		}
	}
	return good, skippedITL
}

// computeGoodput runs docs/calibrate.md §8 over the classified rows; runtimeS is the run's runtime.
func computeGoodput(m *matching, s *settings, runtimeS float64) *Goodput {
	if len(s.targets) == 0 {
		return nil
	}
	g := &Goodput{Targets: s.targets, PerClass: make(map[string]*ClassGoodput, len(s.targets))}
	type acc struct {
		count, realGood, simGood int
		realDims, simDims        dimTally
		skipped                  bool
	}
	accs := make(map[string]*acc, len(s.targets))
	for class := range s.targets {
		accs[class] = &acc{realDims: newTally(), simDims: newTally()}
	}
	for i := range m.rows {
		rw := &m.rows[i]
		rec := rw.rec
		if rw.bucket == bucketWarmUp || rw.sim == nil {
			continue
		}
		if rec.Status != "ok" && rec.Status != "error" && rec.Status != "timeout" {
			continue
		}
		a, ok := accs[className(rw.class)]
		if !ok {
			continue
		}
		t := s.targets[className(rw.class)]
		a.count++

		failed := rec.Status != "ok"
		ttft, e2e, itl, itlOK := realLatencies(rw, m, s)
		good, skipped := judge(t, ttft, e2e, itl, itlOK, failed, a.realDims)
		if good {
			a.realGood++
		}
		a.skipped = a.skipped || skipped

		simPerTok, simOK := simITL(rw.sim)
		good, skipped = judge(t, s.simTTFT(rw.sim), s.simE2E(rw.sim), simPerTok, simOK, false, a.simDims)
		if good {
			a.simGood++
		}
		a.skipped = a.skipped || skipped
	}
	for class, a := range accs {
		cg := &ClassGoodput{
			Count:               a.count,
			RealAttainmentByDim: a.realDims.fractions(),
			SimAttainmentByDim:  a.simDims.fractions(),
			SkippedITL:          a.skipped,
		}
		if a.count > 0 {
			cg.RealSLOAttainment = float64(a.realGood) / float64(a.count)
			cg.SimSLOAttainment = float64(a.simGood) / float64(a.count)
		}
		if runtimeS > 0 {
			cg.RealGoodputRPS = float64(a.realGood) / runtimeS
			cg.SimGoodputRPS = float64(a.simGood) / runtimeS
		}
		g.PerClass[class] = cg
	}
	return g
}

// realLatencies are a trace row's TTFT, E2E and mean ITL in µs as goodput
// judges them: TTFT and E2E are 0 when a chunk time is missing; itlOK is
// false when the row gives no ITL.
func realLatencies(rw *row, m *matching, s *settings) (ttft, e2e, itl float64, itlOK bool) {
	rec := rw.rec
	first := firstTime(rec, s.firstToken)
	ttft = float64(first - rec.SendTimeUs)
	e2e = float64(rec.LastChunkTimeUs - rec.SendTimeUs)
	if first == 0 || rec.LastChunkTimeUs == 0 {
		ttft, e2e = 0, 0
	}
	itl, itlOK = m.itlMean[rec.RequestID]
	if !itlOK && rec.OutputTokens >= 2 && first > 0 && rec.LastChunkTimeUs >= first {
		itl, itlOK = float64(rec.LastChunkTimeUs-first)/float64(rec.OutputTokens-1), true
	}
	return ttft, e2e, itl, itlOK
}

// runtimeUs is docs/calibrate.md §8's runtime: latest last_chunk_time_us − earliest send_time_us
// over the non-warm-up rows that have a SimResult (every class and status).
func runtimeUs(m *matching) int64 {
	var lo, hi int64
	seen := false
	for i := range m.rows {
		rw := &m.rows[i]
		if rw.bucket == bucketWarmUp || rw.sim == nil {
			continue
		}
		if send := rw.rec.SendTimeUs; !seen || send < lo {
			lo = send
		}
		seen = true
		if rw.rec.LastChunkTimeUs > hi {
			hi = rw.rec.LastChunkTimeUs
		}
	}
	if !seen || hi <= lo {
		return 0
	}
	return hi - lo
}

// ParseSLOTargets turns the --slo-ttft, --slo-itl and --slo-e2e flag values
// (each "class=duration,..." as in "critical=250ms,standard=1s"; empty = unset)
// into per-class overrides for Config.SLOOverrides.
func ParseSLOTargets(ttft, itl, e2e string) (map[string]SLOTarget, error) {
	out := make(map[string]SLOTarget)
	for _, f := range []struct {
		flag, value string
		set         func(*SLOTarget, float64)
	}{
		{"slo-ttft", ttft, func(t *SLOTarget, ms float64) { t.TTFTMs = ms }},
		{"slo-itl", itl, func(t *SLOTarget, ms float64) { t.ITLMs = ms }},
		{"slo-e2e", e2e, func(t *SLOTarget, ms float64) { t.E2EMs = ms }},
	} {
		if strings.TrimSpace(f.value) == "" {
			continue
		}
		for _, item := range strings.Split(f.value, ",") {
			class, dur, ok := strings.Cut(strings.TrimSpace(item), "=")
			class = strings.TrimSpace(class)
			if !ok || class == "" {
				return nil, inputErrorf("report: --%s %q: item %q is not class=duration (e.g. critical=250ms)", f.flag, f.value, item)
			}
			d, err := time.ParseDuration(strings.TrimSpace(dur))
			if err != nil {
				return nil, inputErrorf("report: --%s %q: class %s: %w", f.flag, f.value, class, err)
			}
			if d <= 0 {
				return nil, inputErrorf("report: --%s %q: class %s: target %s must be positive", f.flag, f.value, class, d)
			}
			t := out[class]
			f.set(&t, float64(d)/float64(time.Millisecond))
			out[class] = t
		}
	}
	return out, nil
}

// durationString renders µs as a Go duration string (trace_info.duration).
func durationString(us int64) string {
	return (time.Duration(us) * time.Microsecond).String()
}
