package workload

import (
	"fmt"
	"math"
	"math/bits"
)

// Workload is a validated, compiled Spec: the thing a Source draws from.
// It is immutable and may be shared; every NewSource starts the same stream.
type Workload struct {
	Spec Spec
	// Name is the trace header's workload_spec: the spec file as given,
	// "preset:<name>", or "" for a flag-synthesised workload.
	Name string
	// Warnings about input accepted but ignored, each naming its place.
	Warnings []string

	clients []compiledClient
}

// genKind is how a client produces requests.
type genKind uint8

const (
	genPlain          genKind = iota // open-loop single-turn requests
	genOpenSessions                  // multi-turn, closed_loop: false (all rounds scheduled up front)
	genClosedSessions                // multi-turn, closed_loop: true (rounds follow completions)
	genUsers                         // concurrency users (endless closed-loop sessions)
)

// samplers draw a request's lengths.
type samplers struct {
	in, out *lengthSampler
	ratio   *lengthSampler // nil = reason_ratio 0
	mm      *mmSampler     // nil = text only
}

// compiledClient is a client with its samplers built.
type compiledClient struct {
	c          *Client
	index      int
	kind       genKind
	rate       float64 // requests (or sessions) per second; windowed clients: per phase
	arr        arrivalSampler
	smp        samplers
	windowed   bool      // restricted to lifecycle windows
	phases     []phase   // windowed clients: when they send (rate > 0), in time order
	ramp       *RateRamp // the total rate ramps over rampN requests (rate is its start)
	rampN      int64
	frac       float64 // the client's share of the total rate (ramps)
	prefix     []int32 // the prefix group's shared tokens
	thinkUs    int64   // between rounds (sessions) or requests (users)
	maxRounds  int     // sessions; 0 = endless (users)
	accumulate bool
	single     bool
}

// New validates spec and compiles it. Besides the checks of Decode it
// requires every endless client (rate-based, multi-session, concurrency) to
// be bounded by NumRequests or HorizonUs.
func New(spec Spec) (*Workload, error) {
	s := spec
	s.Clients = append([]Client(nil), spec.Clients...)
	clients, err := compileSpec(&s)
	if err != nil {
		return nil, s.pos.locate(err)
	}
	if s.NumRequests == 0 && s.HorizonUs == 0 {
		for i := range s.Clients {
			if s.Clients[i].endless() {
				return nil, s.pos.locate(&Error{Path: clientPath(&s.Clients[i], i),
					Msg: "unbounded: set num_requests or horizon (or --num-requests / --horizon)"})
			}
		}
	}
	w := &Workload{Spec: s, clients: clients}
	for i := range w.clients {
		w.clients[i].c = &w.Spec.Clients[i]
	}
	prefixes := map[string][]int32{}
	for i := range w.clients {
		cc := &w.clients[i]
		g := cc.c.PrefixGroup
		if g == "" {
			continue
		}
		if _, ok := prefixes[g]; !ok {
			ids := make([]int32, cc.c.PrefixLength)
			var t tokenStream
			t.reset(StreamSeed(s.Seed, "prefix/"+g))
			t.fill(ids)
			prefixes[g] = ids
		}
		cc.prefix = prefixes[g]
	}
	return w, nil
}

// compileSpec validates s (resolving prefix lengths in place) and builds the
// samplers of every client.
func compileSpec(s *Spec) ([]compiledClient, *Error) {
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	totalFrac := 0.0
	for i := range s.Clients {
		if s.Clients[i].Concurrency == 0 {
			totalFrac += s.Clients[i].RateFraction
		}
	}
	if math.IsInf(totalFrac, 0) {
		return nil, &Error{Path: "clients", Msg: "the sum of rate_fraction overflows"}
	}
	rates := windowRates(s)
	out := make([]compiledClient, len(s.Clients))
	for i := range s.Clients {
		c := &s.Clients[i]
		path := clientPath(c, i)
		cc := compiledClient{c: c, index: i}
		shared := c.lead > 0 && c.lead <= i
		if shared {
			// A cohort member: the lead's samplers and phases, its own stream.
			l := &out[c.lead-1]
			cc.smp, cc.phases, cc.rate, cc.arr, cc.windowed = l.smp, l.phases, l.rate, l.arr, l.windowed
		} else if err := compileSamplers(&cc, path, s.BaseDir); err != nil {
			return nil, err
		}
		switch {
		case c.Concurrency > 0:
			cc.kind = genUsers
			cc.thinkUs = c.ThinkTimeUs
		case c.MultiTurn != nil:
			cc.kind = genOpenSessions
			if c.ClosedLoop {
				cc.kind = genClosedSessions
			}
			cc.thinkUs = c.MultiTurn.ThinkTimeUs
			cc.maxRounds = c.MultiTurn.MaxRounds
			cc.accumulate = c.MultiTurn.ContextGrowth == ContextAccumulate
			cc.single = c.MultiTurn.SingleSession
		}
		if c.Concurrency == 0 && !shared {
			if cc.windowed = windowedClient(c); cc.windowed {
				var err *Error
				if cc.phases, err = compilePhases(c, path, rates[rateKey{c.Lifecycle, c.RateFraction}], &cc.smp, s.BaseDir); err != nil {
					return nil, err
				}
			} else {
				cc.rate = s.AggregateRate * c.RateFraction / totalFrac
				a, aerr := newArrivalSampler(c.Arrival, cc.rate)
				if aerr != nil {
					return nil, &Error{Path: path + ".arrival", Err: aerr}
				}
				cc.arr = a
			}
		}
		if s.RateRamp != nil && c.Concurrency == 0 {
			cc.ramp, cc.rampN, cc.frac = s.RateRamp, s.NumRequests, c.RateFraction/totalFrac
		}
		out[i] = cc
	}
	return out, nil
}

// compileSamplers builds a client's length samplers.
func compileSamplers(cc *compiledClient, path, baseDir string) *Error {
	c := cc.c
	var err *Error
	if cc.smp.in, err = newLengthSampler(path+".input_distribution", &c.Input, baseDir); err != nil {
		return err
	}
	if cc.smp.out, err = newLengthSampler(path+".output_distribution", &c.Output, baseDir); err != nil {
		return err
	}
	if c.ReasonRatio != nil {
		if cc.smp.ratio, err = newLengthSampler(path+".reasoning.reason_ratio_distribution", c.ReasonRatio, baseDir); err != nil {
			return err
		}
	}
	if c.Multimodal != nil {
		if cc.smp.mm, err = newMMSampler(c.Multimodal, path+".multimodal", baseDir); err != nil {
			return err
		}
	}
	return nil
}

// clientPath names client i in errors: clients[i], or the cohort it was
// expanded from.
func clientPath(c *Client, i int) string {
	if c.src != "" {
		return c.src
	}
	return fmt.Sprintf("clients[%d]", i)
}

// ContextGrowth is the trace header's session_context_growth: "accumulate"
// when any session accumulates context, else "".
func (w *Workload) ContextGrowth() string {
	for i := range w.clients {
		if w.clients[i].accumulate {
			return ContextAccumulate
		}
	}
	return ""
}

// Loop is "closed" when any request depends on a completion (closed-loop
// sessions or concurrency users), else "open" (trace header x_ext.loop).
func (w *Workload) Loop() string {
	if w.HasFollowUps() {
		return "closed"
	}
	return "open"
}

// HasFollowUps reports whether a Source of w creates requests from
// completions, i.e. whether the driver must call OnComplete and OnFailed.
func (w *Workload) HasFollowUps() bool {
	for i := range w.clients {
		if k := w.clients[i].kind; k == genClosedSessions || k == genUsers {
			return true
		}
	}
	return false
}

// HasSessions reports whether any request belongs to a session.
func (w *Workload) HasSessions() bool {
	for i := range w.clients {
		if w.clients[i].kind != genPlain {
			return true
		}
	}
	return false
}

// userStartUs is user u's first send time: u·think/n, computed without overflow.
func userStartUs(u, n int, thinkUs int64) int64 {
	if n <= 1 || thinkUs == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(u), uint64(thinkUs))
	q, _ := bits.Div64(hi, lo, uint64(n)) // hi < n since u < n
	return int64(q)
}

// satAdd adds two non-negative times, saturating far beyond any horizon.
func satAdd(a, b int64) int64 {
	if a > maxTimeUs-b {
		return maxTimeUs + 1
	}
	return a + b
}

// AtRate is the same workload at another total rate (requests/s): its
// aggregate_rate replaced, a rate ramp dropped. A live sweep sends one
// workload at several rates. Concurrency clients have no rate, and windows
// that give their own rates (aggregate_rate 0) cannot be scaled: both are
// errors.
func (w *Workload) AtRate(rate float64) (*Workload, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, &Error{Path: "aggregate_rate", Msg: fmt.Sprintf("%g must be finite and > 0", rate)}
	}
	for i := range w.Spec.Clients {
		if w.Spec.Clients[i].Concurrency > 0 {
			return nil, &Error{Path: clientPath(&w.Spec.Clients[i], i), Msg: "a concurrency client has no rate to set"}
		}
	}
	if w.Spec.AggregateRate == 0 {
		return nil, &Error{Path: "aggregate_rate", Msg: "0: the lifecycle windows give their own rates, which a rate cannot replace"}
	}
	s := w.Spec
	s.AggregateRate, s.RateRamp = rate, nil
	nw, err := New(s)
	if err != nil {
		return nil, err
	}
	nw.Name, nw.Warnings = w.Name, w.Warnings
	return nw, nil
}
