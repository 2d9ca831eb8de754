package metrics

import (
	"testing"

	"servesim/internal/des/instance"
)

// TestGatewayBuckets: the gateway's results land in their own buckets,
// overall, per class and per tenant (injected = the sum of the buckets),
// and the per-tenant block carries attainment and goodput with an SLO.
func TestGatewayBuckets(t *testing.T) {
	a, _ := NewAggregator(map[string]SLOTarget{"critical": {TTFTMs: 100}})
	base := instance.Result{Instance: -1, FirstScheduledUs: -1, FirstTokenUs: -1, TTFTUs: -1, E2EUs: -1, SchedulingDelayUs: -1}
	add := func(class, tenant string, st instance.Status, mod func(*instance.Result)) {
		r := base
		r.SLOClass, r.Tenant, r.Status = class, tenant, st
		if mod != nil {
			mod(&r)
		}
		a.Add(&r)
	}
	done := func(r *instance.Result) {
		r.Instance, r.FirstScheduledUs, r.FirstTokenUs, r.DoneUs, r.TTFTUs, r.E2EUs, r.OutputTokens = 0, 1, 2, 3, 50, 90, 4
	}
	add("critical", "a", instance.StatusCompleted, done)
	add("critical", "a", instance.StatusRejected, nil)
	add("sheddable", "b", instance.StatusShed, nil)
	add("sheddable", "b", instance.StatusExpired, nil)
	add("sheddable", "b", instance.StatusEvicted, func(r *instance.Result) { r.Instance = 0 })
	add("sheddable", "b", instance.StatusNew, func(r *instance.Result) { r.InGateway = true })
	s := a.Summary(RunInfo{DurationUs: 1e6})
	if s.GatewayQueueShed != 1 || s.GatewayExpired != 1 || s.GatewayEvicted != 1 || s.GatewayQueueDepth != 1 || s.RejectedRequests != 1 || s.StillQueued != 0 {
		t.Errorf("buckets: %+v", s)
	}
	if sum := s.CompletedRequests + s.RejectedRequests + s.GatewayQueueShed + s.GatewayExpired + s.GatewayEvicted + s.GatewayQueueDepth; sum != s.InjectedRequests {
		t.Errorf("buckets sum to %d, injected %d", sum, s.InjectedRequests)
	}
	if got, want := s.PerClass["sheddable"].GatewayCounts, (GatewayCounts{Shed: 1, Expired: 1, Evicted: 1}); got != want {
		t.Errorf("sheddable: got %+v, want %+v", got, want)
	}
	ta, tb := s.PerTenant["a"], s.PerTenant["b"]
	if ta.Rejected != 1 || ta.Injected != 2 || ta.SLOAttainment == nil || *ta.SLOAttainment != 0.5 || *ta.GoodputRPS != 1 {
		t.Errorf("tenant a: %+v", ta)
	}
	if tb.Injected != 4 || tb.Shed != 1 || tb.Expired != 1 || tb.Evicted != 1 || s.PerInstance != nil {
		t.Errorf("tenant b: %+v", tb)
	}
	// The steady-state test: a request the gateway shed or let expire left
	// the queue when it did; one still in it never left.
	for _, tc := range []struct {
		st   instance.Status
		want int64
	}{{instance.StatusShed, 7}, {instance.StatusExpired, 7}, {instance.StatusRejected, 2}, {instance.StatusTimedOut, -1}, {instance.StatusNew, -1}} {
		r := base
		r.Status, r.ArrivalUs, r.DoneUs = tc.st, 2, 7
		if got := queueExit(&r); got != tc.want {
			t.Errorf("queue exit of a %s request: got %d, want %d", tc.st, got, tc.want)
		}
	}
}
