// Package steady holds the one steady-state test of the project: whether a
// run's queue stopped growing, or grew for as long as requests arrived, in
// which case its latencies measure the run's length more than the
// deployment. The simulator's summary (run and replay), the simulated sweep
// and the live sweep of observe all judge a run by Check.
//
// The package is a leaf: it takes arrival and service-start times and knows
// nothing of what produced them.
package steady
