package report

import (
	"cmp"
	"math"
	"slices"

	"servesim/internal/quantile"
	"servesim/internal/tracev2"
)

// Tiers is the per-SLO-class and per-tenant view of docs/calibrate.md §10:
// present when a trace row names a tenant (tenant_id), or names an SLO
// class (slo_class) in a run with a gateway in front (flow control in
// either deployment, or a request let go before it ran on either side); a
// run without either keeps its per-class comparison in by_slo_class and
// goodput alone. Warm-up rows are left out, as everywhere in the report.
type Tiers struct {
	Classes []TierRow `json:"classes,omitempty"` // by name; the unnamed class is "default"
	Tenants []TierRow `json:"tenants,omitempty"` // by name; the unnamed tenant is "-"
}

// TierRow is one class's or tenant's requests on both sides.
type TierRow struct {
	Name string   `json:"name"`
	Real TierSide `json:"real"`
	Sim  TierSide `json:"sim"`
}

// TierSide is one side's count of a tier's requests, how many completed,
// its attainment and goodput against the SLO targets of its requests'
// classes (absent when none has one), its TTFT and E2E p99 over the
// completed requests (absent when none completed), and the requests the
// serving stack let go before they ran.
type TierSide struct {
	Requests      int            `json:"requests"`
	Completed     int            `json:"completed"`
	SLOAttainment *float64       `json:"slo_attainment,omitempty"` // good / requests with a target
	GoodputRPS    *float64       `json:"goodput_rps,omitempty"`
	TTFTP99Ms     *float64       `json:"ttft_p99_ms,omitempty"`
	E2EP99Ms      *float64       `json:"e2e_p99_ms,omitempty"`
	Gateway       *GatewayCounts `json:"gateway,omitempty"` // the sim side's only from --sim-metrics
}

// GatewayCounts are the requests let go before they ran, per bucket
// (tracev2.Outcome): refused at admission, shed from the gateway queue,
// expired in it, evicted after dispatch.
type GatewayCounts struct {
	Refused int `json:"refused"`
	Shed    int `json:"shed"`
	Expired int `json:"expired"`
	Evicted int `json:"evicted"`
}

func (g *GatewayCounts) add(o tracev2.Outcome) {
	switch o {
	case tracev2.OutcomeRefused:
		g.Refused++
	case tracev2.OutcomeShed:
		g.Shed++
	case tracev2.OutcomeExpired:
		g.Expired++
	case tracev2.OutcomeEvicted:
		g.Evicted++
	}
}

// tierAcc gathers one tier's rows.
type tierAcc struct {
	real, sim                   TierSide
	targeted, realGood, simGood int
	realTTFT, realE2E           []float64
	simTTFT, simE2E             []float64
}

// tenantName names the unnamed tenant.
func tenantName(t string) string {
	if t == "" {
		return "-"
	}
	return t
}

// computeTiers builds the Tiers over the classified rows; nil when they
// are not shown (Tiers). The simulated side's gateway counts come from
// in.SimMetrics when it has them.
func computeTiers(m *matching, s *settings, runtimeS float64, in *Input) *Tiers {
	classes, tenants := map[string]*tierAcc{}, map[string]*tierAcc{}
	named, namedTenant := false, false
	for i := range m.rows {
		rw := &m.rows[i]
		named = named || rw.class != ""
		namedTenant = namedTenant || rw.rec.TenantID != ""
		if rw.bucket == bucketWarmUp {
			continue
		}
		for _, acc := range []*tierAcc{accFor(classes, className(rw.class)), accFor(tenants, tenantName(rw.rec.TenantID))} {
			acc.note(rw, m, s)
		}
	}
	if !namedTenant && !(named && gatewayInFront(classes, in)) {
		return nil
	}
	t := &Tiers{}
	if named {
		t.Classes = tierRows(classes, runtimeS, simGateway(in.SimMetrics, false))
	}
	if namedTenant {
		t.Tenants = tierRows(tenants, runtimeS, simGateway(in.SimMetrics, true))
	}
	return t
}

// gatewayInFront says whether the run had a gateway that could hold or let
// go requests: flow control in the trace's or the simulation's
// deployment, or a request let go on either side.
func gatewayInFront(classes map[string]*tierAcc, in *Input) bool {
	deps := []map[string]any{in.Header.Deployment}
	if sm := in.SimMetrics; sm != nil {
		deps = append(deps, sm.Deployment)
		for _, src := range []map[string]GatewayCounts{sm.ClassGateway, sm.TenantGateway} {
			for _, g := range src {
				if g != (GatewayCounts{}) {
					return true
				}
			}
		}
	}
	for _, d := range deps {
		if on, _ := d["flow_control"].(bool); on {
			return true
		}
	}
	for _, a := range classes {
		if *a.real.Gateway != (GatewayCounts{}) {
			return true
		}
	}
	return false
}

func accFor(m map[string]*tierAcc, name string) *tierAcc {
	a := m[name]
	if a == nil {
		a = &tierAcc{real: TierSide{Gateway: &GatewayCounts{}}}
		m[name] = a
	}
	return a
}

// note adds one non-warm-up row to the tier.
func (a *tierAcc) note(rw *row, m *matching, s *settings) {
	rec := rw.rec
	a.real.Requests++
	a.sim.Requests++
	a.real.Gateway.add(tracev2.OutcomeOf(rec.Status, rec.ErrorMessage))
	ok := rec.Status == "ok" && validTiming(rec)
	if ok {
		a.real.Completed++
		ttft, e2e, _, _ := realLatencies(rw, m, s)
		a.realTTFT, a.realE2E = append(a.realTTFT, ttft), append(a.realE2E, e2e)
	}
	sim := rw.sim
	simOK := sim != nil && finite(s.simTTFT(sim)) && finite(s.simE2E(sim))
	if simOK {
		a.sim.Completed++
		a.simTTFT, a.simE2E = append(a.simTTFT, s.simTTFT(sim)), append(a.simE2E, s.simE2E(sim))
	}
	t, targeted := s.targets[className(rw.class)]
	if !targeted {
		return
	}
	a.targeted++
	tally := newTally()
	ttft, e2e, itl, itlOK := realLatencies(rw, m, s)
	if good, _ := judge(t, ttft, e2e, itl, itlOK, rec.Status != "ok", tally); good {
		a.realGood++
	}
	if simOK {
		perTok, perTokOK := simITL(sim)
		if good, _ := judge(t, s.simTTFT(sim), s.simE2E(sim), perTok, perTokOK, false, tally); good {
			a.simGood++
		}
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// tierRows finishes the tiers, sorted by name.
func tierRows(accs map[string]*tierAcc, runtimeS float64, simGW map[string]GatewayCounts) []TierRow {
	out := make([]TierRow, 0, len(accs))
	for name, a := range accs {
		a.real.TTFTP99Ms, a.real.E2EP99Ms = p99Ms(a.realTTFT), p99Ms(a.realE2E)
		a.sim.TTFTP99Ms, a.sim.E2EP99Ms = p99Ms(a.simTTFT), p99Ms(a.simE2E)
		if a.targeted > 0 {
			a.real.SLOAttainment, a.sim.SLOAttainment = ratio(a.realGood, a.targeted), ratio(a.simGood, a.targeted)
			if runtimeS > 0 {
				rg, sg := float64(a.realGood)/runtimeS, float64(a.simGood)/runtimeS
				a.real.GoodputRPS, a.sim.GoodputRPS = &rg, &sg
			}
		}
		if g, ok := simGW[name]; ok {
			a.sim.Gateway = &g
		}
		out = append(out, TierRow{Name: name, Real: a.real, Sim: a.sim})
	}
	slices.SortFunc(out, func(x, y TierRow) int { return cmp.Compare(x.Name, y.Name) })
	return out
}

func ratio(n, d int) *float64 {
	v := float64(n) / float64(d)
	return &v
}

// p99Ms is the 99th percentile of latencies in µs, in ms; nil when there are none.
func p99Ms(us []float64) *float64 {
	if len(us) == 0 {
		return nil
	}
	v := quantile.Of(us, 99) / 1000
	return &v
}

// simGateway is the simulated side's gateway counts per class or tenant
// (--sim-metrics), keyed by the names the tiers use; nil without them.
func simGateway(sm *SimMetrics, tenants bool) map[string]GatewayCounts {
	if sm == nil {
		return nil
	}
	src, name := sm.ClassGateway, className
	if tenants {
		src, name = sm.TenantGateway, tenantName
	}
	if src == nil {
		return nil
	}
	out := make(map[string]GatewayCounts, len(src))
	for k, g := range src {
		out[name(k)] = g
	}
	return out
}
