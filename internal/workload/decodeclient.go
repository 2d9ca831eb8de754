package workload

import (
	"fmt"
	"math"
)

// decodeClient applies the defaults of docs/workload.md to one raw client
// (or cohort, made into a client first) at path, and checks what only the
// raw form can tell (presence of keys): its load, its requests, then its
// sessions and lifetime. v1 upgrades SLO class names.
func decodeClient(rc *rawClient, path string, pos *positions, v1 bool) (Client, []string, *Error) {
	c := Client{
		ID: rc.ID, TenantID: rc.TenantID, SLOClass: rc.SLOClass, Model: rc.Model,
		RateFraction: deref(rc.RateFraction), ThinkTimeUs: deref(rc.ThinkTimeUs),
		PrefixGroup: rc.PrefixGroup, Streaming: rc.Streaming, SLOTargetUs: deref(rc.SLOTargetUs),
	}
	if v1 {
		c.SLOClass = upgradeClass(c.SLOClass)
	}
	var warn []string
	for _, step := range []func(*rawClient, *Client, string, *positions) ([]string, *Error){
		decodeClientLoad, decodeClientRequests, decodeClientSessions,
	} {
		w, err := step(rc, &c, path, pos)
		warn = append(warn, w...)
		if err != nil {
			return c, warn, err
		}
	}
	return c, warn, nil
}

// decodeClientLoad reads how a client sends: concurrency users, or a rate
// fraction on an arrival process.
func decodeClientLoad(rc *rawClient, c *Client, path string, pos *positions) ([]string, *Error) {
	var warn []string
	if rc.Concurrency != nil {
		n := *rc.Concurrency
		if n < 0 || n > MaxConcurrency {
			return warn, &Error{Path: path + ".concurrency", Msg: fmt.Sprintf("%d out of range [0, %d]", n, MaxConcurrency)}
		}
		c.Concurrency = int(n)
	}
	if c.Concurrency > 0 {
		if rc.RateFraction != nil && *rc.RateFraction != 0 {
			return warn, &Error{Path: path + ".rate_fraction", Msg: "concurrency and rate_fraction are mutually exclusive"}
		}
		if rc.Arrival != nil {
			warn = append(warn, pos.where(path+".arrival")+"ignored: concurrency clients send when a user is ready, not on an arrival process")
		}
	} else {
		if rc.RateFraction == nil {
			return warn, &Error{Path: path, Msg: "rate_fraction is required unless concurrency > 0"}
		}
		if rc.Arrival == nil {
			return warn, &Error{Path: path, Msg: "arrival is required for a rate-based client"}
		}
		if rc.ThinkTimeUs != nil && *rc.ThinkTimeUs != 0 {
			warn = append(warn, pos.where(path+".think_time_us")+"ignored: think_time_us is used by concurrency clients (sessions use reasoning.multi_turn.think_time_us)")
		}
	}
	if rc.Arrival != nil && c.Concurrency == 0 {
		a, w, err := decodeArrival(rc.Arrival, path+".arrival", pos)
		if err != nil {
			return warn, err
		}
		c.Arrival, warn = a, append(warn, w...)
	}
	return warn, nil
}

// decodeClientRequests reads what a client's requests hold: input and
// output lengths, a shared prefix, reasoning and multi-turn sessions.
func decodeClientRequests(rc *rawClient, c *Client, path string, pos *positions) ([]string, *Error) {
	var warn []string
	if rc.InputDist == nil {
		return warn, &Error{Path: path, Msg: "input_distribution is required"}
	}
	if rc.OutputDist == nil {
		return warn, &Error{Path: path, Msg: "output_distribution is required"}
	}
	c.Input = Distribution{Type: rc.InputDist.Type, Params: rc.InputDist.Params, File: rc.InputDist.File}
	c.Output = Distribution{Type: rc.OutputDist.Type, Params: rc.OutputDist.Params, File: rc.OutputDist.File}
	if rc.PrefixLength != nil {
		n := *rc.PrefixLength
		if n < 0 || n > MaxSampleTokens {
			return warn, &Error{Path: path + ".prefix_length", Msg: fmt.Sprintf("%d out of range [0, %d]", n, MaxSampleTokens)}
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
				return warn, &Error{Path: mp, Msg: "max_rounds is required"}
			}
			if *mt.MaxRounds < 1 || *mt.MaxRounds > maxRounds {
				return warn, &Error{Path: mp + ".max_rounds", Msg: fmt.Sprintf("%d out of range [1, %d]", *mt.MaxRounds, maxRounds)}
			}
			c.MultiTurn = &MultiTurn{MaxRounds: int(*mt.MaxRounds), ThinkTimeUs: deref(mt.ThinkTimeUs),
				ContextGrowth: mt.ContextGrowth, SingleSession: mt.SingleSession}
		}
	}
	return warn, nil
}

// decodeClientSessions reads the rest: closed loop, timeout, network,
// lifecycle windows and multimodal parts.
func decodeClientSessions(rc *rawClient, c *Client, path string, pos *positions) ([]string, *Error) {
	var warn []string
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
				return warn, &Error{Path: path + ".network." + p.name, Msg: fmt.Sprintf("%g must be finite and >= 0", *p.v)}
			}
		}
		warn = append(warn, pos.where(path+".network")+"accepted and ignored: the simulator does not model client networks")
	}
	if rc.Lifecycle != nil && c.Concurrency > 0 {
		warn = append(warn, pos.where(path+".lifecycle")+"ignored: concurrency users are always on")
	} else if rc.Lifecycle != nil {
		lc, w, err := decodeLifecycle(rc.Lifecycle, path+".lifecycle", pos)
		if err != nil {
			return warn, err
		}
		c.Lifecycle, warn = lc, append(warn, w...)
	}
	if rc.Multimodal != nil {
		c.Multimodal = decodeMultimodal(rc.Multimodal)
	}
	return warn, nil
}

// decodeArrival reads an arrival block at path (docs/workload.md §4).
func decodeArrival(a *rawArrival, path string, pos *positions) (Arrival, []string, *Error) {
	var warn []string
	out := Arrival{Process: a.Process, CV: deref(a.CV), Shape: deref(a.Shape), Scale: deref(a.Scale)}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"cv", a.CV}, {"shape", a.Shape}, {"scale", a.Scale}} {
		if p.v != nil && !(*p.v > 0) || p.v != nil && math.IsInf(*p.v, 0) {
			return out, nil, &Error{Path: path + "." + p.name, Msg: fmt.Sprintf("%g must be finite and > 0", *p.v)}
		}
	}
	if (a.Process == ProcessPoisson || a.Process == ProcessConstant) && (a.CV != nil || a.Shape != nil || a.Scale != nil) {
		warn = append(warn, pos.where(path)+"cv, shape and scale are ignored by the "+a.Process+" process")
		out.CV, out.Shape, out.Scale = 0, 0, 0
	}
	return out, warn, nil
}

// distOf is the Distribution of a raw block (nil stays nil).
func distOf(d *rawDist) *Distribution {
	if d == nil {
		return nil
	}
	return &Distribution{Type: d.Type, Params: d.Params, File: d.File}
}
