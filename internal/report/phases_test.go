package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servesim/internal/tracev2"
)

// openRamp is an open loop: a request every 100 ms, each in flight for just
// under 1 s, so the in-flight count climbs 1..10 over the first ten sends and
// then holds at 10. The simulation doubles the TTFT of every request sent
// while the count climbs and gets the rest exactly.
func openRamp(n int) Input {
	var in Input
	for i := range n {
		send := int64(1_000 + i*100_000)
		ttft, e2e := int64(50_000), int64(999_500)
		in.Trace = append(in.Trace, okRec(int64(i), send, send+ttft, send+e2e, 100, 20))
		simTTFT, simE2E := float64(ttft), float64(e2e)
		if i < 10 {
			simTTFT, simE2E = 2*simTTFT, simE2E+float64(ttft)
		}
		in.Sim = append(in.Sim, simOf(int64(i), simTTFT, simE2E, 100, 20))
	}
	return in
}

func TestPhasesRampOffSteadyRight(t *testing.T) {
	r := build(t, openRamp(50), nil)
	p := r.Phases
	if p == nil {
		t.Fatal("no phases")
	}
	if p.SteadyInFlight != 10 || p.RampEndUs != 1_000+9*100_000 {
		t.Errorf("steady in flight %v, ramp end %d; want 10 and the tenth send %d", p.SteadyInFlight, p.RampEndUs, 1_000+9*100_000)
	}
	if p.Ramp.Requests != 10 || p.Steady.Requests != 40 {
		t.Errorf("ramp %d, steady %d requests; want 10 and 40", p.Ramp.Requests, p.Steady.Requests)
	}
	rt, st := p.Ramp.Metrics[MetricTTFT], p.Steady.Metrics[MetricTTFT]
	if rt.Count != 10 || !near(rt.MAPE, 1) || !near(rt.MeanError, 50_000) || !near(rt.RealMean, 50_000) || !near(rt.SimMean, 100_000) {
		t.Errorf("ramp ttft = %+v, want 10 pairs, MAPE 1, mean error +50 ms", *rt)
	}
	if st.Count != 40 || st.MAPE != 0 || st.MeanError != 0 {
		t.Errorf("steady ttft = %+v, want 40 exact pairs", *st)
	}
	if re, se := p.Ramp.Metrics[MetricE2E], p.Steady.Metrics[MetricE2E]; !near(re.MeanError, 50_000) || se.MAPE != 0 {
		t.Errorf("e2e ramp %+v steady %+v; want ramp +50 ms and steady exact", *re, *se)
	}
	if tp := p.Steady.Metrics[MetricTPOT]; tp == nil || tp.Count != 40 {
		t.Errorf("steady tpot = %+v, want 40 pairs", tp)
	}
	// Graded together the error is spread over the run: a fifth of 100 %.
	if all := r.Metrics[MetricTTFT].RequestLevel.MAPE; !near(all, 0.2) {
		t.Errorf("overall ttft MAPE %v, want 0.2", all)
	}
	if p.NoWarmUp != nil {
		t.Errorf("no-warm-up note on a run whose first request is as fast as the rest: %+v", p.NoWarmUp)
	}
}

// closedLoop is a client holding 4 requests in flight: the first cohort is
// sent at once onto an idle server and prefilled together (TTFT 200 ms); each
// request is resent the instant it ends, so later cohorts find the server
// busy with the others (TTFT 60 ms). The simulation predicts 60 ms for all.
func closedLoop(cohorts int) Input {
	var in Input
	id := int64(0)
	for k := range cohorts {
		for j := range int64(4) {
			send := 1_000 + int64(k)*1_000_000 + j
			ttft := int64(60_000)
			if k == 0 {
				ttft = 200_000
			}
			in.Trace = append(in.Trace, okRec(id, send, send+ttft, send+1_000_000, 500, 40))
			in.Sim = append(in.Sim, simOf(id, 60_000, float64(1_000_000-ttft+60_000), 500, 40))
			id++
		}
	}
	return in
}

func TestPhasesClosedLoopCohorts(t *testing.T) {
	r := build(t, closedLoop(8), nil)
	p := r.Phases
	if p.SteadyInFlight != 4 || p.RampEndUs != 1_003 {
		t.Fatalf("steady in flight %v, ramp end %d; want 4 and the first cohort's last send 1003", p.SteadyInFlight, p.RampEndUs)
	}
	if p.Ramp.Requests != 4 || p.Steady.Requests != 28 {
		t.Errorf("ramp %d, steady %d; want the first cohort (4) and the other 28", p.Ramp.Requests, p.Steady.Requests)
	}
	if rt := p.Ramp.Metrics[MetricTTFT]; !near(rt.MAPE, 0.7) || !near(rt.MeanError, -140_000) {
		t.Errorf("ramp ttft %+v, want MAPE 0.7 and mean error -140 ms", *rt)
	}
	if st := p.Steady.Metrics[MetricTTFT]; st.MAPE != 0 || st.Count != 28 {
		t.Errorf("steady ttft %+v, want 28 exact pairs", *st)
	}
}

// lightRun is one request at a time, a second apart: TTFT 50 ms, except the
// first request's, which is given.
func lightRun(firstTTFT int64, firstPrompt int) Input {
	var in Input
	for i := range 20 {
		send := int64(1_000 + i*1_000_000)
		ttft, prompt := int64(50_000), 100
		if i == 0 {
			ttft, prompt = firstTTFT, firstPrompt
		}
		in.Trace = append(in.Trace, okRec(int64(i), send, send+ttft, send+ttft+150_000, prompt, 16))
		in.Sim = append(in.Sim, simOf(int64(i), 50_000, 200_000, prompt, 16))
	}
	return in
}

func TestNoWarmUpNote(t *testing.T) {
	r := build(t, lightRun(71_000, 100), nil)
	w := r.Phases.NoWarmUp
	if w == nil {
		t.Fatal("no note for a cold first request with nothing excluded")
	}
	if w.FirstRequestID != 0 || w.FirstTTFT != 71_000 || w.SteadyTTFTP50 != 50_000 || w.FirstInFlight != 1 ||
		w.ReferenceRequests != 19 || w.SuggestedWarmupRequests != 1 {
		t.Errorf("note = %+v", *w)
	}
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "no warm-up: the first request (id 0) took 71.0 ms to its first token at 1 in flight, against a steady-state p50 of 50.0 ms (19 requests at a similar load and prompt); nothing was excluded as warm-up, so consider --warmup-requests 1\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text lacks the note line %q:\n%s", want, text.String())
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Phases struct {
			NoWarmUp *NoWarmUp `json:"no_warm_up"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Phases.NoWarmUp == nil || doc.Phases.NoWarmUp.SuggestedWarmupRequests != 1 {
		t.Errorf("JSON phases.no_warm_up = %+v, want the note", doc.Phases.NoWarmUp)
	}
}

func TestNoWarmUpNoteAbsent(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		mod  func(*Config)
	}{
		{"warm-up excluded by request", lightRun(71_000, 100), func(c *Config) { c.WarmupRequests = 1 }},
		{"warm-up excluded by duration", lightRun(71_000, 100), func(c *Config) { c.WarmupDuration = time.Millisecond }},
		{"the capture had a warm-up", func() Input { in := lightRun(71_000, 100); in.Header.WarmUpRequests = 5; return in }(),
			func(c *Config) { c.WarmupRequests = 0 }},
		{"first request as fast as the rest", lightRun(52_000, 100), nil},
		{"first prompt four times longer", lightRun(71_000, 400), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := build(t, tt.in, tt.mod)
			if r.Phases.NoWarmUp != nil {
				t.Errorf("note = %+v, want none", *r.Phases.NoWarmUp)
			}
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text.String(), "no warm-up") {
				t.Errorf("text has a no-warm-up line:\n%s", text.String())
			}
		})
	}
}

func TestPhasesInEveryOutput(t *testing.T) {
	r := build(t, openRamp(50), nil)
	var text, md, page bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	head := "phases: ramp to 901 ms (in flight first reached its median 10), 10 ramp and 40 steady requests"
	row := "  ramp    ttft    10    50.0 ms    100 ms    +50.0 ms  100.0%\n"
	if !strings.Contains(text.String(), head+"\n") || !strings.Contains(text.String(), row) {
		t.Errorf("text lacks %q or %q:\n%s", head, row, text.String())
	}
	if !strings.Contains(md.String(), "## Ramp and steady state") || !strings.Contains(md.String(), "| steady | ttft | 40 | 50.0 ms | 50.0 ms | 0 us | 0.0% |") {
		t.Errorf("markdown lacks the phase table:\n%s", md.String())
	}
	if !strings.Contains(page.String(), "<h2>Ramp and steady state</h2>") || !strings.Contains(page.String(), "<td>ramp</td><td>ttft</td>") {
		t.Error("html lacks the phase table")
	}
}

// TestPhasesOnRealCapture pins the split on a measured vLLM run (RTX 4090,
// Llama-3.1-8B, 300 requests offered at 10 req/s, no warm-up). The run
// saturates, so the steady level is half-way up a growing queue, and the
// steady state has no request at a light load to judge the first one by.
func TestPhasesOnRealCapture(t *testing.T) {
	rd, h, err := tracev2.Open(tracev2.Input{Path: filepath.Join("..", "..", "testdata", "captures", "rtx4090-llama-3.1-8b.trace")}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	tr, err := tracev2.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Header: HeaderFrom(h), Trace: tr.Records}
	for _, rec := range tr.Records { // the split reads the real side only
		in.Sim = append(in.Sim, simOf(rec.RequestID, float64(rec.FirstChunkTimeUs-rec.SendTimeUs),
			float64(rec.LastChunkTimeUs-rec.SendTimeUs), realPrompt(&rec), rec.OutputTokens))
	}
	p := build(t, in, nil).Phases
	if p.SteadyInFlight != 150.5 || p.RampEndUs != 14_009_874 || p.Ramp.Requests != 151 || p.Steady.Requests != 149 {
		t.Errorf("steady level %v, ramp end %d, %d ramp and %d steady; want 150.5, 14009874, 151 and 149",
			p.SteadyInFlight, p.RampEndUs, p.Ramp.Requests, p.Steady.Requests)
	}
	if p.NoWarmUp != nil {
		t.Errorf("note %+v, want none: no steady request met a light load", *p.NoWarmUp)
	}
}
