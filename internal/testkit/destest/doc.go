// Package destest holds what the simulator packages' tests and benchmarks
// share: the reference deployment of the benchmarks (Qwen3-14B on one H100)
// and a lazy Poisson request source that recycles requests. Only tests
// import it; it must never be imported by the simulator itself.
package destest
