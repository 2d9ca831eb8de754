package instance

import (
	"fmt"
	"strings"
	"testing"

	"servesim/internal/des"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/latency"
	"servesim/internal/testkit/fake"
)

// recModel records every step's composition as a compact string.
type recModel struct {
	fake.Linear
	steps []string
}

func (m *recModel) StepTime(s *latency.Step) int64 {
	var b strings.Builder
	for _, p := range s.Prefill {
		fmt.Fprintf(&b, "P%d/%d/%d ", p.NewTokens, p.Context, p.Target)
	}
	if s.DecodeCount > 0 {
		fmt.Fprintf(&b, "D%d/%d", s.DecodeCount, s.DecodeContextSum)
	}
	m.steps = append(m.steps, strings.TrimSpace(b.String()))
	return m.Linear.StepTime(s)
}

type harness struct {
	t       *testing.T
	eng     *des.Engine
	in      *Instance
	model   *recModel
	results map[int64]Result
	order   []int64
}

func baseConfig() Config {
	return Config{KV: kvcache.Config{Blocks: 64, BlockSize: 4}, MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, MaxModelLen: 256}
}

func newHarness(t *testing.T, cfg Config, lin fake.Linear) *harness {
	t.Helper()
	h := &harness{t: t, eng: des.New(), model: &recModel{Linear: lin}, results: map[int64]Result{}}
	cfg.Latency = h.model
	cfg.OnDone = func(res *Result, r *Request) {
		h.results[res.ID] = *res
		h.order = append(h.order, res.ID)
	}
	in, err := New(h.eng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.in = in
	return h
}

func tokens(n int, base int32) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = base + int32(i)
	}
	return p
}

// at submits r at its arrival time.
func (h *harness) at(r *Request) {
	h.eng.Schedule(r.ArrivalUs, des.PrioInstanceArrival, func(int64, any) {
		if err := h.in.Submit(r); err != nil {
			h.t.Fatal(err)
		}
	}, nil)
}

func (h *harness) run() {
	h.eng.SetObserver(func(int64, int) {
		if err := h.in.CheckKV(); err != nil {
			h.t.Fatal(err)
		}
	})
	h.eng.Run(des.NoHorizon)
	if err := h.in.CheckKV(); err != nil {
		h.t.Fatal(err)
	}
}

// TestNegativePrivateFromRefused: a request that declares a negative
// private position is refused with an error, at Submit and at
// ReserveDecode, and nothing is registered.
func TestNegativePrivateFromRefused(t *testing.T) {
	h := newHarness(t, baseConfig(), fake.Linear{Base: 100})
	r := &Request{ID: 1, Prompt: tokens(8, 0), OutputLen: 2, Private: true, PrivateFrom: -4}
	if err := h.in.Submit(r); err == nil || !strings.Contains(err.Error(), "private") {
		t.Errorf("Submit: error %v, want one about the private position", err)
	}
	d := &Request{ID: 2, Prompt: tokens(8, 0), OutputLen: 2, Private: true, PrivateFrom: -1}
	if ok, err := h.in.ReserveDecode(d); ok || err == nil {
		t.Errorf("ReserveDecode: ok %v, error %v; want a refusal", ok, err)
	}
	if c := h.in.Counters(); c.Submitted != 0 {
		t.Errorf("%d requests registered, want 0", c.Submitted)
	}
}
