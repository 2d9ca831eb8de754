package fakevllm

import (
	"container/heap"
	"sync"
	"time"

	"servesim/internal/httpload/alarm"
)

// hub wakes sleepers at their due instants, all from one precise timer
// (package alarm), rather than one Go timer per stream, which would wake up
// to ~1 ms late when the process is idle.
type hub struct {
	mu      sync.Mutex
	waiters waiterHeap
	kick    chan struct{} // capacity 1: an earlier waiter arrived
	stop    chan struct{}
	done    chan struct{}
}

type waiter struct {
	due  time.Time
	wake chan struct{} // capacity 1
}

type waiterHeap []waiter

func (h waiterHeap) Len() int           { return len(h) }
func (h waiterHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h waiterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *waiterHeap) Push(x any)        { *h = append(*h, x.(waiter)) }
func (h *waiterHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}

func newHub() *hub {
	h := &hub{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go h.loop()
	return h
}

func (h *hub) close() {
	close(h.stop)
	<-h.done
}

// sleepUntil blocks until due, or until cancel is closed (false).
// wake is the caller's reusable channel of capacity 1, empty on entry.
func (h *hub) sleepUntil(due time.Time, wake chan struct{}, cancel <-chan struct{}) bool {
	if !time.Now().Before(due) {
		return true
	}
	h.mu.Lock()
	first := len(h.waiters) == 0 || due.Before(h.waiters[0].due)
	heap.Push(&h.waiters, waiter{due: due, wake: wake})
	h.mu.Unlock()
	if first {
		select {
		case h.kick <- struct{}{}:
		default:
		}
	}
	select {
	case <-wake:
		return true
	case <-cancel:
		// The hub will still signal wake later; the buffer takes it, and
		// the caller must not reuse wake after a cancelled sleep.
		return false
	}
}

func (h *hub) loop() {
	defer close(h.done)
	timer := alarm.New()
	defer timer.Close()
	for {
		now := time.Now()
		h.mu.Lock()
		for len(h.waiters) > 0 && !h.waiters[0].due.After(now) {
			w := heap.Pop(&h.waiters).(waiter)
			w.wake <- struct{}{}
		}
		var next time.Time
		if len(h.waiters) > 0 {
			next = h.waiters[0].due
		}
		h.mu.Unlock()
		switch {
		case next.IsZero():
			select {
			case <-h.kick:
			case <-h.stop:
				return
			}
		default:
			select {
			case <-timer.Reset(next.Sub(now)):
			case <-h.kick:
				timer.Stop()
			case <-h.stop:
				timer.Stop()
				return
			}
		}
	}
}
