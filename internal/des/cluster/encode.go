package cluster

import (
	"servesim/internal/des"
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// Encode configures the encode pool (docs/simulator.md §12): an admitted
// request with media tokens first has them encoded, in one pass, on one of
// Instances encoders, then is routed as any other. An encoder runs one pass
// at a time, in arrival order; the request goes to the encoder free first
// (the lowest index among equals).
type Encode struct {
	Instances int
	// MaxTokens is the most media tokens one pass takes (0 = no bound): a
	// request with more finds no encoder that can take it and is rejected
	// at the encode stage (encode_routing_rejections).
	MaxTokens int
	// Latency times a pass as the prefill of the media tokens.
	Latency latency.Model
}

func (e Encode) on() bool { return e.Instances > 0 }

type encodeState struct {
	c        *Cluster
	cfg      Encode
	busy     []int64 // when each encoder finishes its last pass
	act      des.Action
	rejected int64
	encoded  int64
	busyUs   int64
	step     latency.Step
	work     [1]latency.PrefillWork
}

func newEncode(c *Cluster, cfg Encode) *encodeState {
	e := &encodeState{c: c, cfg: cfg, busy: make([]int64, cfg.Instances)}
	e.act = e.onEncoded
	return e
}

// admit takes r at its admission if it has media to encode; false sends
// it on to routing at once.
func (e *encodeState) admit(now int64, r *instance.Request) bool {
	if r.MediaTokens <= 0 {
		return false
	}
	c := e.c
	if e.cfg.MaxTokens > 0 && r.MediaTokens > e.cfg.MaxTokens {
		res := instance.Reject(r, now)
		res.EncodeRejected = true
		e.rejected++
		if c.cfg.Observer != nil {
			c.cfg.Observer.Refused(now, r, "encode-rejected")
		}
		c.finish(&res, r)
		return true
	}
	k := 0
	for i, t := range e.busy {
		if t < e.busy[k] {
			k = i
		}
	}
	e.work[0] = latency.PrefillWork{NewTokens: r.MediaTokens}
	e.step = latency.Step{Prefill: e.work[:]}
	dur := e.cfg.Latency.StepTime(&e.step)
	start := max(now, e.busy[k])
	e.busy[k] = start + dur
	e.busyUs += dur
	c.transit[r] = struct{}{}
	c.scheduleCluster(start+dur, des.PrioRouting, e.act, r)
	return true
}

// onEncoded routes a request whose media are encoded.
func (e *encodeState) onEncoded(now int64, data any) {
	c := e.c
	c.cev.Pop()
	r := data.(*instance.Request)
	delete(c.transit, r)
	e.encoded++
	c.route(now, r)
}
