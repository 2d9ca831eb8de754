package instance

// waitQueue is a binary heap of requests ordered by the scheduler's key. A
// total order (ties end at the id or the enqueue counter) makes it equal to
// the spec's stable sort of the queue at every step.
type waitQueue struct {
	h    []*Request
	less func(a, b *Request) bool
}

func (q *waitQueue) Len() int          { return len(q.h) }
func (q *waitQueue) Head() *Request    { return q.h[0] }
func (q *waitQueue) items() []*Request { return q.h }

func (q *waitQueue) push(r *Request) {
	r.qidx = len(q.h)
	q.h = append(q.h, r)
	q.up(r.qidx)
}

func (q *waitQueue) remove(r *Request) {
	i := r.qidx
	last := len(q.h) - 1
	if i != last {
		q.swap(i, last)
	}
	q.h[last] = nil
	q.h = q.h[:last]
	if i != last {
		if !q.down(i) {
			q.up(i)
		}
	}
	r.qidx = -1
}

func (q *waitQueue) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].qidx = i
	q.h[j].qidx = j
}

func (q *waitQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(q.h[i], q.h[p]) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *waitQueue) down(i int) bool {
	n, start := len(q.h), i
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(q.h[r], q.h[l]) {
			m = r
		}
		if !q.less(q.h[m], q.h[i]) {
			break
		}
		q.swap(i, m)
		i = m
	}
	return i > start
}

// P/D decode parts that hold reserved blocks go first under every
// scheduler: they allocate nothing new, and behind a head-of-line request
// that needs their blocks they would wait forever.
func lessFCFS(a, b *Request) bool {
	if a.held != b.held {
		return a.held
	}
	return a.qkey < b.qkey
}

func lessPriority(a, b *Request) bool {
	if a.held != b.held {
		return a.held
	}
	if a.prioKey != b.prioKey {
		return a.prioKey < b.prioKey
	}
	if a.ArrivalUs != b.ArrivalUs {
		return a.ArrivalUs < b.ArrivalUs
	}
	return a.ID < b.ID
}

func lessSJF(a, b *Request) bool {
	if a.held != b.held {
		return a.held
	}
	if len(a.Prompt) != len(b.Prompt) {
		return len(a.Prompt) < len(b.Prompt)
	}
	if a.ArrivalUs != b.ArrivalUs {
		return a.ArrivalUs < b.ArrivalUs
	}
	return a.ID < b.ID
}
