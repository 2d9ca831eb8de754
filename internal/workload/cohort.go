package workload

import (
	"fmt"
	"math"
)

// Cohorts (BLIS WorkloadSpec v2, docs/workload.md §3) describe a population of
// alike clients whose traffic follows a pattern over time. Each cohort
// expands into `population` clients "<id>-<j>", each with rate_fraction /
// population, sharing one lifecycle built from the patterns:
//
//   - diurnal: 24 one-hour windows from t = 0; hour h is active for the
//     first m(h) of the hour, m(h) = (1 + cos(2π(h − peak_hour)/24))/2 ·
//     (1 − 1/R) + 1/R with R = peak_to_trough_ratio (the whole hour at the
//     peak, 1/R of it twelve hours away);
//   - spike: one window [start_time_us, start_time_us + duration_us), its
//     trace_rate (if any) divided among the members;
//   - drain: full activity until start_time_us, then ten equal slices of
//     ramp_duration_us active for 10/10, 9/10, …, 1/10 of their length.
//
// prefix_sharing "shared" (the default) keeps one prefix group for the
// cohort; "per_member" gives member j the group "<prefix_group>-<j>".

// MaxPopulation bounds one cohort (BLIS's bound); MaxClients bounds all
// clients after cohorts and inference_perf stages are expanded: a client
// costs about 2 KB to compile and generate from, so 200,000 stay under
// half a gigabyte.
const (
	MaxPopulation = 100_000
	MaxClients    = 200_000
)

const usPerHour = int64(3_600_000_000)

// rawCohort is a cohort as decoded: a client's keys (the schema walker
// has already refused the per-client ones a cohort may not have) and its
// own.
type rawCohort struct {
	rawClient     `yaml:",inline"`
	Population    *int64      `yaml:"population"`
	PrefixSharing string      `yaml:"prefix_sharing"`
	Diurnal       *rawDiurnal `yaml:"diurnal"`
	Spike         *rawSpike   `yaml:"spike"`
	Drain         *rawDrain   `yaml:"drain"`
}

type rawDiurnal struct {
	PeakHour          *int64   `yaml:"peak_hour"`
	PeakToTroughRatio *float64 `yaml:"peak_to_trough_ratio"`
}

type rawSpike struct {
	StartTimeUs *int64   `yaml:"start_time_us"`
	DurationUs  *int64   `yaml:"duration_us"`
	TraceRate   *float64 `yaml:"trace_rate"`
}

type rawDrain struct {
	StartTimeUs    *int64 `yaml:"start_time_us"`
	RampDurationUs *int64 `yaml:"ramp_duration_us"`
}

// decodeSources expands what the spec gives besides its clients —
// cohorts, an inference_perf block, a rate ramp — into s.
func decodeSources(raw *rawSpec, s *Spec, pos *positions, v1 bool) ([]string, *Error) {
	var warn []string
	if ip := raw.InferencePerf; ip != nil {
		if len(raw.Clients) > 0 || len(raw.Cohorts) > 0 {
			return nil, &Error{Path: "inference_perf", Msg: "clients, cohorts and inference_perf are alternatives: give only one"}
		}
		w, err := expandInferencePerf(ip, s, pos)
		if err != nil {
			return nil, err
		}
		warn = append(warn, w...)
	}
	for k := range raw.Cohorts {
		members, w, err := expandCohort(&raw.Cohorts[k], fmt.Sprintf("cohorts[%d]", k), len(s.Clients), pos, v1)
		if err != nil {
			return nil, err
		}
		if len(s.Clients)+len(members) > MaxClients {
			return nil, &Error{Path: fmt.Sprintf("cohorts[%d].population", k), Msg: fmt.Sprintf("more than %d clients in all", MaxClients)}
		}
		warn = append(warn, w...)
		s.Clients = append(s.Clients, members...)
	}
	if r := raw.RateRamp; r != nil {
		if raw.AggregateRate != nil {
			return nil, &Error{Path: "rate_ramp", Msg: "rate_ramp replaces aggregate_rate: give only one"}
		}
		s.RateRamp = &RateRamp{Strategy: r.Strategy, StartRPS: deref(r.StartRPS), EndRPS: deref(r.EndRPS)}
		s.AggregateRate = s.RateRamp.StartRPS
	}
	return warn, nil
}

// expandCohort decodes cohort path once (as a client) and expands it into
// its members; first is the index the first member will have.
func expandCohort(rc *rawCohort, path string, first int, pos *positions, v1 bool) ([]Client, []string, *Error) {
	if rc.Population == nil {
		return nil, nil, &Error{Path: path, Msg: "population is required"}
	}
	pop := *rc.Population
	if pop < 1 || pop > MaxPopulation {
		return nil, nil, &Error{Path: path + ".population", Msg: fmt.Sprintf("%d out of range [1, %d]", pop, MaxPopulation)}
	}
	if rc.RateFraction == nil {
		return nil, nil, &Error{Path: path, Msg: "rate_fraction is required"}
	}
	if f := *rc.RateFraction; !(f > 0) || math.IsInf(f, 0) {
		return nil, nil, &Error{Path: path + ".rate_fraction", Msg: fmt.Sprintf("%g must be finite and > 0", f)}
	}
	base, warn, err := decodeClient(&rc.rawClient, path, pos, v1)
	if err != nil {
		return nil, nil, err
	}
	perMember := false
	switch rc.PrefixSharing {
	case "", "shared":
	case "per_member":
		if rc.PrefixGroup == "" {
			return nil, nil, &Error{Path: path + ".prefix_sharing", Msg: "per_member needs prefix_group"}
		}
		perMember = true
	default:
		return nil, nil, &Error{Path: path + ".prefix_sharing", Msg: fmt.Sprintf("unknown value %q (valid: shared, per_member)", rc.PrefixSharing)}
	}
	windows, err := cohortWindows(rc, path, pop)
	if err != nil {
		return nil, nil, err
	}
	if len(windows) > 0 {
		base.Lifecycle = &Lifecycle{Windows: windows}
	}
	id := rc.ID
	if id == "" {
		id = fmt.Sprintf("cohort%d", first)
	}
	base.RateFraction /= float64(pop)
	base.src, base.lead = path, first+1
	members := make([]Client, pop)
	for j := range members {
		m := base
		m.ID = fmt.Sprintf("%s-%d", id, j)
		if perMember {
			m.PrefixGroup = fmt.Sprintf("%s-%d", rc.PrefixGroup, j)
		}
		members[j] = m
	}
	return members, warn, nil
}

// cohortWindows builds the lifecycle windows of a cohort's patterns
// (diurnal, spike, drain, in that order).
func cohortWindows(rc *rawCohort, path string, pop int64) ([]Window, *Error) {
	var ws []Window
	if d := rc.Diurnal; d != nil {
		if d.PeakHour == nil || d.PeakToTroughRatio == nil {
			return nil, &Error{Path: path + ".diurnal", Msg: "peak_hour and peak_to_trough_ratio are required"}
		}
		h0, r := *d.PeakHour, *d.PeakToTroughRatio
		if h0 < 0 || h0 > 23 {
			return nil, &Error{Path: path + ".diurnal.peak_hour", Msg: fmt.Sprintf("%d out of range [0, 23]", h0)}
		}
		if !(r >= 1) || math.IsInf(r, 0) {
			return nil, &Error{Path: path + ".diurnal.peak_to_trough_ratio", Msg: fmt.Sprintf("%g must be finite and >= 1", r)}
		}
		for h := range int64(24) {
			m := (1+math.Cos(2*math.Pi*float64(h-h0)/24))/2*(1-1/r) + 1/r
			dur := min(max(int64(float64(usPerHour)*m), 1), usPerHour)
			ws = append(ws, Window{StartUs: h * usPerHour, EndUs: h*usPerHour + dur})
		}
	}
	if sp := rc.Spike; sp != nil {
		if sp.StartTimeUs == nil || sp.DurationUs == nil {
			return nil, &Error{Path: path + ".spike", Msg: "start_time_us and duration_us are required"}
		}
		start, dur := *sp.StartTimeUs, *sp.DurationUs
		if start < 0 || dur < 1 || start > maxTimeUs-dur {
			return nil, &Error{Path: path + ".spike", Msg: fmt.Sprintf("start_time_us %d and duration_us %d: want start >= 0, duration >= 1", start, dur)}
		}
		w := Window{StartUs: start, EndUs: start + dur}
		if sp.TraceRate != nil {
			if r := *sp.TraceRate; !(r >= 0) || math.IsInf(r, 0) {
				return nil, &Error{Path: path + ".spike.trace_rate", Msg: fmt.Sprintf("%g must be finite and >= 0", r)}
			}
			per := *sp.TraceRate / float64(pop)
			w.TraceRate = &per
		}
		ws = append(ws, w)
	}
	if dr := rc.Drain; dr != nil {
		if dr.StartTimeUs == nil || dr.RampDurationUs == nil {
			return nil, &Error{Path: path + ".drain", Msg: "start_time_us and ramp_duration_us are required"}
		}
		start, ramp := *dr.StartTimeUs, *dr.RampDurationUs
		if start < 0 || ramp < 1 || start > maxTimeUs-ramp-10 {
			return nil, &Error{Path: path + ".drain", Msg: fmt.Sprintf("start_time_us %d and ramp_duration_us %d: want start >= 0, ramp >= 1", start, ramp)}
		}
		if start > 0 {
			ws = append(ws, Window{StartUs: 0, EndUs: start})
		}
		const slices = 10
		seg := max(ramp/slices, 1)
		for i := range int64(slices) {
			on := max(int64(float64(seg)*float64(slices-i)/slices), 1)
			ws = append(ws, Window{StartUs: start + i*seg, EndUs: start + i*seg + on})
		}
	}
	return ws, nil
}
