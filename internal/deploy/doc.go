// Package deploy describes a simulated vLLM deployment — model, GPU, tensor
// parallelism, KV cache, batching limits, latency model and scheduling
// policies — as a strict YAML file or as defaults overridden field by field,
// and resolves it into the simulator's instance configuration (KV blocks from
// GPU memory, max_model_len from the model config).
//
// It knows the simulator's configuration types but never runs a simulation,
// never reads flags and never writes to stdout or stderr.
package deploy
