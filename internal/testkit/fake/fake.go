// Package fake provides simple latency models with hand-computable step
// times for the simulator's tests and benchmarks. It knows only the
// latency.Model interface, never the instance or the engine.
package fake

import "servesim/internal/des/latency"

// Linear is StepTime = Base + PerPrefillToken·Σ new prefill tokens +
// PerDecode·decode requests + PerContextToken·Σ decode context / 1000
// (integer µs, at least 1), with constant Q, A_tok and A_end.
type Linear struct {
	Base            int64
	PerPrefillToken int64
	PerDecode       int64
	PerKiloContext  int64 // µs per 1000 tokens of decode context
	Queue           int64 // Q(r)
	ATok, AEnd      int64
}

var _ latency.Model = (*Linear)(nil)

// StepTime implements latency.Model.
func (m *Linear) StepTime(s *latency.Step) int64 {
	t := m.Base + m.PerDecode*int64(s.DecodeCount) + m.PerKiloContext*s.DecodeContextSum/1000
	for _, p := range s.Prefill {
		t += m.PerPrefillToken * int64(p.NewTokens)
	}
	return max(1, t)
}

// QueueDelay implements latency.Model.
func (m *Linear) QueueDelay(int) int64 { return m.Queue }

// TokenOverhead implements latency.Model.
func (m *Linear) TokenOverhead() int64 { return m.ATok }

// EndOverhead implements latency.Model.
func (m *Linear) EndOverhead() int64 { return m.AEnd }
