package cluster

import "servesim/internal/des/metrics"

// FleetReport is the fleet over time and in total.
type FleetReport struct {
	BucketUs int64
	Buckets  []FleetBucket
	// Totals over the run: replica-hours of ready replicas, GPU-hours and
	// dollars of the provisioned nodes.
	ReplicaHours, GPUHours, Dollars float64
	PeakReplicas                    int
	Placed, Removed, Failed         int // actuated scale-ups, scale-downs, and scale-ups without room
	// Cut are the requests an immediate drain stopped and routed again;
	// CutRejected those of them no replica was left to take (they end
	// rejected, and count among the outcome's rejected too).
	Cut, CutRejected int64
	Events           []ScaleEvent
}

// FleetBucket is one time bucket: time averages of the ready, loading
// (placed or loading) and draining replicas and of the provisioned GPUs,
// and the dollars the nodes cost in it.
type FleetBucket struct {
	StartUs                                 int64
	Replicas, Loading, Draining, GPUs, Cost float64
}

type level struct {
	ready, loading, draining int
	gpus, dollarsPerHour     float64
}

// accumulator records the fleet's levels as they change, to integrate
// them over time, bucket by bucket, once the run's end is known.
type accumulator struct {
	width   int64
	changes []change
	peak    int
}

type change struct {
	at int64
	level
}

func (a *accumulator) levels(now int64, l level) {
	a.peak = max(a.peak, l.ready)
	if k := len(a.changes); k > 0 && a.changes[k-1].level == l {
		return
	}
	if k := len(a.changes); k > 0 && a.changes[k-1].at == now {
		a.changes[k-1].level = l
		return
	}
	a.changes = append(a.changes, change{now, l})
}

// buckets integrates the levels from 0 to end: sums of level × µs.
func (a *accumulator) buckets(end int64) []FleetBucket {
	var out []FleetBucket
	for k, c := range a.changes {
		from, to := c.at, end
		if k+1 < len(a.changes) {
			to = min(end, a.changes[k+1].at)
		}
		for from < to {
			b := from / a.width
			stop := min(to, (b+1)*a.width)
			if b >= metrics.MaxFleetBuckets-1 { // the last bucket takes the rest
				b, stop = metrics.MaxFleetBuckets-1, to
			}
			for int64(len(out)) <= b {
				out = append(out, FleetBucket{StartUs: int64(len(out)) * a.width})
			}
			dt := float64(stop - from)
			x := &out[b]
			x.Replicas += float64(c.ready) * dt
			x.Loading += float64(c.loading) * dt
			x.Draining += float64(c.draining) * dt
			x.GPUs += c.gpus * dt
			x.Cost += c.dollarsPerHour * dt
			from = stop
		}
	}
	return out
}

// Fleet reports the fleet over the run (nil without a Fleet). Call it
// after Run.
func (c *Cluster) Fleet() *FleetReport {
	f := c.fleet
	if f == nil {
		return nil
	}
	a := &f.acc
	rep := &FleetReport{BucketUs: a.width, PeakReplicas: a.peak, Failed: f.failed, Events: f.events, Cut: f.cut, CutRejected: f.cutRejected}
	for _, b := range a.buckets(f.end) {
		w := float64(min(a.width, f.end-b.StartUs))
		if b.StartUs/a.width == metrics.MaxFleetBuckets-1 {
			w = float64(f.end - b.StartUs)
		}
		rep.ReplicaHours += b.Replicas / 3.6e9
		rep.GPUHours += b.GPUs / 3.6e9
		rep.Dollars += b.Cost / 3.6e9
		if w > 0 {
			b.Replicas, b.Loading, b.Draining, b.GPUs = b.Replicas/w, b.Loading/w, b.Draining/w, b.GPUs/w
		}
		b.Cost /= 3.6e9
		rep.Buckets = append(rep.Buckets, b)
	}
	for _, e := range f.events {
		switch {
		case e.Delta > 0 && e.Done:
			rep.Placed++
		case e.Delta < 0 && e.Done:
			rep.Removed++
		}
	}
	return rep
}
