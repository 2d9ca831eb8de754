package replay

import (
	"fmt"
	"strings"

	"servesim/internal/des/cluster"
	"servesim/internal/des/metrics"
)

// newFleetRequests buckets the requests as the fleet report does.
func newFleetRequests(f *cluster.Fleet, agg *metrics.Aggregator) *metrics.FleetRequests {
	w := f.ReportUs
	if w == 0 {
		w = 60_000_000
	}
	return metrics.NewFleetRequests(w, agg)
}

// fleetSummary is the cluster's fleet report with the requests' figures.
func fleetSummary(rep *cluster.FleetReport, reqs *metrics.FleetRequests) *metrics.FleetSummary {
	s := &metrics.FleetSummary{BucketS: float64(rep.BucketUs) / 1e6, ReplicaHours: rep.ReplicaHours, GPUHours: rep.GPUHours,
		Dollars: rep.Dollars, PeakReplicas: rep.PeakReplicas, ScaleUps: rep.Placed, ScaleDowns: rep.Removed, ScaleUpsWithoutRoom: rep.Failed,
		DrainCut: rep.Cut, DrainCutRejected: rep.CutRejected}
	for _, b := range rep.Buckets {
		s.OverTime = append(s.OverTime, metrics.FleetBucket{StartS: float64(b.StartUs) / 1e6, Replicas: b.Replicas,
			Loading: b.Loading, Draining: b.Draining, GPUs: b.GPUs, Dollars: b.Cost})
	}
	reqs.Fill(s)
	return s
}

// writeFleet is the text summary's fleet section: totals, then one line
// per bucket.
func writeFleet(b *strings.Builder, f *metrics.FleetSummary) {
	perM := "-"
	if f.DollarsPerMillionTokens != nil {
		perM = fmt.Sprintf("%.4f", *f.DollarsPerMillionTokens)
	}
	fmt.Fprintf(b, "\nfleet      %.2f GPU-hours  $%.2f  $%s per million tokens  %.2f replica-hours  peak %d replicas  scale-ups %d  scale-downs %d",
		f.GPUHours, f.Dollars, perM, f.ReplicaHours, f.PeakReplicas, f.ScaleUps, f.ScaleDowns)
	if f.ScaleUpsWithoutRoom > 0 {
		fmt.Fprintf(b, "  without room %d", f.ScaleUpsWithoutRoom)
	}
	if f.DrainCut > 0 {
		fmt.Fprintf(b, "  cut by drains %d (rejected %d)", f.DrainCut, f.DrainCutRejected)
	}
	fmt.Fprintf(b, "\n\n%10s %9s %8s %8s %7s %9s %9s %9s %8s %12s\n", "start s", "replicas", "loading", "draining", "GPUs", "$", "arrivals", "completed", "SLO", "TTFT p99 ms")
	for _, o := range f.OverTime {
		fmt.Fprintf(b, "%10.0f %9.2f %8.2f %8.2f %7.2f %9.4f %9d %9d %8s %12.2f\n", o.StartS, o.Replicas, o.Loading, o.Draining, o.GPUs,
			o.Dollars, o.Arrivals, o.Completed, pct(o.SLOAttainment), o.TTFTP99Ms)
	}
}
