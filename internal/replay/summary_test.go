package replay

import (
	"strings"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
	"servesim/internal/tracev2"
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
		res     instance.Result
		want    string
		outcome tracev2.Outcome // what a report reading the trace counts it as
	}{
		{instance.Result{Status: instance.StatusRejected}, "rejected: admission", tracev2.OutcomeRefused},
		{instance.Result{Status: instance.StatusRejected, Refusal: "tier-shed"}, "rejected: tier-shed", tracev2.OutcomeRefused},
		{instance.Result{Status: instance.StatusRejected, Refusal: "tenant-budget"}, "rejected: tenant-budget", tracev2.OutcomeRefused},
		{instance.Result{Status: instance.StatusRejected, EncodeRejected: true}, "rejected: no encode instance takes its media", tracev2.OutcomeRefused},
		{instance.Result{Status: instance.StatusShed}, "shed: gateway queue full", tracev2.OutcomeShed},
		{instance.Result{Status: instance.StatusExpired}, "expired: gateway queue TTL", tracev2.OutcomeExpired},
		{instance.Result{Status: instance.StatusEvicted}, "evicted: gateway", tracev2.OutcomeEvicted},
		{instance.Result{Status: instance.StatusNew, InGateway: true}, "horizon: in the gateway queue", tracev2.OutcomeNone},
		{instance.Result{Status: instance.StatusNew}, "horizon", tracev2.OutcomeNone},
	} {
		st, msg := statusOf(&tc.res)
		if st != "incomplete" || msg != tc.want {
			t.Errorf("%s (refusal %q): %s %q, want incomplete %q", tc.res.Status, tc.res.Refusal, st, msg, tc.want)
		}
		if got := tracev2.OutcomeOf(st, msg); got != tc.outcome {
			t.Errorf("%s %q reads back as outcome %d, want %d", st, msg, got, tc.outcome)
		}
	}
}
