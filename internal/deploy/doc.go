// Package deploy describes a simulated vLLM deployment — model, GPU, tensor
// and pipeline parallelism, KV cache, batching limits and variant, latency
// model, scheduling policies, and the cluster around the instances
// (admission, routing, signal freshness, P/D pools and KV transfers) — as a
// strict YAML file or as defaults overridden field by field, and resolves it
// into the simulator's instance and cluster configurations (KV blocks from
// GPU memory, max_model_len from the model config, a pipeline stage's
// latency model, KV bytes per transferred token).
//
// It knows the simulator's configuration types but never runs a simulation,
// never reads flags and never writes to stdout or stderr.
package deploy
