package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/sweep"
)

// TestReplaySweepFleets: a min-cost sweep over static fleets (one file,
// num_instances 2 and 3) and autoscaled ones whose loading delay the grid
// sets, on the Azure trace at 2.4 req/s: rows carry the fleet's totals
// and cost what its nodes cost over the run (at the file's $8 a node-hour,
// not the list price of the GPUs it started with); the autoscaled fleet
// from 2 replicas that load at once is the cheapest meeting the SLO, the
// same with a 4-minute loading delay misses it (the requests wait for the
// new replica), and the answer names the static fleet sized for the peak.
func TestReplaySweepFleets(t *testing.T) {
	const fleets = "../../testdata/fleet/"
	out := mustReplay(t, nil, "sweep", "../../testdata/azure-llm-2023/AzureLLMInferenceTrace_conv_10min.csv",
		"--model", "llama-3.1-70b-instruct", "--tp", "2", "--rate", "2.4", "--slo", "ttft.p99<2s", "--find", "min-cost",
		"--grid", "fleet_file="+fleets+"static.yaml,"+fleets+"autoscaled.yaml", "--grid", "num_instances=2,3",
		"--grid", "fleet.instance_lifecycle.loading_delay.mean=0,240", "--format", "json")
	d, err := sweep.DecodeDoc("stdout", []byte(out.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rows) != 8 || d.Answer == nil || len(d.Answer.Best) != 1 {
		t.Fatalf("%d rows, answer %+v", len(d.Rows), d.Answer)
	}
	row := func(file, n, load string) *sweep.Row {
		for i := range d.Rows {
			r := &d.Rows[i]
			if strings.HasSuffix(r.Param("fleet_file"), file) && r.Param("num_instances") == n && r.Param("fleet.instance_lifecycle.loading_delay.mean") == load {
				return r
			}
		}
		t.Fatalf("no row %s %s %s", file, n, load)
		return nil
	}
	static3, auto0, auto240 := row("static.yaml", "3", "0"), row("autoscaled.yaml", "2", "0"), row("autoscaled.yaml", "2", "240")
	for _, r := range []*sweep.Row{static3, auto0, auto240} {
		f := r.Fleet
		if f == nil || r.CostPerHour == nil || math.Abs(*r.CostPerHour-f.Dollars*3600/r.DurationS) > 1e-9 || math.Abs(f.Dollars-4*f.GPUHours) > 1e-9 {
			t.Fatalf("case %d: fleet %+v, cost %v over %v s: want the fleet's dollars over the run, $4 a GPU-hour", r.Case, f, r.CostPerHour, r.DurationS)
		}
	}
	if f := static3.Fleet; f.Autoscaled || f.PeakReplicas != 3 || f.ScaleUps != 0 || math.Abs(*static3.CostPerHour-24) > 0.05 || !static3.Met() {
		t.Errorf("static, 3 replicas: %+v at $%v/h (want 3 nodes × $8, not 6 × the H100 list price), met %v", f, *static3.CostPerHour, static3.Met())
	}
	if f := auto240.Fleet; !f.Autoscaled || f.ScaleUps < 1 || f.PeakReplicas != 3 || auto240.Met() {
		t.Errorf("autoscaled from 2, 4-minute loading: %+v, met %v; want a scale-up to 3 and the SLO missed", f, auto240.Met())
	}
	b := d.Answer.Best[0]
	if b.Case != auto0.Case || !auto0.Met() || b.Fleet == nil || !(auto0.Fleet.Dollars < static3.Fleet.Dollars) {
		t.Errorf("best case %d (%+v), want the autoscaled fleet loading at once, case %d, cheaper than static 3 ($%v vs $%v)",
			b.Case, b.Params, auto0.Case, auto0.Fleet.Dollars, static3.Fleet.Dollars)
	}
	if b.Static == nil || !strings.HasSuffix(sweep.ParamText(b.Static.Params), "num_instances=3 fleet.instance_lifecycle.loading_delay.mean=0") ||
		!strings.Contains(d.Answer.Verdict[0], "the cheapest static fleet meeting it: fleet_file=") {
		t.Errorf("the static fleet for the peak: %+v; verdict %q", b.Static, d.Answer.Verdict)
	}
}

// TestMooncakeStretchedFleet: the Mooncake trace stretched by --time-scale
// runs with an autoscaled fleet: its five minutes arrive over twenty, every
// request lands in a bucket, and the fleet grows under the load.
func TestMooncakeStretchedFleet(t *testing.T) {
	m := filepath.Join(t.TempDir(), "m.json")
	mustReplay(t, nil, "../../testdata/mooncake/conversation_trace_5min.jsonl", "--model", "llama-3.1-70b-instruct", "--tp", "2",
		"--time-scale", "4", "--fleet-file", "../../testdata/fleet/autoscaled.yaml", "--slo", "ttft.p99<2s", "--format", "text", "--metrics-out", m)
	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Injected int64 `json:"injected_requests"`
		Fleet    *struct {
			ScaleUps int `json:"scale_ups"`
			OverTime []struct {
				StartS   float64 `json:"start_s"`
				Arrivals int64   `json:"arrivals"`
			} `json:"over_time"`
		} `json:"fleet"`
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Fleet == nil {
		t.Fatalf("summary: %v\n%.400s", err, data)
	}
	var arrivals int64
	last := 0.0
	for _, b := range s.Fleet.OverTime {
		arrivals += b.Arrivals
		if b.Arrivals > 0 {
			last = b.StartS
		}
	}
	if s.Injected != 918 || arrivals != 918 || last != 1140 || s.Fleet.ScaleUps < 1 {
		t.Fatalf("%d injected, %d in buckets, last arrivals in the bucket at %v s (want 1140: 5 minutes × 4), %d scale-ups",
			s.Injected, arrivals, last, s.Fleet.ScaleUps)
	}
}
