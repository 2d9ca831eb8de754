// Package gguf writes and reads GGUF version 3 files, the model format of
// llama.cpp and Ollama, and builds one model in it: a small llama-architecture
// network with deterministic pseudo-random weights and a byte-level
// vocabulary (NewLlama), which servesim's end-to-end tests load into a real
// inference server.
//
// The format, in the order it is laid out (all integers little endian):
//
//	magic "GGUF" | version u32 = 3 | tensor count u64 | metadata count u64
//	metadata: key (u64 length + bytes) | value type u32 | value
//	tensor infos: name | n_dims u32 | dims u64 × n_dims (ne0 first) | type u32 | offset u64
//	zero padding to the alignment (general.alignment, default 32)
//	tensor data, each tensor at its offset from the start of this section
//
// The model's weights carry no meaning, only cost: every request pays the
// prefill and decode compute of a real transformer of that shape. Its output
// is steered so that only ASCII letters can ever be sampled (see NewLlama), so
// a request always runs to its max_tokens and every token streams as one
// complete character.
//
// This package must never know about HTTP, servers, traces or the simulator:
// it is a file format and a model recipe. Only F32 tensors are supported.
package gguf
