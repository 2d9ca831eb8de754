// Package noise states how much a measurement repeated N times varies: the
// mean of the repeats, a 95% confidence interval of that mean by Student's
// t over the repeats (each repeat one sample), the coefficient of
// variation, and whether N was enough by one stated rule (EnoughHalfWidth).
// observe --repeat and a simulated sweep's seeds both state their noise
// through it.
//
// It is a leaf: it knows nothing of servers, traces, sweeps or the
// simulator, only numbers.
package noise
