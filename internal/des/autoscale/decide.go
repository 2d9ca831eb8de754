package autoscale

import (
	"cmp"
	"slices"
)

// Offer is a variant the engine may place a replica on: its cost per
// replica-hour and the GPUs of it the inventory can still give (free on
// ready nodes, plus those of nodes still allowed to be provisioned).
type Offer struct {
	Variant        Variant
	CostPerReplica float64
	FreeGPUs       int
}

// Decision is one scale instruction: Delta > 0 adds replicas of Variant,
// Delta < 0 removes them; Delta 0 is no decision.
type Decision struct {
	Variant Variant
	Delta   int
}

// Bounds are the replica counts the engine keeps within.
type Bounds struct {
	Min, Max int // Max 0 = no bound but the inventory
}

// Decide turns one model's analysis into at most one decision: one replica
// more, on the cheapest offer whose free GPUs hold its tensor-parallel
// degree, when capacity is required; one fewer, of the most expensive
// variant with active replicas, when capacity is spare. It never returns
// both, and nothing when neither signal is on, the inventory has no room
// or the bounds forbid it. replicas counts the ready and loading ones.
func Decide(res Result, offers []Offer, replicas int, b Bounds) Decision {
	switch {
	case res.Required > 0:
		if b.Max > 0 && replicas >= b.Max {
			return Decision{}
		}
		o := slices.Clone(offers)
		slices.SortStableFunc(o, func(x, y Offer) int {
			return cmp.Or(cmp.Compare(x.CostPerReplica, y.CostPerReplica), cmp.Compare(x.Variant.GPU, y.Variant.GPU), cmp.Compare(x.Variant.TP, y.Variant.TP))
		})
		for _, x := range o {
			if x.FreeGPUs >= max(x.Variant.TP, 1) {
				return Decision{Variant: x.Variant, Delta: 1}
			}
		}
	case res.Spare > 0:
		if replicas <= max(b.Min, 1) {
			return Decision{}
		}
		for i := len(res.Variants) - 1; i >= 0; i-- {
			if v := res.Variants[i]; v.Replicas > 0 {
				return Decision{Variant: v.Variant, Delta: -1}
			}
		}
	}
	return Decision{}
}

// Stabilizer forwards a signal only once it has been present at every tick
// for its window (HPA stabilization): a tick without the signal resets its
// timer, and a window of 0 passes the signal at once.
type Stabilizer struct {
	UpWindowUs, DownWindowUs int64
	upSince, downSince       int64
	up, down                 bool
}

// Pass records the signals seen at now and reports which may act.
func (s *Stabilizer) Pass(now int64, up, down bool) (bool, bool) {
	track := func(on bool, seen *bool, since *int64, window int64) bool {
		if !on {
			*seen = false
			return false
		}
		if !*seen {
			*seen, *since = true, now
		}
		return now-*since >= window
	}
	return track(up, &s.up, &s.upSince, s.UpWindowUs), track(down, &s.down, &s.downSince, s.DownWindowUs)
}
