// Package autoscale is the decision half of a model autoscaler, free of
// any simulator state (docs/fleet.md): per-replica signals, the V2
// saturation analyzer (supply and demand in KV tokens), HPA-style
// stabilization windows, and an engine that turns the analysis into at
// most one scale decision per tick, picking the cheapest variant that the
// free GPU inventory can hold when scaling up and the most expensive
// active one when scaling down. The cluster collects the signals,
// schedules the ticks and actuates; this package only decides, so every
// rule here is a pure function of its inputs and testable alone.
package autoscale
