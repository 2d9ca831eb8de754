package instance

import (
	"slices"
	"testing"

	"servesim/internal/des"
	"servesim/internal/des/kvcache"
	"servesim/internal/testkit/fake"
)

// TestDisaggregatedFlow drives docs/simulator.md §12 by hand on two instances sharing an
// engine: the prefill part keeps its blocks until the transfer ends; the
// decode part reserves blocks, recomputes the last prompt token and produces
// all O tokens.
func TestDisaggregatedFlow(t *testing.T) {
	for _, ff := range []bool{false, true} {
		eng := des.New()
		lin := fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2, ATok: 5, AEnd: 7}
		pm, dm := &recModel{Linear: lin}, &recModel{Linear: lin}
		var got Result
		var dec *Instance
		cfg := baseConfig()
		cfg.FastForward = ff
		rd := &Request{ID: 1, Prompt: tokens(10, 1), OutputLen: 3, MaxOutputLen: 3}
		pc := cfg
		pc.Latency = pm
		var pre *Instance
		pc.OnDone = func(res *Result, r *Request) {
			if res.Status != StatusPrefilled || res.DoneUs != 110 {
				t.Fatalf("prefill part: got %s at %d, want prefilled at 110", res.Status, res.DoneUs)
			}
			eng.Schedule(res.DoneUs, des.PrioRouting, func(now int64, _ any) {
				if ok, err := dec.ReserveDecode(rd); !ok || err != nil {
					t.Fatalf("reserve: %v %v", ok, err)
				}
				eng.Schedule(now+50, des.PrioTransferDone, func(int64, any) {
					if err := pre.ReleaseKV(r); err != nil {
						t.Fatal(err)
					}
					if err := dec.SubmitDecode(rd); err != nil {
						t.Fatal(err)
					}
				}, nil)
			}, nil)
		}
		dc := cfg
		dc.Latency = dm
		dc.ID = 1
		dc.OnDone = func(res *Result, r *Request) { got = *res }
		var err error
		if pre, err = New(eng, pc); err != nil {
			t.Fatal(err)
		}
		if dec, err = New(eng, dc); err != nil {
			t.Fatal(err)
		}
		rp := &Request{ID: 1, Prompt: tokens(10, 1), OutputLen: 3, MaxOutputLen: 3, PrefillOnly: true}
		eng.Schedule(0, des.PrioInstanceArrival, func(int64, any) { pre.Submit(rp) }, nil)
		eng.Run(des.NoHorizon)
		if !slices.Equal(pm.steps, []string{"P10/0/10"}) || !slices.Equal(dm.steps, []string{"P1/9/10", "D1/10", "D1/11"}) {
			t.Errorf("ff %v: steps prefill %q decode %q", ff, pm.steps, dm.steps)
		}
		// Decode enqueued at 160: [160,261) token 1, then 102 µs per token.
		if got.Status != StatusCompleted || got.TTFTUs != 266 || got.E2EUs != 266+2*(102+5)+7 || got.OutputTokens != 3 || got.CachedPromptTokens != 0 {
			t.Errorf("ff %v: decode part %+v", ff, got)
		}
		for _, in := range []*Instance{pre, dec} {
			if in.KV().FreeBlocks() != in.KV().TotalBlocks() {
				t.Errorf("ff %v: instance %d holds %d blocks at the end", ff, in.ID(), in.KV().UsedBlocks())
			}
		}
	}
}

func TestReserveDecodeRefusesWithoutBlocks(t *testing.T) {
	eng := des.New()
	cfg := baseConfig()
	cfg.KV = kvcache.Config{Blocks: 2, BlockSize: 4}
	cfg.MaxModelLen = 8
	cfg.Latency = &fake.Linear{Base: 1}
	in, err := New(eng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := in.ReserveDecode(&Request{ID: 1, Prompt: tokens(9, 1), OutputLen: 1})
	if ok || err != nil || in.KV().FreeBlocks() != 2 {
		t.Errorf("reserve 3 blocks of 2: got %v %v, free %d", ok, err, in.KV().FreeBlocks())
	}
	r := &Request{ID: 2, Prompt: tokens(5, 1), OutputLen: 1}
	if ok, _ := in.ReserveDecode(r); !ok || in.KV().FreeBlocks() != 0 || r.Status() != StatusPending {
		t.Errorf("reserve 2 blocks of 2: got %v, free %d, %s", ok, in.KV().FreeBlocks(), r.Status())
	}
	if err := in.ReleaseKV(r); err == nil {
		t.Error("ReleaseKV on a decode part: no error")
	}
}
