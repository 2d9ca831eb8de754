// Package latency turns the composition of one batch step into time, and sizes
// the KV cache of one instance (spec/simulator.md §8, §6.2).
//
// It holds four models behind the small [Model] interface:
//
//   - [Blackbox]: linear α/β in prefill tokens and decode requests (§8.1);
//   - [Roofline]: analytic FLOPs and bytes over GPU peaks with MFU (§8.2);
//   - [TrainedPhysics]: roofline-shaped basis terms scaled by fitted
//     coefficients, the default (§8.3);
//   - [KernelPhysics]: one basis term per kernel class of a vLLM step
//     (GEMMs around the roofline knee, attention with mixed-batch
//     interference, MoE, LM head, collectives, host time), whose
//     coefficients are fitted from a layerwise kernel profile and traces
//     (internal/fidelity).
//
// and the inputs they need: HuggingFace config.json parsing ([ModelConfig]),
// GPU specifications ([GPU]), both embedded from BLIS (Apache-2.0, see
// data/PROVENANCE.md) so the simulator runs with no files at hand, and the KV
// capacity and max_model_len defaults ([KVBlocks], [MaxModelLen]).
//
// Every model is linear in the per-request context of decode requests, so a
// [Step] summarises decode requests by count and context sum; each model's
// StepTime documents why that is exact for its formula.
//
// Units: all results are integer microseconds; fractional µs are truncated
// toward zero (floor, as every value is non-negative), and StepTime is at
// least 1 µs.
//
// This package must never know about events, queues, KV blocks as objects,
// requests, the clock, files other than the config files it is asked to read,
// or output streams: it is pure arithmetic over a step's shape.
package latency
