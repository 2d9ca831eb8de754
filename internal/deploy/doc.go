// Package deploy describes a simulated vLLM deployment — model, GPU, tensor
// and pipeline parallelism, KV cache, batching limits and variant, latency
// model, scheduling policies, and the cluster around the instances
// (admission, routing, signal freshness, P/D pools and KV transfers) — and
// resolves it into the simulator's instance and cluster configurations (KV
// blocks from GPU memory, max_model_len from the model config, a pipeline
// stage's latency model, KV bytes per transferred token).
//
// Its keys are listed once (keylist.go): the flags (described as flagspec
// flags), their BLIS and vLLM aliases, the keys of a strict deployment YAML,
// the trace header's x_ext.deployment, and the comparison of two
// deployments are generated from that list. Layers lays a deployment file
// and the flags given over the defaults or over the deployment a trace
// states (defaults < trace < file < flags), on typed values.
//
// It knows the simulator's configuration types but never runs a simulation,
// never imports a flag library or reads a command line, and never writes to
// stdout or stderr.
package deploy
