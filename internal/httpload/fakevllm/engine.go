package fakevllm

import (
	"sync"
	"time"
)

// Step is the composition of one engine step of Config.Steps: the new
// prompt tokens of each request prefilled in it, and the requests decoding
// one token each with the sum of their context lengths (prompt plus tokens
// generated so far).
type Step struct {
	PrefillTokens []int
	Decodes       int
	DecodeContext int64
}

// defaultStepTokens is the prefill budget of a step when
// Config.MaxBatchedTokens is 0: vLLM's max_num_batched_tokens default.
const defaultStepTokens = 8192

// seq is one request inside the step engine.
type seq struct {
	prompt, out, gen int
	tokens           chan struct{} // one send per generated token; capacity out
	gone             bool          // the client left: drop it at the next step
}

// engine emits tokens in steps, as a continuous-batching server does: each
// step decodes one token of every running request and prefills the
// waiting ones whose whole prompt fits the step's token budget, and lasts
// what Config.Steps says of its composition. Time is kept on the schedule:
// each step starts when the last one was due to end, even when the machine
// woke late, so lateness does not add up over a run; an idle engine starts
// its next step when a request arrives.
type engine struct {
	step    func(Step) time.Duration
	budget  int
	hub     *hub
	mu      sync.Mutex
	waiting []*seq
	running []*seq
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

func newEngine(step func(Step) time.Duration, budget int, h *hub) *engine {
	if budget <= 0 {
		budget = defaultStepTokens
	}
	e := &engine{step: step, budget: budget, hub: h, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go e.loop()
	return e
}

func (e *engine) close() {
	close(e.stop)
	<-e.done
}

// join queues a request of prompt tokens that will generate out tokens.
func (e *engine) join(prompt, out int) *seq {
	s := &seq{prompt: prompt, out: max(out, 1), tokens: make(chan struct{}, max(out, 1))}
	e.mu.Lock()
	e.waiting = append(e.waiting, s)
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
	return s
}

// leave drops s at the next step.
func (e *engine) leave(s *seq) {
	e.mu.Lock()
	s.gone = true
	e.mu.Unlock()
}

func (e *engine) loop() {
	defer close(e.done)
	wake := make(chan struct{}, 1)
	var next time.Time
	for {
		e.mu.Lock()
		st, prefill := e.form()
		e.mu.Unlock()
		if st.Decodes == 0 && len(prefill) == 0 {
			select {
			case <-e.kick:
				next = time.Time{} // idle: the next step starts when its request arrives
				continue
			case <-e.stop:
				return
			}
		}
		if next.IsZero() {
			next = time.Now()
		}
		next = next.Add(e.step(st))
		if !e.hub.sleepUntil(next, wake, e.stop) {
			return
		}
		e.mu.Lock()
		e.finish(prefill)
		e.mu.Unlock()
	}
}

// form drops the requests whose client left and describes the next step;
// it returns the waiting requests it prefills. Called with mu held.
func (e *engine) form() (Step, []*seq) {
	var st Step
	keep := e.running[:0]
	for _, s := range e.running {
		if !s.gone {
			keep = append(keep, s)
			st.Decodes++
			st.DecodeContext += int64(s.prompt + s.gen)
		}
	}
	e.running = keep
	var prefill []*seq
	budget := e.budget - st.Decodes
	rest := e.waiting[:0]
	for _, s := range e.waiting {
		switch {
		case s.gone:
		case s.prompt <= budget || (len(prefill) == 0 && st.Decodes == 0):
			prefill = append(prefill, s)
			st.PrefillTokens = append(st.PrefillTokens, s.prompt)
			budget -= s.prompt
		default:
			rest = append(rest, s)
		}
	}
	e.waiting = rest
	return st, prefill
}

// finish hands out the step's tokens: one to every running request and the
// first to each prefilled one. Called with mu held.
func (e *engine) finish(prefill []*seq) {
	keep := e.running[:0]
	for _, s := range append(e.running, prefill...) {
		if s.gone {
			continue
		}
		s.gen++
		s.tokens <- struct{}{}
		if s.gen < s.out {
			keep = append(keep, s)
		}
	}
	e.running = keep
}
