package des

import (
	"fmt"
	"math"
)

// Event priorities (docs/simulator.md §2). At equal times a smaller priority
// runs first, so every cluster decision at time t sees instance state before
// any step at t. Ties of (time, priority) run in scheduling order.
const (
	PrioArrival         = 0 // request enters the cluster
	PrioAdmission       = 1 // admission decision
	PrioRouting         = 2 // routing decision
	PrioTransferDone    = 3 // P/D KV transfer finished
	PrioInstanceArrival = 4 // request reaches an instance
	PrioQueued          = 5 // enqueue guards
	PrioStep            = 6 // the step cycle
	PrioObserve         = 7 // observational markers (tracing only)
	PrioTimeout         = 8 // request deadline
)

// NoHorizon runs until the event heap is empty.
const NoHorizon int64 = math.MaxInt64

// Action is the code an event runs. data is the payload given to Schedule
// (usually a request pointer); now is the engine clock at execution.
type Action func(now int64, data any)

// Handle names a scheduled event so it can be cancelled. The zero Handle
// names no event.
type Handle struct {
	slot int32
	gen  uint32
}

// Valid reports whether h was returned by Schedule (it may have fired since).
func (h Handle) Valid() bool { return h.gen != 0 }

type slot struct {
	act     Action
	data    any
	heapIdx int32 // position in the heap, -1 when free
	gen     uint32
	next    int32 // free-slot chain
}

// entry is a heap element; the ordering key is kept inline so comparisons do
// not chase the slot.
type entry struct {
	at   int64
	key  uint64 // priority << 56 | sub << 40 | sequence (40 bits)
	slot int32
}

// seqBits is the width of the sequence counter in the key: 2⁴⁰ ≈ 1.1·10¹²
// events per run.
const (
	seqBits = 40
	seqMask = 1<<seqBits - 1
	// MaxSub is the largest sub-priority (ScheduleSub).
	MaxSub = 1<<(56-seqBits) - 1
)

// Engine is the event loop. The zero value is not usable; call New.
type Engine struct {
	now      int64
	seq      uint64
	heap     []entry
	slots    []slot
	freeSlot int32
	executed uint64
	observe  func(at int64, prio int)
}

// New returns an engine with the clock at 0.
func New() *Engine {
	return &Engine{freeSlot: -1}
}

// Now is the current simulated time in µs.
func (e *Engine) Now() int64 { return e.now }

// Executed is the number of events run so far.
func (e *Engine) Executed() uint64 { return e.executed }

// Pending is the number of scheduled, not yet executed or cancelled events.
func (e *Engine) Pending() int { return len(e.heap) }

// SetObserver installs a function called before each event runs (tests use it
// to check that time never decreases). nil removes it.
func (e *Engine) SetObserver(f func(at int64, prio int)) { e.observe = f }

// PeekTime is the time of the next event, or NoHorizon when none is pending.
func (e *Engine) PeekTime() int64 {
	if len(e.heap) == 0 {
		return NoHorizon
	}
	return e.heap[0].at
}

// Schedule arranges for act(at, data) to run at time at with the given
// priority (0..255). Scheduling before the current time is a programming error
// and panics (docs/simulator.md §2).
func (e *Engine) Schedule(at int64, prio int, act Action, data any) Handle {
	return e.ScheduleSub(at, prio, 0, act, data)
}

// ScheduleSub is Schedule with a sub-priority that orders events of equal
// time and priority before the sequence does: a cluster gives each
// instance's events its index, so at equal times lower instances go first
// (docs/simulator.md §2, §10). Schedule uses sub-priority 0.
func (e *Engine) ScheduleSub(at int64, prio, sub int, act Action, data any) Handle {
	if at < e.now {
		panic(fmt.Sprintf("des: event scheduled at %d µs, before the clock %d µs", at, e.now))
	}
	if prio < 0 || prio > 255 {
		panic(fmt.Sprintf("des: event priority %d outside 0..255", prio))
	}
	if act == nil {
		panic("des: nil action")
	}
	if sub < 0 || sub > MaxSub {
		panic(fmt.Sprintf("des: event sub-priority %d outside 0..%d", sub, MaxSub))
	}
	var s int32
	if e.freeSlot >= 0 {
		s = e.freeSlot
		e.freeSlot = e.slots[s].next
	} else {
		s = int32(len(e.slots))
		e.slots = append(e.slots, slot{})
	}
	sl := &e.slots[s]
	sl.gen++
	if sl.gen == 0 {
		sl.gen = 1
	}
	sl.act, sl.data = act, data
	e.seq++
	if e.seq > seqMask {
		panic("des: more than 2^40 events scheduled in one run")
	}
	i := int32(len(e.heap))
	e.heap = append(e.heap, entry{at: at, key: uint64(prio)<<56 | uint64(sub)<<seqBits | e.seq, slot: s})
	sl.heapIdx = i
	e.up(int(i))
	return Handle{slot: s, gen: sl.gen}
}

// Scheduled reports whether h names an event that is still pending (not yet
// run, not cancelled).
func (e *Engine) Scheduled(h Handle) bool {
	if h.gen == 0 || int(h.slot) >= len(e.slots) {
		return false
	}
	sl := &e.slots[h.slot]
	return sl.gen == h.gen && sl.heapIdx >= 0
}

// Cancel removes a pending event. It reports whether the event was pending
// (false once it has run or was cancelled). A cancelled event never moves the
// clock.
func (e *Engine) Cancel(h Handle) bool {
	if h.gen == 0 || int(h.slot) >= len(e.slots) {
		return false
	}
	sl := &e.slots[h.slot]
	if sl.gen != h.gen || sl.heapIdx < 0 {
		return false
	}
	i := int(sl.heapIdx)
	last := len(e.heap) - 1
	if i != last {
		e.swap(i, last)
	}
	e.heap = e.heap[:last]
	if i != last {
		if !e.down(i) {
			e.up(i)
		}
	}
	e.release(h.slot)
	return true
}

func (e *Engine) release(s int32) {
	sl := &e.slots[s]
	sl.act, sl.data = nil, nil
	sl.heapIdx = -1
	sl.next = e.freeSlot
	e.freeSlot = s
}

// Step runs the next event if its time is ≤ horizon and reports whether it
// ran one.
func (e *Engine) Step(horizon int64) bool {
	if len(e.heap) == 0 || e.heap[0].at > horizon {
		return false
	}
	top := e.heap[0]
	last := len(e.heap) - 1
	if last > 0 {
		e.swap(0, last)
	}
	e.heap = e.heap[:last]
	if last > 0 {
		e.down(0)
	}
	sl := &e.slots[top.slot]
	act, data := sl.act, sl.data
	e.release(top.slot)
	e.now = top.at
	e.executed++
	if e.observe != nil {
		e.observe(top.at, int(top.key>>56))
	}
	act(top.at, data)
	return true
}

// Run executes events in order until the heap is empty or the next event lies
// beyond horizon, and returns the time of the last executed event (the clock).
func (e *Engine) Run(horizon int64) int64 {
	for e.Step(horizon) {
	}
	return e.now
}

func less(a, b *entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.key < b.key
}

func (e *Engine) swap(i, j int) {
	h := e.heap
	h[i], h[j] = h[j], h[i]
	e.slots[h[i].slot].heapIdx = int32(i)
	e.slots[h[j].slot].heapIdx = int32(j)
}

func (e *Engine) up(i int) {
	h := e.heap
	for i > 0 {
		p := (i - 1) / 2
		if !less(&h[i], &h[p]) {
			break
		}
		e.swap(i, p)
		i = p
	}
}

// down sifts i toward the leaves and reports whether it moved.
func (e *Engine) down(i int) bool {
	h := e.heap
	n := len(h)
	start := i
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && less(&h[r], &h[l]) {
			m = r
		}
		if !less(&h[m], &h[i]) {
			break
		}
		e.swap(i, m)
		i = m
	}
	return i > start
}
