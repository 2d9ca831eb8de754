package report

import (
	"encoding/json"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// hostileTenant is a tenant name that would run in a page not escaping it.
const hostileTenant = "<script>alert(1)</script>"

// tieredInput is three tiers and two tenants behind a gateway: critical
// (tenant a: three served, one refused by tier), standard (a served, b's
// expired in the queue), sheddable (b: one served, one shed, one evicted,
// one answered HTTP 429), and the simulation's results and gateway counts.
func tieredInput() Input {
	ms := int64(1000)
	row := func(id int64, tenant, class string, ttftMs, e2eMs int64) tracev2.Record {
		send := id * 1000 * ms
		r := okRec(id, send, send+ttftMs*ms, send+e2eMs*ms, 100, 20)
		r.TenantID, r.SLOClass = tenant, class
		return r
	}
	gone := func(id int64, tenant, class, status, msg string) tracev2.Record {
		return tracev2.Record{RequestID: id, TenantID: tenant, SLOClass: class, InputTokens: 100, OutputTokens: 20,
			ArrivalTimeUs: id * 1000 * ms, SendTimeUs: id * 1000 * ms, Status: status, ErrorMessage: msg}
	}
	trace := []tracev2.Record{
		row(0, "a", "critical", 100, 1000), row(1, "a", "critical", 200, 1100), row(2, "a", "critical", 300, 1200),
		gone(3, "a", "critical", "incomplete", "rejected: tier-shed"),
		row(4, "a", "standard", 400, 2000),
		gone(5, hostileTenant, "standard", "incomplete", "expired: gateway queue TTL"),
		row(6, hostileTenant, "sheddable", 50, 500),
		gone(7, hostileTenant, "sheddable", "incomplete", "shed: gateway queue full"),
		gone(8, hostileTenant, "sheddable", "incomplete", "evicted: gateway"),
		gone(9, hostileTenant, "sheddable", "error", "HTTP 429: too many requests"),
	}
	sim := []tracev2.SimResult{
		simOf(0, 110e3, 1000e3, 100, 20), simOf(1, 210e3, 1100e3, 100, 20), simOf(2, 310e3, 1200e3, 100, 20),
		simOf(4, 500e3, 2000e3, 100, 20), simOf(6, 60e3, 500e3, 100, 20),
	}
	return Input{
		Header: TraceHeader{GoodputSLOTargets: map[string]SLOTarget{"critical": {TTFTMs: 250}, "standard": {TTFTMs: 1000}}},
		Trace:  trace, Sim: sim,
		SimMetrics: &SimMetrics{
			ClassGateway:  map[string]GatewayCounts{"critical": {Refused: 1}, "standard": {Expired: 1}, "sheddable": {Shed: 2, Evicted: 1}},
			TenantGateway: map[string]GatewayCounts{"a": {Refused: 1}, hostileTenant: {Expired: 1, Shed: 2, Evicted: 1}},
		},
	}
}

func ptr(v float64) *float64 { return &v }

// TestTiersPerClassAndTenant: every bucket is counted in its class and
// its tenant, attainment counts a request let go as missed, and the p99s
// are over the completed requests of each side.
func TestTiersPerClassAndTenant(t *testing.T) {
	r := build(t, tieredInput(), nil)
	if r.Tiers == nil {
		t.Fatal("no tiers for a trace with classes, tenants and gateway outcomes")
	}
	runtimeS := 6.5 // first send 0 s, last chunk 6.5 s (request 6)
	want := map[string]TierRow{
		"critical": {Name: "critical",
			Real: TierSide{Requests: 4, Completed: 3, SLOAttainment: ptr(0.5), GoodputRPS: ptr(2 / runtimeS),
				TTFTP99Ms: ptr(298), E2EP99Ms: ptr(1198), Gateway: &GatewayCounts{Refused: 1}},
			Sim: TierSide{Requests: 4, Completed: 3, SLOAttainment: ptr(0.5), GoodputRPS: ptr(2 / runtimeS),
				TTFTP99Ms: ptr(308), E2EP99Ms: ptr(1198), Gateway: &GatewayCounts{Refused: 1}}},
		"standard": {Name: "standard",
			Real: TierSide{Requests: 2, Completed: 1, SLOAttainment: ptr(0.5), GoodputRPS: ptr(1 / runtimeS),
				TTFTP99Ms: ptr(400), E2EP99Ms: ptr(2000), Gateway: &GatewayCounts{Expired: 1}},
			Sim: TierSide{Requests: 2, Completed: 1, SLOAttainment: ptr(0.5), GoodputRPS: ptr(1 / runtimeS),
				TTFTP99Ms: ptr(500), E2EP99Ms: ptr(2000), Gateway: &GatewayCounts{Expired: 1}}},
		"sheddable": {Name: "sheddable",
			Real: TierSide{Requests: 4, Completed: 1, TTFTP99Ms: ptr(50), E2EP99Ms: ptr(500),
				Gateway: &GatewayCounts{Refused: 1, Shed: 1, Evicted: 1}},
			Sim: TierSide{Requests: 4, Completed: 1, TTFTP99Ms: ptr(60), E2EP99Ms: ptr(500),
				Gateway: &GatewayCounts{Shed: 2, Evicted: 1}}},
		"a": {Name: "a",
			Real: TierSide{Requests: 5, Completed: 4, SLOAttainment: ptr(0.6), GoodputRPS: ptr(3 / runtimeS),
				TTFTP99Ms: ptr(397), E2EP99Ms: ptr(1976), Gateway: &GatewayCounts{Refused: 1}},
			Sim: TierSide{Requests: 5, Completed: 4, SLOAttainment: ptr(0.6), GoodputRPS: ptr(3 / runtimeS),
				TTFTP99Ms: ptr(494.3), E2EP99Ms: ptr(1976), Gateway: &GatewayCounts{Refused: 1}}},
		hostileTenant: {Name: hostileTenant,
			Real: TierSide{Requests: 5, Completed: 1, SLOAttainment: ptr(0), GoodputRPS: ptr(0),
				TTFTP99Ms: ptr(50), E2EP99Ms: ptr(500), Gateway: &GatewayCounts{Refused: 1, Shed: 1, Expired: 1, Evicted: 1}},
			Sim: TierSide{Requests: 5, Completed: 1, SLOAttainment: ptr(0), GoodputRPS: ptr(0),
				TTFTP99Ms: ptr(60), E2EP99Ms: ptr(500), Gateway: &GatewayCounts{Shed: 2, Expired: 1, Evicted: 1}}},
	}
	check := func(kind string, rows []TierRow, names ...string) {
		t.Helper()
		if len(rows) != len(names) {
			t.Fatalf("%s: %d rows, want %v", kind, len(rows), names)
		}
		for i, name := range names {
			got, w := rows[i], want[name]
			if got.Name != name {
				t.Errorf("%s row %d: %q, want %q", kind, i, got.Name, name)
			}
			for _, side := range []struct {
				name      string
				got, want TierSide
			}{{"real", got.Real, w.Real}, {"sim", got.Sim, w.Sim}} {
				g, e := side.got, side.want
				if g.Requests != e.Requests || g.Completed != e.Completed || !sameCounts(g.Gateway, e.Gateway) {
					t.Errorf("%s %s %s: requests %d completed %d gateway %+v, want %d %d %+v",
						kind, name, side.name, g.Requests, g.Completed, g.Gateway, e.Requests, e.Completed, e.Gateway)
				}
				for _, f := range []struct {
					what      string
					got, want *float64
				}{{"attainment", g.SLOAttainment, e.SLOAttainment}, {"goodput", g.GoodputRPS, e.GoodputRPS},
					{"ttft p99", g.TTFTP99Ms, e.TTFTP99Ms}, {"e2e p99", g.E2EP99Ms, e.E2EP99Ms}} {
					if (f.got == nil) != (f.want == nil) || (f.got != nil && !near(*f.got, *f.want)) {
						t.Errorf("%s %s %s %s: %v, want %v", kind, name, side.name, f.what, deref(f.got), deref(f.want))
					}
				}
			}
		}
	}
	check("class", r.Tiers.Classes, "critical", "sheddable", "standard")
	check("tenant", r.Tiers.Tenants, hostileTenant, "a")
}

func sameCounts(a, b *GatewayCounts) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestTiersRenderings: the three renderings carry the same cells, real /
// sim; a hostile tenant name is escaped in the page and the Markdown and
// kept as it is in the JSON.
func TestTiersRenderings(t *testing.T) {
	r := build(t, tieredInput(), nil)
	var page, md, txt, js strings.Builder
	for _, w := range []func() error{
		func() error { return r.WriteHTML(&page) }, func() error { return r.WriteMarkdown(&md) },
		func() error { return r.WriteText(&txt) }, func() error { return r.WriteJSON(&js) },
	} {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(page.String(), hostileTenant) || !strings.Contains(page.String(), "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>") {
		t.Error("page does not escape the tenant name")
	}
	for _, want := range []string{
		"<h2>Tiers</h2>", "<h3>SLO classes</h3>", "<h3>Tenants</h3>",
		`<tr><td>critical</td><td class="n">4</td><td class="n">3 / 3</td><td class="n">50.0% / 50.0%</td><td class="n">0.308 / 0.308</td><td class="n">298 ms / 308 ms</td><td class="n">1.20 s / 1.20 s</td><td class="n">1 / 1</td><td class="n">0 / 0</td><td class="n">0 / 0</td><td class="n">0 / 0</td></tr>`,
		`<td class="n">1 / 0</td><td class="n">1 / 2</td><td class="n">0 / 0</td><td class="n">1 / 1</td></tr>`,
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(md.String(), "| \\<script\\>alert(1)\\</script\\> | 5 | 1 / 1 | 0.0% / 0.0% |") {
		t.Errorf("markdown lacks the escaped tenant row:\n%s", md.String())
	}
	wantRow := "sheddable 4 1 / 1 - / - - / - 50.0 ms / 60.0 ms 500 ms / 500 ms 1 / 0 1 / 2 0 / 0 1 / 1"
	found := false
	for _, line := range strings.Split(txt.String(), "\n") {
		found = found || strings.Join(strings.Fields(line), " ") == wantRow
	}
	if !found {
		t.Errorf("text lacks the row %q:\n%s", wantRow, txt.String())
	}
	var back struct {
		Tiers Tiers `json:"tiers"`
	}
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil {
		t.Fatal(err)
	}
	if n := len(back.Tiers.Tenants); n != 2 || back.Tiers.Tenants[0].Name != hostileTenant || back.Tiers.Tenants[0].Real.Gateway.Evicted != 1 {
		t.Errorf("json tenants: %+v", back.Tiers.Tenants)
	}
}

// TestTiersShownOnlyBehindAGateway: classes alone, with no gateway in
// front, keep the report as it was; flow control in the deployment, or a
// tenant, shows the tables.
func TestTiersShownOnlyBehindAGateway(t *testing.T) {
	plain := func() Input {
		in := tieredInput()
		in.SimMetrics = nil
		trace := in.Trace[:0]
		for _, rec := range in.Trace {
			if rec.Status == "ok" {
				rec.TenantID = ""
				trace = append(trace, rec)
			}
		}
		in.Trace = trace
		return in
	}
	if r := build(t, plain(), nil); r.Tiers != nil {
		t.Errorf("classes without a gateway: tiers %+v, want none", r.Tiers)
	}
	in := plain()
	in.Header.Deployment = map[string]any{"flow_control": true}
	if r := build(t, in, nil); r.Tiers == nil || len(r.Tiers.Classes) != 3 || r.Tiers.Tenants != nil {
		t.Errorf("classes behind flow control: tiers %+v, want three classes", r.Tiers)
	}
	in = plain()
	in.Trace[0].TenantID = "a"
	if r := build(t, in, nil); r.Tiers == nil || len(r.Tiers.Tenants) != 2 {
		t.Errorf("a named tenant: tiers %+v, want two tenants", r.Tiers)
	}
}
