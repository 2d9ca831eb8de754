package sim

import (
	"errors"
	"fmt"

	"servesim/internal/des"
	"servesim/internal/des/instance"
)

// Client describes the load generator that sent the requests, as far as it
// shapes when they reach the server (docs/simulator.md §13). The zero value is an
// open loop: every request is sent at its arrival.
//
// A capped client (`observe --max-concurrency N`, BLIS observe's default
// 256, `vllm bench serve --max-concurrency`) keeps at most N requests in
// flight: a request arrives at its intended time, waits in the client's
// queue while N are in flight, and is sent when one of them ends. Once the
// server falls behind, the run is a closed loop whose sends follow the
// server's completions, so it must be replayed as one.
type Client struct {
	// MaxConcurrency is the cap on requests in flight; 0 = none.
	MaxConcurrency int
	// SendGapUs is the client's own delay from a request's end (its last
	// byte at the client) to the send of the request waiting for that slot.
	SendGapUs int64
}

// MaxClientConcurrency bounds Client.MaxConcurrency: a client cannot hold
// more requests in flight than it has sockets (and the gate's queue is
// sized from it).
const MaxClientConcurrency = 1 << 24

// MaxSendGapUs bounds Client.SendGapUs (one minute).
const MaxSendGapUs = 60_000_000

// Validate checks the bounds.
func (c Client) Validate() error {
	switch {
	case c.MaxConcurrency < 0 || c.MaxConcurrency > MaxClientConcurrency:
		return fmt.Errorf("client max concurrency %d is outside [0, %d] (0 = no cap)", c.MaxConcurrency, MaxClientConcurrency)
	case c.SendGapUs < 0 || c.SendGapUs > MaxSendGapUs:
		return fmt.Errorf("client send gap %d µs is outside [0, %d]", c.SendGapUs, MaxSendGapUs)
	}
	return nil
}

// Capped reports whether the client limits requests in flight.
func (c Client) Capped() bool { return c.MaxConcurrency > 0 }

// Gate is a capped client between the arrivals and the server. Requests are
// sent in arrival order (its queue is FIFO); a held request's ArrivalUs is
// moved to its send time, since every latency the client measures starts at
// the send (docs/tracev2.md §4.2: TTFT = first chunk − send), and its deadline
// with it, keeping its budget (a client's timeout starts at the send).
type Gate struct {
	cfg      Client
	send     func(now int64, r *instance.Request)
	schedule func(at int64, act des.Action, r *instance.Request)
	// onEvent, if set, runs first in each of the gate's events (a cluster
	// drops the event from its list of pending cluster events).
	onEvent  func()
	inFlight int
	// held is a FIFO: held[head:rel] have a slot and wait out the send
	// gap, held[rel:] wait for a slot.
	held                []*instance.Request
	head, rel           int
	releaseAct, sendAct des.Action
	sentHeld            int64 // requests sent after waiting in the queue
}

// NewGate builds the gate of a capped client: send delivers a request to
// the server path at now, schedule puts one of the gate's events on the
// engine, and onEvent (optional) runs first in each of them (a cluster
// keeps a list of its pending events for the instances' fast-forward bound).
func NewGate(cfg Client, send func(now int64, r *instance.Request),
	schedule func(at int64, act des.Action, r *instance.Request), onEvent func()) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Capped() {
		return nil, errors.New("sim: a client gate needs a cap")
	}
	g := &Gate{cfg: cfg, send: send, schedule: schedule, onEvent: onEvent}
	g.releaseAct, g.sendAct = g.onRelease, g.onSend
	return g, nil
}

// Arrive takes r at its arrival: sent at once while a slot is free, else
// held.
func (g *Gate) Arrive(now int64, r *instance.Request) {
	if g.inFlight < g.cfg.MaxConcurrency {
		g.inFlight++
		g.send(now, r)
		return
	}
	if g.head > 0 && (g.head == len(g.held) || g.head > 1024 && 2*g.head > len(g.held)) {
		// Drop the sent prefix so a queue that never empties stays as
		// long as what it holds.
		n := copy(g.held, g.held[g.head:])
		clear(g.held[n:])
		g.held, g.rel, g.head = g.held[:n], g.rel-g.head, 0
	}
	g.held = append(g.held, r)
}

// Done is told that r became terminal at the server at res.DoneUs (engine
// time); its slot frees when the client sees its end: the last byte of a
// completed request (arrival + E2E, which includes the per-token and end
// overheads), else now.
func (g *Gate) Done(res *instance.Result, r *instance.Request) {
	at := res.DoneUs
	if res.Status == instance.StatusCompleted && res.E2EUs >= 0 {
		at = max(at, res.ArrivalUs+res.E2EUs)
	}
	g.schedule(at, g.releaseAct, nil)
}

// onRelease frees a slot; the oldest held request takes it and is sent
// after the client's send gap.
func (g *Gate) onRelease(now int64, _ any) {
	if g.onEvent != nil {
		g.onEvent()
	}
	g.inFlight--
	if g.rel == len(g.held) {
		return
	}
	r := g.held[g.rel]
	g.rel++
	g.inFlight++
	g.sentHeld++
	sendAt := now + g.cfg.SendGapUs
	if r.DeadlineUs > 0 {
		// The client's timeout runs from the send, as an HTTP client's
		// does (observe's): the wait in its own queue does not count.
		r.DeadlineUs += sendAt - r.ArrivalUs
	}
	r.ArrivalUs = sendAt
	if g.cfg.SendGapUs == 0 {
		g.sendHead(now, r)
		return
	}
	g.schedule(r.ArrivalUs, g.sendAct, r)
}

// onSend sends the oldest request whose send gap has run out: slots free
// at non-decreasing times and every gap is the same, so sends keep the
// queue's order.
func (g *Gate) onSend(now int64, data any) {
	if g.onEvent != nil {
		g.onEvent()
	}
	g.sendHead(now, data.(*instance.Request))
}

func (g *Gate) sendHead(now int64, r *instance.Request) {
	if g.held[g.head] != r {
		panic("sim: client sends out of order")
	}
	g.held[g.head] = nil
	g.head++
	g.send(now, r)
}

// SentAfterWaiting is the number of requests that waited for a slot.
func (g *Gate) SentAfterWaiting() int64 { return g.sentHeld }

// Unsent hands out the requests still held at the end of the run (a
// horizon cut them off), oldest first; their status stays new.
func (g *Gate) Unsent(fn func(res *instance.Result, r *instance.Request)) {
	for _, r := range g.held[g.head:] {
		res := instance.Unrouted(r)
		fn(&res, r)
	}
	g.held, g.head, g.rel = nil, 0, 0
}
