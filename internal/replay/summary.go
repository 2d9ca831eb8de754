package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"servesim/internal/des/metrics"
)

// WriteSummary writes the run summary in format "json" (the docs/simulator.md §14 keys,
// 2-space indent) or "text" (TextSummary). run and replay share it, so the
// same simulation prints the same figures through either binary.
func WriteSummary(w io.Writer, format string, s *metrics.Summary) error {
	switch format {
	case "text":
		_, err := io.WriteString(w, TextSummary(s))
		return err
	case "json":
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	return fmt.Errorf("write summary: unknown format %q", format)
}

// TextSummary renders the summary as a table a person reads at a glance.
func TextSummary(s *metrics.Summary) string {
	var b strings.Builder
	if s.Deployment != "" {
		fmt.Fprintf(&b, "deployment %s\n", s.Deployment)
	}
	fmt.Fprintf(&b, "requests   injected %d  completed %d  queued %d  running %d  dropped %d  timed out %d  rejected %d",
		s.InjectedRequests, s.CompletedRequests, s.StillQueued, s.StillRunning, s.DroppedUnservable, s.TimedOutRequests, s.RejectedRequests)
	if s.DroppedNoDecodeKV > 0 {
		fmt.Fprintf(&b, "  no decode KV %d", s.DroppedNoDecodeKV)
	}
	if s.EncodeRoutingRejections > 0 {
		fmt.Fprintf(&b, "  encode rejected %d", s.EncodeRoutingRejections)
	}
	b.WriteByte('\n')
	gw := s.GatewayQueueDepth+s.GatewayQueueShed+s.GatewayExpired+s.GatewayEvicted > 0
	if gw {
		fmt.Fprintf(&b, "gateway    in its queue at the end %d  shed %d  expired %d  evicted %d\n",
			s.GatewayQueueDepth, s.GatewayQueueShed, s.GatewayExpired, s.GatewayEvicted)
	}
	tiers := gw || (s.RejectedRequests > 0 && len(s.PerClass) > 1)
	fmt.Fprintf(&b, "duration   %.2f s   throughput %.2f req/s  %.1f tok/s   preemptions %d\n",
		s.VLLMEstimatedDurationS, s.ResponsesPerSec, s.TokensPerSec, s.PreemptionCount)
	fmt.Fprintf(&b, "KV cache   mean %.1f%%  peak %.1f%%  prefix hit rate %.1f%%\n",
		100*s.KVUtilizationMean, 100*s.KVUtilizationPeak, 100*s.CacheHitRate)
	if s.KVOffloadedBlocks > 0 || s.KVReloadedBlocks > 0 {
		fmt.Fprintf(&b, "KV CPU     offloaded %d blocks  reloaded %d (%.1f ms)  thrashing %d\n",
			s.KVOffloadedBlocks, s.KVReloadedBlocks, s.KVReloadMs, s.KVThrashing)
	}
	if s.Unstable != "" {
		fmt.Fprintf(&b, "state      %s\n", s.Unstable)
	} else {
		b.WriteString("state      steady: the queue did not grow over the run\n")
	}
	if s.SLOGiven {
		fmt.Fprintf(&b, "SLO        attainment %s  goodput %s req/s\n", pct(s.SLOAttainment), num(s.GoodputRPS))
	} else {
		b.WriteString("SLO        no SLO given: no goodput, no attainment (--slo, e.g. --slo 'ttft.p99<500ms')\n")
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "%-8s %10s %10s %10s %10s %10s\n", "ms", "mean", "p50", "p90", "p95", "p99")
	row := func(name string, v ...float64) {
		fmt.Fprintf(&b, "%-8s", name)
		for _, x := range v {
			fmt.Fprintf(&b, " %10.2f", x)
		}
		b.WriteByte('\n')
	}
	row("TTFT", s.TTFTMeanMs, s.TTFTP50Ms, s.TTFTP90Ms, s.TTFTP95Ms, s.TTFTP99Ms)
	row("TPOT", s.TPOTMeanMs, s.TPOTP50Ms, s.TPOTP90Ms, s.TPOTP95Ms, s.TPOTP99Ms)
	row("ITL", s.ITLMeanMs, s.ITLP50Ms, s.ITLP90Ms, s.ITLP95Ms, s.ITLP99Ms)
	row("E2E", s.E2EMeanMs, s.E2EP50Ms, s.E2EP90Ms, s.E2EP95Ms, s.E2EP99Ms)
	switch {
	case tiers:
		gatewayTables(&b, s)
	case len(s.PerClass) > 1 || s.SLOGiven:
		fmt.Fprintf(&b, "\n%-12s %8s %10s %10s %12s %12s\n", "class", "count", "attain", "goodput", "TTFT p99", "E2E p99")
		for _, k := range slices.Sorted(maps.Keys(s.PerClass)) {
			c := s.PerClass[k]
			fmt.Fprintf(&b, "%-12s %8d %10s %10s %12.2f %12.2f\n", k, c.Count, pct(c.SLOAttainment), num(c.GoodputRPS), c.TTFTP99Ms, c.E2EP99Ms)
		}
	}
	if len(s.PerInstance) > 0 {
		fmt.Fprintf(&b, "\n%-10s %-8s %8s %9s %9s %10s %10s %6s %6s %6s\n", "instance", "pool", "routed", "completed", "preempts",
			"TTFT mean", "E2E mean", "busy", "KV", "hits")
		for _, in := range s.PerInstance {
			pool := in.Pool
			if pool == "" {
				pool = "-"
			}
			fmt.Fprintf(&b, "%-10d %-8s %8d %9d %9d %10.2f %10.2f %5.1f%% %5.1f%% %5.1f%%\n", in.Instance, pool, in.Routed,
				in.Completed, in.PreemptionCount, in.TTFTMeanMs, in.E2EMeanMs, 100*in.BusyFraction, 100*in.KVUtilizationMean, 100*in.CacheHitRate)
		}
		over := "output tokens"
		if s.PerInstance[0].Pool != "" {
			over = "the decode pool's output tokens"
		}
		fmt.Fprintf(&b, "instance fairness (Jain over %s) %.4f", over, s.InstanceJainIndex)
		if s.InTransferRequests > 0 {
			fmt.Fprintf(&b, "   in KV transfer at the end %d", s.InTransferRequests)
		}

		b.WriteByte('\n')
	}
	writeRegret(&b, s.RoutingRegret)
	writeFitness(&b, s.Fitness)
	if s.Fleet != nil {
		writeFleet(&b, s.Fleet)
	}
	return b.String()
}

// writeFitness adds the fitness score and, per metric, its weight, raw
// value and normalised value (--fitness-weights).
func writeFitness(b *strings.Builder, f *metrics.Fitness) {
	if f == nil {
		return
	}
	fmt.Fprintf(b, "\nfitness %.4f = Σ weight × normalised\n", f.Score)
	fmt.Fprintf(b, "%-16s %8s %14s %11s\n", "metric", "weight", "raw", "normalised")
	for _, c := range f.Components {
		fmt.Fprintf(b, "%-16s %8.4g %14s %11.4f\n", c.Metric, c.Weight, fmt.Sprintf("%.2f %s", c.Raw, c.Unit), c.Normalised)
	}
}

// writeRegret adds the counterfactual regret of the routing decisions, one
// line per policy and pool (--counterfactual-k).
func writeRegret(b *strings.Builder, rs []metrics.RegretSummary) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%-20s %10s %10s %10s %10s %10s\n", "routing regret", "decisions", "mean", "p99", "max", "regret > 0")
	for _, r := range rs {
		name := r.Policy
		if r.Pool != "" {
			name += " (" + r.Pool + ")"
		}
		fmt.Fprintf(b, "%-20s %10d %10.4g %10.4g %10.4g %10d\n", name, r.Decisions, r.Mean, r.P99, r.Max, r.Positive)
	}
}

// gatewayTables are the per-tier and per-tenant tables of a run whose
// gateway refused or let go requests: attainment, goodput, and where each
// tier's and tenant's requests that did not complete went.
func gatewayTables(b *strings.Builder, s *metrics.Summary) {
	head := "%-12s %8s %9s %10s %10s %12s %8s %6s %7s %7s\n"
	line := "%-12s %8d %9d %10s %10s %12s %8d %6d %7d %7d\n"
	fmt.Fprintf(b, "\n"+head, "class", "count", "completed", "attain", "goodput", "TTFT p99", "rejected", "shed", "expired", "evicted")
	for _, k := range slices.Sorted(maps.Keys(s.PerClass)) {
		c := s.PerClass[k]
		fmt.Fprintf(b, line, k, c.Count, c.Completed, pct(c.SLOAttainment), num(c.GoodputRPS), fmt.Sprintf("%.2f", c.TTFTP99Ms),
			c.Rejected, c.Shed, c.Expired, c.Evicted)
	}
	fmt.Fprintf(b, "\n"+head, "tenant", "count", "completed", "attain", "goodput", "out tokens", "rejected", "shed", "expired", "evicted")
	for _, k := range slices.Sorted(maps.Keys(s.PerTenant)) {
		t := s.PerTenant[k]
		n := t.Injected
		if n == 0 { // no SLO: the count is what is accounted
			n = t.Completed + t.Rejected + t.Shed + t.Expired + t.Evicted
		}
		fmt.Fprintf(b, line, k, n, t.Completed, pct(t.SLOAttainment), num(t.GoodputRPS), fmt.Sprint(t.OutputTokens),
			t.Rejected, t.Shed, t.Expired, t.Evicted)
	}
}

// pct is an optional share in percent, "-" when absent (no SLO target).
func pct(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**p)
}

// num is an optional figure, "-" when absent.
func num(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *p)
}
