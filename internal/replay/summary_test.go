package replay

import (
	"strings"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
)

// TestTextSummaryGatewayTables: a run whose gateway let requests go shows
// the gateway's buckets and the per-tier and per-tenant tables with them;
// one without keeps the plain class table.
func TestTextSummaryGatewayTables(t *testing.T) {
	att := 0.5
	s := metrics.Summary{InjectedRequests: 10, CompletedRequests: 4, RejectedRequests: 1, GatewayQueueShed: 2, GatewayExpired: 1,
		GatewayEvicted: 1, GatewayQueueDepth: 1, SLOGiven: true,
		PerClass: map[string]metrics.ClassSummary{
			"critical":  {Count: 4, Completed: 4, SLOAttainment: &att, TTFTP99Ms: 120},
			"sheddable": {Count: 6, GatewayCounts: metrics.GatewayCounts{Rejected: 1, Shed: 2, Expired: 1, Evicted: 1}},
		},
		PerTenant: map[string]metrics.TenantSummary{"acme": {Completed: 4, OutputTokens: 99, Injected: 10,
			GatewayCounts: metrics.GatewayCounts{Rejected: 1, Shed: 2, Expired: 1, Evicted: 1}}},
	}
	out := TextSummary(&s)
	for _, want := range []string{
		"gateway    in its queue at the end 1  shed 2  expired 1  evicted 1\n",
		"class           count completed     attain    goodput     TTFT p99 rejected   shed expired evicted\n",
		"critical            4         4      50.0%          -       120.00        0      0       0       0\n",
		"sheddable           6         0          -          -         0.00        1      2       1       1\n",
		"acme               10         4          -          -           99        1      2       1       1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text summary lacks %q:\n%s", want, out)
		}
	}
	s.GatewayQueueShed, s.GatewayExpired, s.GatewayEvicted, s.GatewayQueueDepth, s.RejectedRequests = 0, 0, 0, 0, 0
	if out := TextSummary(&s); strings.Contains(out, "gateway") || strings.Contains(out, "tenant ") {
		t.Errorf("a run without gateway buckets shows them:\n%s", out)
	}
}

// TestStatusOfGatewayResults: the trace says how the gateway let each
// request go, and which rule refused it.
func TestStatusOfGatewayResults(t *testing.T) {
	for _, tc := range []struct {
		res  instance.Result
		want string
	}{
		{instance.Result{Status: instance.StatusRejected}, "rejected: admission"},
		{instance.Result{Status: instance.StatusRejected, Refusal: "tier-shed"}, "rejected: tier-shed"},
		{instance.Result{Status: instance.StatusRejected, Refusal: "tenant-budget"}, "rejected: tenant-budget"},
		{instance.Result{Status: instance.StatusShed}, "shed: gateway queue full"},
		{instance.Result{Status: instance.StatusExpired}, "expired: gateway queue TTL"},
		{instance.Result{Status: instance.StatusEvicted}, "evicted: gateway"},
		{instance.Result{Status: instance.StatusNew, InGateway: true}, "horizon: in the gateway queue"},
		{instance.Result{Status: instance.StatusNew}, "horizon"},
	} {
		if st, msg := statusOf(&tc.res); st != "incomplete" || msg != tc.want {
			t.Errorf("%s (refusal %q): %s %q, want incomplete %q", tc.res.Status, tc.res.Refusal, st, msg, tc.want)
		}
	}
}
