package workload

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// MaxConcurrency caps a client's virtual users.
const MaxConcurrency = 1_000_000

// Limits on session shape, so a spec cannot ask for unbounded memory.
const (
	maxRounds        = 1 << 30
	maxTimeUs        = int64(1) << 60
	gammaMinShape    = 0.01
	upgradeV1Warning = "version \"1\" upgraded to \"2\" (slo_class realtime -> critical, interactive -> standard)"
)

func validSLOClass(c string) bool {
	switch c {
	case "", "critical", "standard", "sheddable", "batch", "background":
		return true
	}
	return false
}

func validCategory(c string) bool {
	switch c {
	case "", "language", "multimodal", "reasoning":
		return true
	}
	return false
}

// upgradeClass renames v1 SLO classes.
func upgradeClass(c string) string {
	switch c {
	case "realtime":
		return "critical"
	case "interactive":
		return "standard"
	}
	return c
}

// fromRaw applies the version upgrade and the defaults of docs/workload.md §2–§8, checks
// what only the raw form can tell (presence of keys), then validates values.
func fromRaw(raw *rawSpec, pos *positions, baseDir string) (*Spec, []string, *Error) {
	var warn []string
	s := &Spec{Version: "2", Seed: DefaultSeed, Category: raw.Category, BaseDir: baseDir, pos: pos}
	v1 := false
	if raw.Version != nil {
		switch *raw.Version {
		case "", "2":
		case "1":
			v1 = true
			warn = append(warn, pos.where("version")+upgradeV1Warning)
		default:
			return nil, nil, &Error{Path: "version", Msg: fmt.Sprintf("unsupported version %q (want \"2\", or \"1\" to upgrade)", *raw.Version)}
		}
	}
	if raw.Seed != nil {
		s.Seed = *raw.Seed
	}
	if raw.AggregateRate != nil {
		s.AggregateRate = *raw.AggregateRate
	}
	if raw.NumRequests != nil {
		s.NumRequests = *raw.NumRequests
	}
	if raw.Horizon != nil {
		s.HorizonUs = *raw.Horizon
	}
	if len(raw.Goodput) > 0 {
		s.GoodputSLOTargets = map[string]SLOTarget{}
		for _, class := range slices.Sorted(maps.Keys(raw.Goodput)) {
			t := raw.Goodput[class]
			name := class
			if v1 {
				name = upgradeClass(class)
			}
			s.GoodputSLOTargets[name] = SLOTarget{TTFTMs: deref(t.TTFTMs), ITLMs: deref(t.ITLMs), E2EMs: deref(t.E2EMs)}
		}
	}
	for i := range raw.Clients {
		path := fmt.Sprintf("clients[%d]", i)
		c, w, err := decodeClient(&raw.Clients[i], path, pos, v1)
		if err != nil {
			return nil, nil, err
		}
		warn = append(warn, w...)
		s.Clients = append(s.Clients, c)
	}
	w, err := decodeSources(raw, s, pos, v1)
	if err != nil {
		return nil, nil, err
	}
	warn = append(warn, w...)
	if _, err := compileSpec(s); err != nil {
		return nil, nil, err
	}
	return s, warn, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// resolvePrefixLengths gives every client of a prefix group the group's
// length: the first client in spec order with a positive length wins, else 50.
func resolvePrefixLengths(clients []Client) {
	lengths := map[string]int{}
	for _, c := range clients {
		if c.PrefixGroup != "" && c.PrefixLength > 0 {
			if _, ok := lengths[c.PrefixGroup]; !ok {
				lengths[c.PrefixGroup] = c.PrefixLength
			}
		}
	}
	for i := range clients {
		c := &clients[i]
		switch {
		case c.PrefixGroup == "":
			c.PrefixLength = 0
		case lengths[c.PrefixGroup] > 0:
			c.PrefixLength = lengths[c.PrefixGroup]
		default:
			c.PrefixLength = DefaultPrefixLength
		}
	}
}

// checkSpec validates the values of a spec (whatever built it) and resolves
// prefix lengths in place: the spec's own keys, each client, then how the
// clients combine.
func checkSpec(s *Spec) *Error {
	if err := checkSpecKeys(s); err != nil {
		return err
	}
	mix, err := checkClients(s)
	if err != nil {
		return err
	}
	if err := checkMix(s, mix); err != nil {
		return err
	}
	resolvePrefixLengths(s.Clients)
	return nil
}

// checkSpecKeys validates the spec's own keys: version, category, bounds,
// the number of clients and the goodput SLO targets.
func checkSpecKeys(s *Spec) *Error {
	if s.Version != "2" {
		return &Error{Path: "version", Msg: fmt.Sprintf("unsupported version %q (want \"2\")", s.Version)}
	}
	if !validCategory(s.Category) {
		return &Error{Path: "category", Msg: fmt.Sprintf("unknown category %q (valid: language, multimodal, reasoning, or empty)", s.Category)}
	}
	if s.NumRequests < 0 {
		return &Error{Path: "num_requests", Msg: fmt.Sprintf("%d must be >= 0", s.NumRequests)}
	}
	if s.HorizonUs < 0 || s.HorizonUs > maxTimeUs {
		return &Error{Path: "horizon", Msg: fmt.Sprintf("%d out of range [0, %d]", s.HorizonUs, maxTimeUs)}
	}
	if len(s.Clients) == 0 {
		return &Error{Path: "clients", Msg: "at least one client, cohort or inference_perf block is required"}
	}
	if len(s.Clients) > MaxClients {
		return &Error{Path: "clients", Msg: fmt.Sprintf("%d clients; at most %d", len(s.Clients), MaxClients)}
	}
	for _, class := range slices.Sorted(maps.Keys(s.GoodputSLOTargets)) {
		p := "goodput_slo_targets." + class
		if class == "" || !validSLOClass(class) {
			return &Error{Path: p, Msg: fmt.Sprintf("unknown SLO class %q (valid: critical, standard, sheddable, batch, background)", class)}
		}
		t := s.GoodputSLOTargets[class]
		for _, v := range []struct {
			name string
			x    float64
		}{{"ttft_ms", t.TTFTMs}, {"itl_ms", t.ITLMs}, {"e2e_ms", t.E2EMs}} {
			if !(v.x >= 0) || math.IsInf(v.x, 0) {
				return &Error{Path: p + "." + v.name, Msg: fmt.Sprintf("%g must be finite and >= 0", v.x)}
			}
		}
	}
	return nil
}

// clientMix is what checkClients found about the clients together: whether
// one is rate-based, whether every rate-based one gives each window its own
// rate (absolute), and the first client with concurrency users, multi-turn
// sessions and an SLO class (-1: none).
type clientMix struct {
	rateBased, absolute             bool
	concurrency, multiTurn, classed int
}

// checkClients validates every client alone, and their ids together.
func checkClients(s *Spec) (clientMix, *Error) {
	m := clientMix{absolute: true, concurrency: -1, multiTurn: -1, classed: -1}
	ids := map[string]int{}
	checked := map[*Lifecycle]bool{}
	for i := range s.Clients {
		c := &s.Clients[i]
		path := clientPath(c, i)
		if lc := c.Lifecycle; lc != nil && !checked[lc] {
			checked[lc] = true
			if err := checkLifecycle(lc, path); err != nil {
				return m, err
			}
		}
		if c.Concurrency == 0 && !hasOwnRates(c) {
			m.absolute = false
		}
		if c.ID == "" {
			return m, &Error{Path: path, Msg: "id is required"}
		}
		if j, dup := ids[c.ID]; dup {
			return m, &Error{Path: path + ".id", Msg: fmt.Sprintf("duplicate client id %q (also %s)", c.ID, clientPath(&s.Clients[j], j))}
		}
		ids[c.ID] = i
		if !validSLOClass(c.SLOClass) {
			return m, &Error{Path: path + ".slo_class", Msg: fmt.Sprintf("unknown SLO class %q (valid: critical, standard, sheddable, batch, background, or empty)", c.SLOClass)}
		}
		if c.SLOClass != "" && m.classed < 0 {
			m.classed = i
		}
		for _, v := range []struct {
			name string
			x    int64
		}{{"think_time_us", c.ThinkTimeUs}, {"timeout", c.TimeoutUs}, {"slo_target_us", c.SLOTargetUs}} {
			if v.x < 0 || v.x > maxTimeUs {
				return m, &Error{Path: path + "." + v.name, Msg: fmt.Sprintf("%d out of range [0, %d]", v.x, maxTimeUs)}
			}
		}
		if c.Concurrency < 0 || c.Concurrency > MaxConcurrency {
			return m, &Error{Path: path + ".concurrency", Msg: fmt.Sprintf("%d out of range [0, %d]", c.Concurrency, MaxConcurrency)}
		}
		if c.Concurrency > 0 {
			if m.concurrency < 0 {
				m.concurrency = i
			}
			if c.RateFraction != 0 {
				return m, &Error{Path: path + ".rate_fraction", Msg: "concurrency and rate_fraction are mutually exclusive"}
			}
		} else {
			m.rateBased = true
			if !(c.RateFraction > 0) || math.IsInf(c.RateFraction, 0) {
				return m, &Error{Path: path + ".rate_fraction", Msg: fmt.Sprintf("%g must be finite and > 0", c.RateFraction)}
			}
			if err := checkArrival(path+".arrival", &c.Arrival); err != nil {
				return m, err
			}
		}
		if c.PrefixLength < 0 || c.PrefixLength > MaxSampleTokens {
			return m, &Error{Path: path + ".prefix_length", Msg: fmt.Sprintf("%d out of range [0, %d]", c.PrefixLength, MaxSampleTokens)}
		}
		if c.MultiTurn != nil && m.multiTurn < 0 {
			m.multiTurn = i
		}
		if err := checkMultiTurn(c, path+".reasoning.multi_turn"); err != nil {
			return m, err
		}
	}
	return m, nil
}

// checkMultiTurn validates a client's multi-turn sessions, if it has them.
func checkMultiTurn(c *Client, mp string) *Error {
	mt := c.MultiTurn
	if mt == nil {
		return nil
	}
	if c.Concurrency > 0 {
		return &Error{Path: mp, Msg: "a concurrency client cannot have multi-turn sessions"}
	}
	if mt.MaxRounds < 1 || mt.MaxRounds > maxRounds {
		return &Error{Path: mp + ".max_rounds", Msg: fmt.Sprintf("%d out of range [1, %d]", mt.MaxRounds, maxRounds)}
	}
	if mt.ThinkTimeUs < 0 || mt.ThinkTimeUs > maxTimeUs {
		return &Error{Path: mp + ".think_time_us", Msg: fmt.Sprintf("%d out of range [0, %d]", mt.ThinkTimeUs, maxTimeUs)}
	}
	if mt.ContextGrowth != "" && mt.ContextGrowth != ContextAccumulate {
		return &Error{Path: mp + ".context_growth", Msg: fmt.Sprintf("unknown value %q (valid: accumulate, or empty)", mt.ContextGrowth)}
	}
	return nil
}

// checkMix validates how the clients combine: SLO classes all or none,
// concurrency and multi-turn clients apart, the aggregate rate, the ramp.
func checkMix(s *Spec, m clientMix) *Error {
	if m.classed >= 0 {
		for i := range s.Clients {
			if s.Clients[i].SLOClass == "" {
				return &Error{Path: clientPath(&s.Clients[i], i) + ".slo_class", Msg: fmt.Sprintf("missing: %s sets slo_class %q, so every client must set one", clientPath(&s.Clients[m.classed], m.classed), s.Clients[m.classed].SLOClass)}
			}
		}
	}
	if m.concurrency >= 0 && m.multiTurn >= 0 {
		return &Error{Path: clientPath(&s.Clients[max(m.concurrency, m.multiTurn)], max(m.concurrency, m.multiTurn)), Msg: fmt.Sprintf("concurrency clients (%s) and multi-turn clients (%s) cannot be mixed in one spec: their shared follow-up budget cannot account for both",
			clientPath(&s.Clients[m.concurrency], m.concurrency), clientPath(&s.Clients[m.multiTurn], m.multiTurn))}
	}
	switch {
	case !m.rateBased:
	case s.AggregateRate == 0 && m.absolute:
		// Absolute mode: every window carries its own rate.
	case s.AggregateRate == 0:
		return &Error{Path: "aggregate_rate", Msg: "required (> 0) when a client is rate-based (0 only when every rate-based client's every lifecycle window gives trace_rate)"}
	case !(s.AggregateRate > 0) || math.IsInf(s.AggregateRate, 0):
		return &Error{Path: "aggregate_rate", Msg: fmt.Sprintf("%g must be finite and > 0", s.AggregateRate)}
	}
	if r := s.RateRamp; r != nil {
		if err := checkRamp(r, "rate_ramp"); err != nil {
			return err
		}
		switch {
		case s.NumRequests == 0:
			return &Error{Path: "rate_ramp", Msg: "needs num_requests: the ramp runs over them"}
		case !m.rateBased:
			return &Error{Path: "rate_ramp", Msg: "needs a rate-based client"}
		case s.AggregateRate != r.StartRPS:
			return &Error{Path: "rate_ramp", Msg: fmt.Sprintf("aggregate_rate %g must be the ramp's start_rps %g", s.AggregateRate, r.StartRPS)}
		}
		for i := range s.Clients {
			if windowedClient(&s.Clients[i]) {
				return &Error{Path: clientPath(&s.Clients[i], i) + ".lifecycle", Msg: "a rate ramp and lifecycle windows cannot be combined"}
			}
		}
	}
	return nil
}

// checkArrival validates an arrival process (docs/workload.md §4).
func checkArrival(path string, a *Arrival) *Error {
	for _, p := range []struct {
		name string
		x    float64
	}{{"cv", a.CV}, {"shape", a.Shape}, {"scale", a.Scale}} {
		if p.x < 0 || math.IsNaN(p.x) || math.IsInf(p.x, 0) {
			return &Error{Path: path + "." + p.name, Msg: fmt.Sprintf("%g must be finite and > 0", p.x)}
		}
	}
	switch a.Process {
	case ProcessPoisson, ProcessConstant:
		return nil
	case ProcessGamma, ProcessWeibull:
	case "":
		return &Error{Path: path + ".process", Msg: "missing (valid: constant, gamma, poisson, weibull)"}
	default:
		return &Error{Path: path + ".process", Msg: fmt.Sprintf("unknown arrival process %q (valid: constant, gamma, poisson, weibull)", a.Process)}
	}
	if (a.Shape > 0) != (a.Scale > 0) {
		missing := "scale"
		if a.Scale > 0 {
			missing = "shape"
		}
		return &Error{Path: path, Msg: fmt.Sprintf("shape and scale go together: %s is missing", missing)}
	}
	if a.Shape > 0 && a.CV > 0 {
		return &Error{Path: path + ".cv", Msg: "cv excludes shape and scale"}
	}
	if a.Process == ProcessGamma {
		if a.CV > gammaMaxCV {
			return &Error{Path: path + ".cv", Msg: fmt.Sprintf("%g out of range (0, %g]", a.CV, gammaMaxCV)}
		}
		if a.Shape > 0 && a.Shape < gammaMinShape {
			return &Error{Path: path + ".shape", Msg: fmt.Sprintf("%g out of range [%g, +Inf)", a.Shape, gammaMinShape)}
		}
		return nil
	}
	if a.CV > 0 && (a.CV < weibullMinCV || a.CV > weibullMaxCV) {
		return &Error{Path: path + ".cv", Msg: fmt.Sprintf("%g out of range [%g, %g]", a.CV, weibullMinCV, weibullMaxCV)}
	}
	return nil
}

// hasOwnRates reports whether every window of c gives its own trace_rate
// (so c may run without aggregate_rate).
func hasOwnRates(c *Client) bool {
	if !windowedClient(c) {
		return false
	}
	for _, w := range c.Lifecycle.Windows {
		if w.TraceRate == nil {
			return false
		}
	}
	return true
}
