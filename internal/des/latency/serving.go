package latency

import (
	"fmt"
	"slices"
	"strings"
)

// KVBytes is the bytes of one KV-cache element: KVDtypeBytes when the
// server stores its cache in another type, else DtypeBytes.
func (m *ModelConfig) KVBytes() float64 {
	if m.KVDtypeBytes > 0 {
		return m.KVDtypeBytes
	}
	return m.DtypeBytes
}

// KVCacheDtypes are the values of vLLM's --kv-cache-dtype the simulator
// knows, with the bytes of an element (0 = the model's own type).
func KVCacheDtypes() map[string]float64 {
	return map[string]float64{
		"auto": 0, "bfloat16": 2, "float16": 2, "half": 2,
		"fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "fp8_ds_mla": 1,
	}
}

// Quantizations are the values of vLLM's --quantization the simulator
// knows, with the bytes of a stored weight: 8-bit float and integer
// schemes run their GEMMs at the FP8 rate, 4-bit ones (weights unpacked to
// 16 bits in the kernel) at the 16-bit rate.
func Quantizations() map[string]float64 {
	return map[string]float64{
		"fp8": 1, "fbgemm_fp8": 1, "modelopt": 1, "ptpc_fp8": 1, "experts_int8": 1,
		"awq": 0.5, "awq_marlin": 0.5, "gptq": 0.5, "gptq_marlin": 0.5, "marlin": 0.5,
		"bitsandbytes": 0.5, "mxfp4": 0.5, "modelopt_fp4": 0.5,
	}
}

// Serving returns the model as a server stores it: its KV cache in
// kvCacheDtype ("" or "auto" = the model's type) and its weights quantized
// by quantization ("" = as the model config says). m is not changed.
func (m *ModelConfig) Serving(kvCacheDtype, quantization string) (*ModelConfig, error) {
	out := *m
	if kvCacheDtype != "" {
		b, ok := KVCacheDtypes()[strings.ToLower(kvCacheDtype)]
		if !ok {
			return nil, fmt.Errorf("kv-cache-dtype %q is not one of %s", kvCacheDtype, knownKeys(KVCacheDtypes()))
		}
		out.KVDtypeBytes = b
	}
	if quantization != "" {
		b, ok := Quantizations()[strings.ToLower(quantization)]
		if !ok {
			return nil, fmt.Errorf("quantization %q is not one of %s", quantization, knownKeys(Quantizations()))
		}
		out.WeightBytes = b
	}
	return &out, nil
}

func knownKeys(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
