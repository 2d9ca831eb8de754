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

// fromRaw applies the version upgrade and the defaults of §2–§8, checks
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
		rc := &raw.Clients[i]
		path := fmt.Sprintf("clients[%d]", i)
		c := Client{
			ID: rc.ID, TenantID: rc.TenantID, SLOClass: rc.SLOClass, Model: rc.Model,
			RateFraction: deref(rc.RateFraction), ThinkTimeUs: deref(rc.ThinkTimeUs),
			PrefixGroup: rc.PrefixGroup, Streaming: rc.Streaming, SLOTargetUs: deref(rc.SLOTargetUs),
		}
		if v1 {
			c.SLOClass = upgradeClass(c.SLOClass)
		}
		if rc.Concurrency != nil {
			n := *rc.Concurrency
			if n < 0 || n > MaxConcurrency {
				return nil, nil, &Error{Path: path + ".concurrency", Msg: fmt.Sprintf("%d out of range [0, %d]", n, MaxConcurrency)}
			}
			c.Concurrency = int(n)
		}
		if c.Concurrency > 0 {
			if rc.RateFraction != nil && *rc.RateFraction != 0 {
				return nil, nil, &Error{Path: path + ".rate_fraction", Msg: "concurrency and rate_fraction are mutually exclusive"}
			}
			if rc.Arrival != nil {
				warn = append(warn, pos.where(path+".arrival")+"ignored: concurrency clients send when a user is ready, not on an arrival process")
			}
		} else {
			if rc.RateFraction == nil {
				return nil, nil, &Error{Path: path, Msg: "rate_fraction is required unless concurrency > 0"}
			}
			if rc.Arrival == nil {
				return nil, nil, &Error{Path: path, Msg: "arrival is required for a rate-based client"}
			}
			if rc.ThinkTimeUs != nil && *rc.ThinkTimeUs != 0 {
				warn = append(warn, pos.where(path+".think_time_us")+"ignored: think_time_us is used by concurrency clients (sessions use reasoning.multi_turn.think_time_us)")
			}
		}
		if rc.Arrival != nil && c.Concurrency == 0 {
			a := rc.Arrival
			c.Arrival = Arrival{Process: a.Process, CV: deref(a.CV), Shape: deref(a.Shape), Scale: deref(a.Scale)}
			ap := path + ".arrival"
			for _, p := range []struct {
				name string
				v    *float64
			}{{"cv", a.CV}, {"shape", a.Shape}, {"scale", a.Scale}} {
				if p.v != nil && !(*p.v > 0) || p.v != nil && math.IsInf(*p.v, 0) {
					return nil, nil, &Error{Path: ap + "." + p.name, Msg: fmt.Sprintf("%g must be finite and > 0", *p.v)}
				}
			}
			if (a.Process == ProcessPoisson || a.Process == ProcessConstant) && (a.CV != nil || a.Shape != nil || a.Scale != nil) {
				warn = append(warn, pos.where(ap)+"cv, shape and scale are ignored by the "+a.Process+" process")
				c.Arrival.CV, c.Arrival.Shape, c.Arrival.Scale = 0, 0, 0
			}
		}
		if rc.InputDist == nil {
			return nil, nil, &Error{Path: path, Msg: "input_distribution is required"}
		}
		if rc.OutputDist == nil {
			return nil, nil, &Error{Path: path, Msg: "output_distribution is required"}
		}
		c.Input = Distribution{Type: rc.InputDist.Type, Params: rc.InputDist.Params, File: rc.InputDist.File}
		c.Output = Distribution{Type: rc.OutputDist.Type, Params: rc.OutputDist.Params, File: rc.OutputDist.File}
		if rc.PrefixLength != nil {
			n := *rc.PrefixLength
			if n < 0 || n > MaxSampleTokens {
				return nil, nil, &Error{Path: path + ".prefix_length", Msg: fmt.Sprintf("%d out of range [0, %d]", n, MaxSampleTokens)}
			}
			if c.PrefixGroup == "" && n > 0 {
				warn = append(warn, pos.where(path+".prefix_length")+"ignored: no prefix_group")
			} else {
				c.PrefixLength = int(n)
			}
		}
		if r := rc.Reasoning; r != nil {
			if r.ReasonRatio != nil && r.ReasonRatio.Type != "" {
				c.ReasonRatio = &Distribution{Type: r.ReasonRatio.Type, Params: r.ReasonRatio.Params, File: r.ReasonRatio.File}
			}
			if mt := r.MultiTurn; mt != nil {
				mp := path + ".reasoning.multi_turn"
				if mt.MaxRounds == nil {
					return nil, nil, &Error{Path: mp, Msg: "max_rounds is required"}
				}
				if *mt.MaxRounds < 1 || *mt.MaxRounds > maxRounds {
					return nil, nil, &Error{Path: mp + ".max_rounds", Msg: fmt.Sprintf("%d out of range [1, %d]", *mt.MaxRounds, maxRounds)}
				}
				c.MultiTurn = &MultiTurn{MaxRounds: int(*mt.MaxRounds), ThinkTimeUs: deref(mt.ThinkTimeUs),
					ContextGrowth: mt.ContextGrowth, SingleSession: mt.SingleSession}
			}
		}
		c.ClosedLoop = c.MultiTurn != nil
		if rc.ClosedLoop != nil {
			c.ClosedLoop = *rc.ClosedLoop
		}
		switch {
		case rc.Timeout != nil:
			c.TimeoutUs = *rc.Timeout
		case c.MultiTurn != nil || c.ClosedLoop || c.Concurrency > 0:
			c.TimeoutUs = DefaultTimeoutUs
		}
		if n := rc.Network; n != nil {
			for _, p := range []struct {
				name string
				v    *float64
			}{{"rtt_ms", n.RTTMs}, {"bandwidth_mbps", n.BandwidthMbps}} {
				if p.v != nil && !(*p.v >= 0 && !math.IsInf(*p.v, 0)) {
					return nil, nil, &Error{Path: path + ".network." + p.name, Msg: fmt.Sprintf("%g must be finite and >= 0", *p.v)}
				}
			}
			warn = append(warn, pos.where(path+".network")+"accepted and ignored: the simulator does not model client networks")
		}
		s.Clients = append(s.Clients, c)
	}
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
// prefix lengths in place.
func checkSpec(s *Spec) *Error {
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
		return &Error{Path: "clients", Msg: "at least one client is required"}
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
	rateBased, concurrency, multiTurn := false, -1, -1
	ids := map[string]int{}
	classed := -1
	for i := range s.Clients {
		c := &s.Clients[i]
		path := fmt.Sprintf("clients[%d]", i)
		if c.ID == "" {
			return &Error{Path: path, Msg: "id is required"}
		}
		if j, dup := ids[c.ID]; dup {
			return &Error{Path: path + ".id", Msg: fmt.Sprintf("duplicate client id %q (also clients[%d])", c.ID, j)}
		}
		ids[c.ID] = i
		if !validSLOClass(c.SLOClass) {
			return &Error{Path: path + ".slo_class", Msg: fmt.Sprintf("unknown SLO class %q (valid: critical, standard, sheddable, batch, background, or empty)", c.SLOClass)}
		}
		if c.SLOClass != "" && classed < 0 {
			classed = i
		}
		for _, v := range []struct {
			name string
			x    int64
		}{{"think_time_us", c.ThinkTimeUs}, {"timeout", c.TimeoutUs}, {"slo_target_us", c.SLOTargetUs}} {
			if v.x < 0 || v.x > maxTimeUs {
				return &Error{Path: path + "." + v.name, Msg: fmt.Sprintf("%d out of range [0, %d]", v.x, maxTimeUs)}
			}
		}
		if c.Concurrency < 0 || c.Concurrency > MaxConcurrency {
			return &Error{Path: path + ".concurrency", Msg: fmt.Sprintf("%d out of range [0, %d]", c.Concurrency, MaxConcurrency)}
		}
		if c.Concurrency > 0 {
			if concurrency < 0 {
				concurrency = i
			}
			if c.RateFraction != 0 {
				return &Error{Path: path + ".rate_fraction", Msg: "concurrency and rate_fraction are mutually exclusive"}
			}
		} else {
			rateBased = true
			if !(c.RateFraction > 0) || math.IsInf(c.RateFraction, 0) {
				return &Error{Path: path + ".rate_fraction", Msg: fmt.Sprintf("%g must be finite and > 0", c.RateFraction)}
			}
			if err := checkArrival(path+".arrival", &c.Arrival); err != nil {
				return err
			}
		}
		if c.PrefixLength < 0 || c.PrefixLength > MaxSampleTokens {
			return &Error{Path: path + ".prefix_length", Msg: fmt.Sprintf("%d out of range [0, %d]", c.PrefixLength, MaxSampleTokens)}
		}
		if mt := c.MultiTurn; mt != nil {
			mp := path + ".reasoning.multi_turn"
			if multiTurn < 0 {
				multiTurn = i
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
		}
	}
	if classed >= 0 {
		for i := range s.Clients {
			if s.Clients[i].SLOClass == "" {
				return &Error{Path: fmt.Sprintf("clients[%d].slo_class", i), Msg: fmt.Sprintf("missing: clients[%d] sets slo_class %q, so every client must set one", classed, s.Clients[classed].SLOClass)}
			}
		}
	}
	if concurrency >= 0 && multiTurn >= 0 {
		return &Error{Path: fmt.Sprintf("clients[%d]", max(concurrency, multiTurn)), Msg: fmt.Sprintf("concurrency clients (clients[%d]) and multi-turn clients (clients[%d]) cannot be mixed in one spec: their shared follow-up budget cannot account for both", concurrency, multiTurn)}
	}
	if rateBased && (!(s.AggregateRate > 0) || math.IsInf(s.AggregateRate, 0)) {
		if s.AggregateRate == 0 {
			return &Error{Path: "aggregate_rate", Msg: "required (> 0) when a client is rate-based"}
		}
		return &Error{Path: "aggregate_rate", Msg: fmt.Sprintf("%g must be finite and > 0", s.AggregateRate)}
	}
	resolvePrefixLengths(s.Clients)
	return nil
}

// checkArrival validates an arrival process (workload.md §4).
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
