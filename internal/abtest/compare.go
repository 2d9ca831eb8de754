package abtest

import (
	"fmt"
	"math"

	"servesim/internal/exitcode"
	"servesim/internal/report"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
)

// Run is one real trace: its name for messages, its header and its rows.
type Run struct {
	Name    string
	Header  *tracev2.Header
	Records []tracev2.Record
}

// Side is one arm of the comparison: one run, or the repeats of one
// configuration.
type Side []Run

// Options are the settings of a comparison, every one already checked by
// Options.Check.
type Options struct {
	Resamples  int     // bootstrap resamples
	Confidence float64 // of the intervals, in (0, 1)
	Seed       uint64  // of the bootstrap's random stream
	SLO        sweep.SLO
	// SameModel tells whether two model names are one model, for the
	// deployments' comparison (nil: case-insensitive).
	SameModel func(a, b string) bool
}

// Bounds of the options.
const (
	DefaultResamples  = 2000
	MaxResamples      = 100_000
	DefaultConfidence = 0.95
	// MaxRepeats bounds the runs of one side.
	MaxRepeats = 100
)

// DefaultOptions are the settings the command starts from.
func DefaultOptions() Options {
	return Options{Resamples: DefaultResamples, Confidence: DefaultConfidence, Seed: 1}
}

// Check refuses options no comparison can use.
func (o Options) Check() error {
	if o.Resamples < 100 || o.Resamples > MaxResamples {
		return exitcode.Usagef("--resamples %d: want 100 to %d", o.Resamples, MaxResamples)
	}
	if math.IsNaN(o.Confidence) || o.Confidence < 0.5 || o.Confidence >= 1 {
		return exitcode.Usagef("--confidence %v: want a fraction in [0.5, 1), e.g. 0.95", o.Confidence)
	}
	return nil
}

// Modes of a comparison.
const (
	ModePaired      = "paired"
	ModeIndependent = "independent"
)

// unit is one measured request of a side, its latencies in µs.
type unit struct {
	rep             int // the repeat it belongs to
	ok              bool
	ttft, tpot, e2e float64
	hasTPOT         bool // at least two output tokens
	tokens          float64
	send, last      int64
	good            bool // ok and within every bound of the SLO
}

// units turns a run's rows past its warm-up into units, keyed by request
// id; keys lists the ids in row order.
func units(r Run, rep int, slo sweep.SLO) (map[int64]unit, []int64) {
	warm := int64(0)
	if r.Header != nil {
		warm = int64(r.Header.WarmUpRequests)
	}
	ttftMs, itlMs, e2eMs := slo.RequestTargets()
	out := make(map[int64]unit, len(r.Records))
	keys := make([]int64, 0, len(r.Records))
	for i := range r.Records {
		rec := &r.Records[i]
		if rec.RequestID < warm {
			continue
		}
		u := unit{rep: rep, send: rec.SendTimeUs, last: rec.LastChunkTimeUs}
		u.ok = rec.Status == "ok" && rec.FirstChunkTimeUs >= rec.SendTimeUs && rec.LastChunkTimeUs >= rec.FirstChunkTimeUs && rec.FirstChunkTimeUs > 0
		if u.ok {
			u.ttft = float64(rec.FirstChunkTimeUs - rec.SendTimeUs)
			u.e2e = float64(rec.LastChunkTimeUs - rec.SendTimeUs)
			u.tokens = float64(rec.OutputTokens)
			if rec.OutputTokens >= 2 {
				u.tpot, u.hasTPOT = float64(rec.LastChunkTimeUs-rec.FirstChunkTimeUs)/float64(rec.OutputTokens-1), true
			}
			u.good = !slo.Empty() && within(u.ttft, ttftMs) && within(u.e2e, e2eMs) && (itlMs == 0 || (u.hasTPOT && within(u.tpot, itlMs)))
		}
		out[rec.RequestID] = u
		keys = append(keys, rec.RequestID)
	}
	return out, keys
}

// within reports whether v µs is within a bound of ms (0 = no bound).
func within(us, ms float64) bool { return ms == 0 || us <= ms*1000 }

// sample is what the bootstrap resamples: the units of each side, index
// i of A paired with index i of B when paired.
type sample struct {
	a, b   []unit
	paired bool
	why    string // how the mode was decided, in words
}

// arrivalSlackUs is how far two runs' arrival offsets of one request may
// differ and still be one schedule: the intended send times of a played
// schedule agree to the microsecond; a millisecond leaves room for a trace
// whose times were rounded.
const arrivalSlackUs = 1000

// build gathers both sides' units and decides the mode: paired when the
// sides have as many runs and each run of A played the schedule of the
// run of B at its place.
func build(a, b Side, slo sweep.SLO) sample {
	s := sample{paired: len(a) == len(b)}
	if !s.paired {
		s.why = fmt.Sprintf("A has %d runs and B %d: the distributions are compared", len(a), len(b))
	}
	for i := range a {
		if !s.paired {
			break
		}
		if why := sameSchedule(a[i], b[i]); why != "" {
			s.paired, s.why = false, why
		}
	}
	for i, r := range a {
		ua, ka := units(r, i, slo)
		var ub map[int64]unit
		if s.paired {
			ub, _ = units(b[i], i, slo)
		}
		for _, k := range ka {
			s.a = append(s.a, ua[k])
			if s.paired {
				s.b = append(s.b, ub[k])
			}
		}
	}
	if s.paired {
		s.why = "both runs played the same schedule (same request ids, arrival offsets and prompt lengths): requests are paired"
		if len(a) > 1 {
			s.why = "each repeat of A played the same schedule as the repeat of B at its place: requests are paired"
		}
		return s
	}
	for i, r := range b {
		ub, kb := units(r, i, slo)
		for _, k := range kb {
			s.b = append(s.b, ub[k])
		}
	}
	return s
}

// sameSchedule says why two runs did not play one schedule ("" when they
// did): the same request ids past the warm-up, each at the same offset
// from the run's first arrival, with the same prompt length.
func sameSchedule(a, b Run) string {
	type row struct {
		arrival int64
		// prompt is the prompt as recorded and as it is sent again: a
		// played trace sends the server's own count of the original's
		// prompt (tracev2.Record.ResendPromptTokens), so the two runs of
		// one schedule share one of the two.
		prompt [2]int
	}
	// rows are a run's requests past the warm-up by id, ids in row order,
	// and its first arrival.
	rows := func(r Run) (map[int64]row, []int64, int64) {
		warm := int64(0)
		if r.Header != nil {
			warm = int64(r.Header.WarmUpRequests)
		}
		m := make(map[int64]row, len(r.Records))
		var ids []int64
		first := int64(math.MaxInt64)
		for i := range r.Records {
			rec := &r.Records[i]
			if rec.RequestID < warm {
				continue
			}
			m[rec.RequestID] = row{rec.ArrivalTimeUs, [2]int{rec.PromptTokens(), rec.ResendPromptTokens()}}
			ids = append(ids, rec.RequestID)
			first = min(first, rec.ArrivalTimeUs)
		}
		return m, ids, first
	}
	ra, ids, fa := rows(a)
	rb, _, fb := rows(b)
	if len(ra) != len(rb) {
		return fmt.Sprintf("%s has %d requests and %s %d: the distributions are compared", a.Name, len(ra), b.Name, len(rb))
	}
	for _, id := range ids {
		x := ra[id]
		y, ok := rb[id]
		switch {
		case !ok:
			return fmt.Sprintf("request %d of %s is not in %s: the distributions are compared", id, a.Name, b.Name)
		case x.prompt[0] != y.prompt[0] && x.prompt[0] != y.prompt[1] && x.prompt[1] != y.prompt[0]:
			return fmt.Sprintf("request %d has %d prompt tokens in %s and %d in %s: the distributions are compared", id, x.prompt[0], a.Name, y.prompt[0], b.Name)
		case abs64((x.arrival-fa)-(y.arrival-fb)) > arrivalSlackUs:
			return fmt.Sprintf("request %d arrived at +%d µs in %s and +%d µs in %s: the distributions are compared", id, x.arrival-fa, a.Name, y.arrival-fb, b.Name)
		}
	}
	return ""
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// checkRun refuses a run that is not a measurement or measured nothing.
func checkRun(side string, r Run) error {
	if r.Header != nil && r.Header.Mode != "" && r.Header.Mode != "real" {
		return exitcode.Usagef("%s (%s): mode %s is not a measured run: calibrate compare compares two real runs (observe's traces)", r.Name, side, r.Header.Mode)
	}
	u, _ := units(r, 0, sweep.SLO{})
	for _, x := range u {
		if x.ok {
			return nil
		}
	}
	return exitcode.Usagef("%s (%s): no request past the warm-up finished ok: nothing to compare", r.Name, side)
}

// model is the model a run measured, from its header or its rows.
func model(r Run) string {
	if r.Header != nil && r.Header.Server != nil && r.Header.Server.Model != "" {
		return r.Header.Server.Model
	}
	if len(r.Records) > 0 {
		return r.Records[0].Model
	}
	return ""
}

// deployments is the config verdict between A's and B's first runs: A's
// header stands where the trace stands, B's where the simulation does.
func deployments(a, b Run, same func(x, y string) bool) report.ConfigMatch {
	return report.CompareDeployments(a.Header, b.Header, same)
}
