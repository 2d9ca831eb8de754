package cluster

import (
	"encoding/json"
	"strings"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

// pdCluster is one prefill and one decode instance (blocks of 4 tokens),
// step time 100 µs + 1 µs per prefill token + 2 µs per decode, A_tok 5,
// A_end 7; KV transfers at 1000 bytes/µs, 50 µs base, 1000 bytes per token.
func pdCluster(decoder Decider, decodeBlocks int, contention bool) Config {
	lin := &fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2, ATok: 5, AEnd: 7}
	mk := func(blocks int) instance.Config {
		return instance.Config{KV: kvcache.Config{Blocks: blocks, BlockSize: 4}, MaxNumSeqs: 8, MaxNumBatchedTokens: 512,
			MaxModelLen: min(64, 4*blocks), Latency: lin, FastForward: true}
	}
	return Config{Instances: []instance.Config{mk(64), mk(decodeBlocks)},
		PD: PD{PrefillInstances: 1, Decider: decoder, PrefixThreshold: 16, BandwidthBytesPerUs: 1000, BaseLatencyUs: 50,
			KVBytesPerToken: 1000, Contention: contention}}
}

type pdRun struct {
	results map[int64]instance.Result
	events  map[int64]map[string]int64
	recs    map[int64]*pdReq
	out     Outcome
	sum     metrics.Summary
	dec     string
}

func runPD(t *testing.T, cfg Config, reqs []*instance.Request) pdRun {
	t.Helper()
	run := pdRun{results: map[int64]instance.Result{}, events: map[int64]map[string]int64{}, recs: map[int64]*pdReq{}}
	agg, _ := metrics.NewAggregator(nil)
	var dec strings.Builder
	cfg.Decisions = &dec
	c, err := New(cfg, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) {
		run.results[res.ID] = *res
		agg.Add(res)
	}))
	if err != nil {
		t.Fatal(err)
	}
	var violations []string
	check := pdChecker(c, &violations)
	c.pd.observe = func(rec *pdReq, ev string, now int64) {
		check(rec, ev, now)
		id := rec.parent.ID
		if run.events[id] == nil {
			run.events[id] = map[string]int64{}
		}
		run.events[id][ev] = now
		run.recs[id] = rec
	}
	if run.out, err = c.Run(); err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Error(v)
	}
	run.sum = agg.Summary(run.out.Info)
	run.dec = dec.String()
	return run
}

// TestTransferTime: ⌈base + ⌈prompt/b⌉·b·bytes per token / (bw/k)⌉.
func TestTransferTime(t *testing.T) {
	p := &pdState{cfg: PD{BandwidthBytesPerUs: 1000, BaseLatencyUs: 50, KVBytesPerToken: 100}, blockSize: 16}
	for _, tc := range []struct {
		prompt, k int
		want      int64
	}{{30, 1, 54}, {30, 2, 57}, {30, 3, 60}, {32, 1, 54}, {33, 1, 55}, {1, 1, 52}} {
		if got := p.transferUs(tc.prompt, tc.k); got != tc.want {
			t.Errorf("prompt %d, k %d: got %d µs, want %d", tc.prompt, tc.k, got, tc.want)
		}
	}
	p.cfg.BaseLatencyUs, p.cfg.KVBytesPerToken = 0, 1e-9
	if got := p.transferUs(1, 1); got != 1 {
		t.Errorf("tiny transfer: got %d µs, want at least 1", got)
	}
}

// TestPDFlowHandChecked follows one disaggregated request (docs/simulator.md §12):
// prefill [0,110) on instance 0; decode routing and transfer start at 110;
// 12 tokens × 1000 bytes at 1000 bytes/µs + 50 µs = 62 µs, so the decode
// part is enqueued at 172; its first step recomputes the last prompt token
// (P1/9/10, 101 µs) and yields token 1 at 273 (TTFT 278), then two decode
// steps of 102 µs: E2E = 278 + 2·(102 + 5) + 7 = 499 (PD-6).
func TestPDFlowHandChecked(t *testing.T) {
	run := runPD(t, pdCluster(DecideAlways, 64, false), []*instance.Request{
		{ID: 1, Prompt: tokens(10, 1), OutputLen: 3, MaxOutputLen: 3},
	})
	ev := run.events[1]
	if ev["prefilled"] != 110 || ev["transfer"] != 110 || ev["transferred"] != 172 {
		t.Errorf("phases %v: want prefilled 110, transfer 110, transferred 172", ev)
	}
	got := run.results[1]
	if got.Status != instance.StatusCompleted || got.Instance != 1 || got.EnqueueUs != 172 || got.FirstTokenUs != 273 ||
		got.TTFTUs != 278 || got.E2EUs != 499 || got.OutputTokens != 3 || got.DoneUs != 477 {
		t.Errorf("result %+v", got)
	}
	if run.out.TransfersStarted != 1 || run.out.TransfersCompleted != 1 || run.out.TransfersInFlight != 0 {
		t.Errorf("transfers %d started, %d completed, %d in flight", run.out.TransfersStarted, run.out.TransfersCompleted, run.out.TransfersInFlight)
	}
	// PD-5: the pools are as configured, and every instance's KV is free.
	if p := run.out.Info.PerInstance; p[0].Pool != "prefill" || p[1].Pool != "decode" || p[0].Routed != 1 || p[1].Routed != 1 {
		t.Errorf("per-instance %+v", p)
	}
}

// TestPDHorizonInTransfer: a run ending while the KV is in transfer counts
// the request in transfer (INV-1), not as queued.
func TestPDHorizonInTransfer(t *testing.T) {
	cfg := pdCluster(DecideAlways, 64, false)
	cfg.HorizonUs = 150
	run := runPD(t, cfg, []*instance.Request{{ID: 1, Prompt: tokens(10, 1), OutputLen: 3, MaxOutputLen: 3}})
	if r := run.results[1]; !r.InTransfer || run.sum.InTransferRequests != 1 || run.sum.StillQueued != 0 || run.out.TransfersInFlight != 1 {
		t.Errorf("result %+v, summary in transfer %d queued %d, outcome %+v", r, run.sum.InTransferRequests, run.sum.StillQueued, run.out)
	}
}

// TestPDContention (PD-7): three prefills ending in one step start three
// transfers at once; with contention the k-th gets bandwidth/k: 12 kB take
// 12, 24 and 36 µs on top of the 50 µs base; without, 12 µs each.
func TestPDContention(t *testing.T) {
	for _, contention := range []bool{false, true} {
		var reqs []*instance.Request
		for i := 1; i <= 3; i++ {
			reqs = append(reqs, &instance.Request{ID: int64(i), Prompt: tokens(10, int32(100*i)), OutputLen: 2, MaxOutputLen: 2})
		}
		run := runPD(t, pdCluster(DecideAlways, 64, contention), reqs)
		for i := int64(1); i <= 3; i++ {
			ev := run.events[i]
			want := int64(62)
			if contention {
				want = 50 + 12*i
			}
			if d := ev["transferred"] - ev["transfer"]; d != want || ev["transfer"] != 130 {
				t.Errorf("contention %v, request %d: transfer from %d for %d µs, want from 130 for %d", contention, i, ev["transfer"], d, want)
			}
		}
	}
}

// TestPDReservationFailureDrops: a decode instance without room for the
// prompt drops the request; the prefill instance's blocks are freed.
func TestPDReservationFailureDrops(t *testing.T) {
	cfg := pdCluster(DecideAlways, 2, false) // 8 tokens of KV on the decode side
	run := runPD(t, cfg, []*instance.Request{{ID: 1, Prompt: tokens(10, 1), OutputLen: 3, MaxOutputLen: 3}})
	r := run.results[1]
	if r.Status != instance.StatusDropped || r.Instance != 1 || run.sum.DroppedUnservable != 1 || run.out.TransfersStarted != 0 {
		t.Errorf("result %+v, dropped %d, transfers %d", r, run.sum.DroppedUnservable, run.out.TransfersStarted)
	}
}

// TestPDDecodeKVShortage: a decode instance whose blocks are all held by a
// request in flight cannot take a second prompt it could hold when empty;
// the second request is dropped for want of decode KV blocks, a bucket of
// its own, not dropped_unservable.
func TestPDDecodeKVShortage(t *testing.T) {
	cfg := pdCluster(DecideAlways, 2, false) // 8 tokens of KV on the decode side
	run := runPD(t, cfg, []*instance.Request{
		{ID: 1, Prompt: tokens(6, 1), OutputLen: 2, MaxOutputLen: 2},
		{ID: 2, Prompt: tokens(6, 100), OutputLen: 2, MaxOutputLen: 2},
	})
	r := run.results[2]
	if r.Status != instance.StatusDropped || !r.NoDecodeKV || run.sum.DroppedNoDecodeKV != 1 || run.sum.DroppedUnservable != 0 ||
		run.results[1].Status != instance.StatusCompleted {
		t.Errorf("result %+v; summary dropped for decode KV %d, unservable %d; first request %s",
			r, run.sum.DroppedNoDecodeKV, run.sum.DroppedUnservable, run.results[1].Status)
	}
}

// TestPDPrefixThreshold: the first request shares nothing with the decode
// instance's cache and disaggregates; once its 32-token prefix is cached
// there, a request reusing it has 8 uncached tokens (≤ 16) and runs whole
// on the decode instance.
func TestPDPrefixThreshold(t *testing.T) {
	sys := tokens(32, 5000)
	a := &instance.Request{ID: 1, Prompt: append(append([]int32(nil), sys...), tokens(8, 1)...), OutputLen: 2, MaxOutputLen: 2}
	b := &instance.Request{ID: 2, ArrivalUs: 5000, Prompt: append(append([]int32(nil), sys...), tokens(8, 900)...), OutputLen: 2, MaxOutputLen: 2}
	run := runPD(t, pdCluster(DecidePrefixThreshold, 64, false), []*instance.Request{a, b})
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(run.dec), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["pd_decider"]; ok {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 || lines[0]["disaggregate"] != true || lines[1]["disaggregate"] != false || lines[1]["cached_tokens"] != 32.0 {
		t.Fatalf("decider lines %v", lines)
	}
	if _, ok := run.recs[2]; ok {
		t.Error("request 2 disaggregated")
	}
	if r := run.results[2]; r.Status != instance.StatusCompleted || r.Instance != 1 || r.CachedPromptTokens != 32 {
		t.Errorf("request 2: %+v", r)
	}
	if p := run.out.Info.PerInstance; p[0].Routed != 1 || p[1].Routed != 2 {
		t.Errorf("routed: prefill %d, decode %d; want 1 and 2", p[0].Routed, p[1].Routed)
	}
}
