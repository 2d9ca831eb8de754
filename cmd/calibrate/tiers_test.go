package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"servesim/internal/report"
)

// TestSimMetricsGatewayCounts: the per-class blocks of replay's summary
// (--sim-metrics) give the simulated side of the tier tables; a negative
// count is refused where it is written.
func TestSimMetricsGatewayCounts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	metrics := write("m.json", `{"cache_hit_rate": 0.387,
  "per_class": {"critical": {"count": 20, "rejected_requests": 2, "gateway_queue_shed": 3}, "standard": {"count": 20}}}
`)
	out, errs, code := runCmd(t, "", realCSV, simJSON, "--sim-metrics", metrics, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Tiers *report.Tiers `json:"tiers"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Tiers == nil || len(r.Tiers.Classes) == 0 {
		t.Fatalf("no class table: %s", out)
	}
	seen := false
	for _, c := range r.Tiers.Classes {
		if c.Name != "critical" {
			continue
		}
		seen = true
		if g := c.Sim.Gateway; g == nil || *g != (report.GatewayCounts{Refused: 2, Shed: 3}) {
			t.Errorf("critical sim gateway %+v, want 2 refused, 3 shed", g)
		}
		if g := c.Real.Gateway; g == nil || *g != (report.GatewayCounts{}) {
			t.Errorf("critical real gateway %+v, want none", g)
		}
	}
	if !seen {
		t.Errorf("no critical row: %+v", r.Tiers.Classes)
	}

	neg := write("neg.json", "{\n  \"per_tenant\": {\"a\": {\"gateway_evicted\": -1}}\n}\n")
	_, errs, code = runCmd(t, "", realCSV, simJSON, "--sim-metrics", neg)
	if want := regexp.MustCompile(`neg\.json:2:3: field per_tenant: a gateway count is negative`); code != 2 || !want.MatchString(errs) {
		t.Errorf("negative count: exit %d, stderr %q, want 2 and %s", code, strings.TrimSpace(errs), want)
	}
}
