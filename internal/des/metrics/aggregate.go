package metrics

import (
	"fmt"

	"servesim/internal/des/instance"
	"servesim/internal/steady"
)

// SLOTarget gates goodput for one SLO class; a zero field is not gated.
type SLOTarget struct {
	TTFTMs float64 `json:"ttft_ms,omitempty"`
	ITLMs  float64 `json:"itl_ms,omitempty"` // mean per-request ITL (TPOT convention)
	E2EMs  float64 `json:"e2e_ms,omitempty"`
}

// DefaultClass names the empty SLO class and the empty tenant.
const DefaultClass = "default"

// AnyClass keys the SLO target of every class without a target of its own
// (what --slo gives).
const AnyClass = "*"

type classAcc struct {
	injected, completed, good int64
	gw                        gatewayAcc
	ttft, e2e                 column // filled once a second class appears (Aggregator.split)
	itlSum, itlCount          int64
}

type tenantAcc struct {
	injected, completed, outTok, good int64
	gw                                gatewayAcc
}

// gatewayAcc counts the requests of a class or tenant the cluster refused
// or its gateway let go.
type gatewayAcc struct {
	rejected, shed, expired, evicted int64
}

func (g *gatewayAcc) add(st instance.Status) {
	switch st {
	case instance.StatusRejected:
		g.rejected++
	case instance.StatusShed:
		g.shed++
	case instance.StatusExpired:
		g.expired++
	case instance.StatusEvicted:
		g.evicted++
	}
}

// Aggregator accumulates results. Every request must be added exactly once:
// terminal results as they happen, live ones at the end of the run.
type Aggregator struct {
	targets map[string]SLOTarget

	injected, completed, lengthCapped, dropped, timedOut, rejected int64
	noDecodeKV                                                     int64 // P/D: dropped for want of decode KV blocks
	encodeRejected                                                 int64 // rejected at the encode stage
	shed, expired, evicted, gatewayQueued                          int64 // the gateway's buckets
	stillQueued, stillRunning                                      int64
	inTok, outTok, good                                            int64

	ttft, e2e, sched column
	tpot             []float64
	classes          map[string]*classAcc
	// split: more than one class was seen, and each keeps its own columns;
	// until then the one class's are the aggregator's.
	split   bool
	tenants map[string]*tenantAcc

	inTransfer int64
	perInst    []instAcc // by instance index (grown as results name them)

	// steadiness is the steady-state test over every request's arrival
	// and the time it left the queue (queueExit), in bounded memory.
	steadiness steady.Stream
}

// instAcc accumulates the results of one instance.
type instAcc struct {
	completed, dropped, timedOut, outTok int64
	evicted                              int64
	ttftSum, e2eSum                      int64
}

// NewAggregator returns an empty aggregator with per-class SLO targets
// (AnyClass for the classes without their own). Without targets no request
// is judged: the summary gives no goodput and no attainment.
func NewAggregator(targets map[string]SLOTarget) (*Aggregator, error) {
	for k, t := range targets {
		if t.TTFTMs < 0 || t.ITLMs < 0 || t.E2EMs < 0 {
			return nil, fmt.Errorf("metrics: SLO target of class %q has a negative bound", k)
		}
	}
	return &Aggregator{targets: targets, classes: map[string]*classAcc{}, tenants: map[string]*tenantAcc{}}, nil
}

func orDefault(s string) string {
	if s == "" {
		return DefaultClass
	}
	return s
}

// Add accounts one request's result.
func (a *Aggregator) Add(res *instance.Result) {
	a.injected++
	cls := a.classes[orDefault(res.SLOClass)]
	if cls == nil {
		if len(a.classes) == 1 {
			// Every sample so far is the first class's.
			for _, first := range a.classes {
				first.ttft, first.e2e = a.ttft.clone(), a.e2e.clone()
			}
			a.split = true
		}
		cls = &classAcc{}
		a.classes[orDefault(res.SLOClass)] = cls
	}
	cls.injected++
	ten := a.tenants[orDefault(res.Tenant)]
	if ten == nil {
		ten = &tenantAcc{}
		a.tenants[orDefault(res.Tenant)] = ten
	}
	ten.injected++
	cls.gw.add(res.Status)
	ten.gw.add(res.Status)
	var in *instAcc
	if res.Instance >= 0 {
		for len(a.perInst) <= res.Instance {
			a.perInst = append(a.perInst, instAcc{})
		}
		in = &a.perInst[res.Instance]
	}
	a.steadiness.Add(res.ArrivalUs, queueExit(res))
	if res.InTransfer {
		a.inTransfer++
		return
	}
	if res.InGateway {
		a.gatewayQueued++
		return
	}
	switch res.Status {
	case instance.StatusCompleted:
	case instance.StatusDropped:
		if res.NoDecodeKV {
			a.noDecodeKV++
			return
		}
		a.dropped++
		if in != nil {
			in.dropped++
		}
		return
	case instance.StatusTimedOut:
		a.timedOut++
		if in != nil {
			in.timedOut++
		}
		return
	case instance.StatusRejected:
		if res.EncodeRejected {
			a.encodeRejected++
			return
		}
		a.rejected++
		return
	case instance.StatusShed:
		a.shed++
		return
	case instance.StatusExpired:
		a.expired++
		return
	case instance.StatusEvicted:
		a.evicted++
		if in != nil {
			in.evicted++
		}
		return
	case instance.StatusRunning:
		a.stillRunning++
		return
	default: // new, pending, queued
		a.stillQueued++
		return
	}
	a.completed++
	if res.LengthCapped {
		a.lengthCapped++
	}
	a.inTok += int64(res.PromptTokens)
	a.outTok += int64(res.OutputTokens)
	a.ttft.add(res.TTFTUs)
	a.e2e.add(res.E2EUs)
	a.sched.add(res.SchedulingDelayUs)
	tpot := res.TPOTUs()
	if res.OutputTokens >= 2 {
		a.tpot = append(a.tpot, tpot)
	}
	cls.completed++
	if a.split {
		cls.ttft.add(res.TTFTUs)
		cls.e2e.add(res.E2EUs)
	}
	cls.itlSum += res.ITLSumUs
	cls.itlCount += int64(res.ITLCount)
	ten.completed++
	ten.outTok += int64(res.OutputTokens)
	if in != nil {
		in.completed++
		in.outTok += int64(res.OutputTokens)
		in.ttftSum += res.TTFTUs
		in.e2eSum += res.E2EUs
	}
	if a.isGood(res, tpot) {
		a.good++
		cls.good++
		ten.good++
	}
}

// queueExit is when a request left the queue for the steady-state test:
// first scheduled; −1 when it never was and still waits or timed out (load
// the deployment did not serve); its arrival when it was refused or
// dropped (no load); when the gateway let it go from its queue (shed,
// expired), then: the gateway bounds its queue that way.
func queueExit(res *instance.Result) int64 {
	switch {
	case res.Status == instance.StatusTimedOut:
		return -1
	case res.FirstScheduledUs >= 0:
		return res.FirstScheduledUs
	case res.Status == instance.StatusDropped || res.Status == instance.StatusRejected:
		return res.ArrivalUs
	case res.Status == instance.StatusShed || res.Status == instance.StatusExpired:
		return res.DoneUs
	}
	return -1
}

// target is the SLO target of a class, false when it has none.
func (a *Aggregator) target(class string) (SLOTarget, bool) {
	if t, ok := a.targets[class]; ok {
		return t, true
	}
	t, ok := a.targets[AnyClass]
	return t, ok
}

func (a *Aggregator) isGood(res *instance.Result, tpotUs float64) bool {
	t, ok := a.target(orDefault(res.SLOClass))
	if !ok {
		return true
	}
	if t.TTFTMs > 0 && float64(res.TTFTUs)/1e3 > t.TTFTMs {
		return false
	}
	if t.ITLMs > 0 && tpotUs/1e3 > t.ITLMs {
		return false
	}
	if t.E2EMs > 0 && float64(res.E2EUs)/1e3 > t.E2EMs {
		return false
	}
	return true
}

// Injected is the number of results added.
func (a *Aggregator) Injected() int64 { return a.injected }

// RunInfo carries the run-level totals that are not per request.
type RunInfo struct {
	DurationUs        int64 // end time of the run
	Preemptions       int64
	KVUsedBlockUs     int64   // Σ used blocks × Δ over steps, all instances
	KVCapacityBlockUs int64   // Σ T × Δ over steps, all instances
	KVPeak            float64 // peak utilisation of any instance
	CacheHits         int64
	CacheMisses       int64
	AllocFailures     int64
	// The CPU KV tier's totals (kvcache.Stats): blocks offloaded and
	// reloaded, reloads that thrash, and the reload time.
	CPUOffloads, CPUReloads, CPUThrashing, CPUReloadUs int64
	ITL                                                []instance.ValueCount // every ITL sample of completed requests (µs)

	// PerInstance, when set (a cluster run), adds the per_instance block,
	// the routing distribution and the instance fairness index to the
	// summary.
	PerInstance []InstanceInfo
	// Regret, when set, is the counterfactual regret of the routing
	// decisions, per pool.
	Regret []RegretSummary
}

// InstanceInfo is one instance's run-level totals.
type InstanceInfo struct {
	Pool              string // "prefill" or "decode" with P/D, else ""
	Routed            int64  // requests (and P/D parts) routed to it
	Steps             int64
	BusyUs            int64 // Σ Δ
	Preemptions       int64
	KVUsedBlockUs     int64
	KVCapacityBlockUs int64
	KVPeak            float64
	CacheHits         int64
	CacheMisses       int64
}
