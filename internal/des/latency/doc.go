// Package latency turns the composition of one batch step into time, and sizes
// the KV cache of one instance (docs/simulator.md describes both).
//
// It holds four models behind the small [Model] interface, chosen by [Kind]
// (`--latency-model`; [New] builds one from a [Config]):
//
//   - [Physics] (physics.go), the default: a roofline with a knee, one term
//     per kernel class of a vLLM step (dense GEMMs, LM head and experts
//     around the knee, element-wise traffic, prefill attention, the decodes'
//     KV read with mixed-batch interference, all-reduces, per-layer, per-step
//     and per-request host time), whose coefficients are shares of the GPU's
//     data-sheet peaks and fixed costs in µs within physical bounds
//     ([PhysicsDefaultBeta], [PhysicsBounds]); internal/fit and
//     internal/fidelity fit them from traces and kernel profiles;
//   - [TrainedPhysics] (trainedphysics.go): BLIS's model, roofline-shaped
//     basis terms scaled by fitted coefficients (the BLIS reference
//     coefficients by default), kept for parity with BLIS;
//   - [Roofline]: analytic FLOPs and bytes over GPU peaks with MFU, no
//     overheads;
//   - [Blackbox]: linear α/β in prefill tokens and decode requests;
//
// and the inputs they need: HuggingFace config.json parsing ([ModelConfig]),
// GPU specifications ([GPU]), both embedded (BLIS's, Apache-2.0, and model
// configs transcribed from their publishers; see data/PROVENANCE.md) so the
// simulator runs with no files at hand, and the KV
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
