package workload

import "servesim/internal/tracev2"

// Client is the client a workload describes, as a trace header's
// x_ext.client states it, all of it declared: its closed-loop users and their think time (when they share one), the
// arrival process and aggregate rate of its open-loop clients, whether its
// requests stream, and whether later session rounds follow completions
// (session mode closed-loop) or not (fixed).
func (w *Workload) Client() tracev2.Client {
	var c tracev2.Client
	think := map[int64]bool{}
	arrivals := map[string]bool{}
	streams := map[bool]bool{}
	for _, cl := range w.Spec.Clients {
		streams[cl.Streaming] = true
		if cl.Concurrency > 0 {
			c.Users += cl.Concurrency
			think[cl.ThinkTimeUs] = true
			continue
		}
		arrivals[cl.Arrival.Process] = true
	}
	if len(think) == 1 {
		for t := range think {
			c.ThinkTimeUs = t
		}
	}
	switch len(arrivals) {
	case 0:
	case 1:
		for a := range arrivals {
			c.Arrival = a
		}
		c.RateRPS = w.Spec.AggregateRate
	default:
		c.Arrival, c.RateRPS = "mixed", w.Spec.AggregateRate
	}
	c.SessionMode = tracev2.SessionFixed
	if w.HasFollowUps() {
		c.SessionMode = tracev2.SessionClosedLoop
	}
	switch {
	case streams[true] && streams[false]:
		c.Streaming = "mixed"
	case streams[true]:
		c.Streaming = "all"
	case streams[false]:
		c.Streaming = "none"
	}
	return c
}
