package sweep

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
)

// TestFleetRowsCostTheirFleet: a fleet's row costs its dollars over the
// run (not its GPUs at list price); min-cost ranks two fleets by those
// dollars, names the cheapest static fleet beside the answer, leaves the
// list prices of fleet-only GPUs out, and the CSV carries the totals.
func TestFleetRowsCostTheirFleet(t *testing.T) {
	slo, err := ParseSLO("ttft.p99<1s")
	if err != nil {
		t.Fatal(err)
	}
	lat := &Latency{P99: 500}
	// The static fleet: $8 over an hour. The autoscaled one: $7.50 over
	// half an hour, $15/h: cheaper over the trace, dearer per hour.
	d := &Doc{SLO: "ttft.p99<1s", Find: FindMinCost, Rows: []Row{
		{Case: 0, Role: RoleGrid, Status: StatusOK, DurationS: 3600, TokensPerSec: 1000, TTFT: lat, GPU: "H100", GPUs: 6,
			Params: []Param{{Key: "fleet_file", Value: "static.yaml"}}, Fleet: &FleetRow{GPUHours: 2, Dollars: 8, PeakReplicas: 3}},
		{Case: 1, Role: RoleGrid, Status: StatusOK, DurationS: 1800, TokensPerSec: 1000, TTFT: lat, GPU: "H100", GPUs: 2,
			Params: []Param{{Key: "fleet_file", Value: "autoscaled.yaml"}}, Fleet: &FleetRow{Autoscaled: true, GPUHours: 1.875, Dollars: 7.5, PeakReplicas: 3}},
	}}
	for i := range d.Rows {
		d.Rows[i].finish(slo, DefaultPrices())
	}
	if c := d.Rows[0].CostPerHour; c == nil || *c != 8 {
		t.Fatalf("static fleet: $%v/h, want 8 (its dollars over the hour, not 6 × the H100 list price)", c)
	}
	if c, m := d.Rows[1].CostPerHour, d.Rows[1].CostPerMTok; c == nil || *c != 15 || m == nil || math.Abs(*m-7.5/1.8) > 1e-9 {
		t.Fatalf("autoscaled fleet: $%v/h and $%v per million output tokens, want 15 and 7.5/1.8", c, m)
	}
	d.Finish(DefaultPrices())
	b := d.Answer.Best[0]
	if b.Case != 1 || b.Fleet == nil || !b.Fleet.Autoscaled || b.Static == nil || b.Static.Case != 0 || len(d.Prices) != 0 {
		t.Fatalf("best %+v (static %+v), prices %v: want case 1, the static fleet case 0, no list price", b, b.Static, d.Prices)
	}
	if v := d.Answer.Verdict[0]; !strings.Contains(v, "autoscaled fleet, $7.50 and 1.88 GPU-hours over the run") ||
		!strings.Contains(v, "the cheapest static fleet meeting it: fleet_file=static.yaml, static fleet, $8.00") {
		t.Fatalf("verdict %q", v)
	}
	var buf bytes.Buffer
	if err := d.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cell := map[string]string{}
	for i, name := range recs[0] {
		cell[name] = recs[2][i]
	}
	if cell["fleet_autoscaled"] != "true" || cell["fleet_dollars"] != "7.5" || cell["fleet_gpu_hours"] != "1.875" || cell["fleet_peak_replicas"] != "3" {
		t.Fatalf("CSV row: %v", cell)
	}
}
