// Package nnls solves weighted linear least squares with non-negative
// unknowns, the shape every latency fit in this project takes: each
// coefficient is a cost (µs per token, per step, per byte), so none may be
// negative, and the equations are many (one per request or step) while the
// unknowns are few (tens at most).
//
// A [Problem] accumulates the equations x·θ ≈ y with weights w in
// normal-equation form (G = Σ w·x·xᵀ, b = Σ w·x·y), so memory does not grow
// with the number of equations, and [Problem.Solve] runs Lawson and
// Hanson's active-set method on them, in coordinates scaled to a unit
// diagonal. Options pull each unknown towards a prior (a ridge relative to
// its column's own scale, so it only settles directions the data leave
// undetermined) and hold chosen unknowns at their prior.
//
// The results are a pure function of the equations and their order: no
// maps, no concurrency, no randomness, so a fit is bit-for-bit repeatable.
//
// It must never know what the unknowns mean: no simulator, latency model,
// trace or file format; it imports only the standard library.
package nnls
