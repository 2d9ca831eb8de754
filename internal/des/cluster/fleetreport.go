package cluster

// FleetReport is the fleet over time and in total.
type FleetReport struct {
	BucketUs int64
	Buckets  []FleetBucket
	// Totals over the run: replica-hours of ready replicas, GPU-hours and
	// dollars of the provisioned nodes.
	ReplicaHours, GPUHours, Dollars float64
	PeakReplicas                    int
	Placed, Removed, Failed         int // actuated scale-ups, scale-downs, and scale-ups without room
	Events                          []ScaleEvent
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

// accumulator integrates the fleet's levels over time, bucket by bucket.
type accumulator struct {
	width   int64
	at      int64
	cur     level
	buckets []FleetBucket // sums in level × µs until report
	peak    int
}

func (a *accumulator) levels(now int64, l level) {
	a.advance(now)
	a.cur = l
	a.peak = max(a.peak, l.ready)
}

func (a *accumulator) advance(now int64) {
	for a.at < now {
		b := a.at / a.width
		end := min(now, (b+1)*a.width)
		for int64(len(a.buckets)) <= b {
			a.buckets = append(a.buckets, FleetBucket{StartUs: int64(len(a.buckets)) * a.width})
		}
		dt := float64(end - a.at)
		x := &a.buckets[b]
		x.Replicas += float64(a.cur.ready) * dt
		x.Loading += float64(a.cur.loading) * dt
		x.Draining += float64(a.cur.draining) * dt
		x.GPUs += a.cur.gpus * dt
		x.Cost += a.cur.dollarsPerHour * dt
		a.at = end
	}
}

// Fleet reports the fleet over the run (nil without a Fleet). Call it
// after Run.
func (c *Cluster) Fleet() *FleetReport {
	f := c.fleet
	if f == nil {
		return nil
	}
	a := &f.acc
	a.advance(f.end)
	rep := &FleetReport{BucketUs: a.width, PeakReplicas: a.peak, Failed: f.failed, Events: f.events}
	for _, b := range a.buckets {
		w := float64(min(a.width, f.end-b.StartUs))
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
