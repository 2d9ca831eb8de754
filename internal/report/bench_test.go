package report

import (
	"io"
	"testing"

	"servesim/internal/tracev2"
)

// benchInput makes n matched pairs with varied latencies, classes and ITL means.
func benchInput(n int) Input {
	in := Input{Header: TraceHeader{Mode: "real", GoodputSLOTargets: map[string]SLOTarget{"critical": {TTFTMs: 200, E2EMs: 5000}}},
		Trace: make([]tracev2.Record, n), Sim: make([]tracev2.SimResult, n)}
	x := uint64(12345)
	next := func() float64 { // xorshift: deterministic noise in [0, 1)
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return float64(x>>11) / (1 << 53)
	}
	for i := range n {
		send := int64(1 + i*1000)
		ttft := int64(20_000 + next()*200_000)
		out := 2 + int(next()*300)
		e2e := ttft + int64(out)*int64(8000+next()*4000)
		rec := &in.Trace[i]
		*rec = okRec(int64(i), send, send+ttft, send+e2e, 100+int(next()*2000), out)
		if i%3 == 0 {
			rec.SLOClass = "critical"
		}
		s := simOf(int64(i), float64(ttft)*(0.9+0.2*next()), float64(e2e)*(0.95+0.1*next()), rec.InputTokens, out)
		s.ITLMeanUs = float64(e2e-ttft) / float64(out-1) * (0.95 + 0.1*next())
		in.Sim[i] = s
	}
	return in
}

// BenchmarkFullReport1M has a target: 1M matched pairs to the full report
// (statistics, goodput, validity, JSON, text, Markdown and HTML) in under 5 s.
func BenchmarkFullReport1M(b *testing.B) {
	in := benchInput(1_000_000)
	gates, _ := ParseGates("grade>=good,ttft.mape<0.15", nil)
	b.ResetTimer()
	for range b.N {
		r, err := Build(in, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		_ = r.ApplyGates(gates)
		for _, write := range []func(io.Writer) error{r.WriteJSON, r.WriteText, r.WriteMarkdown, r.WriteHTML} {
			if err := write(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	}
}
