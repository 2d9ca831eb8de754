package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"servesim/internal/tracev2"
)

// LLMServingSimMeta is what an LLMServingSim bench run's meta.json says
// about the server that was measured. Zero values mean "not recorded"
// (older runs carry no kv_cache, hardware or resolved_config blocks).
type LLMServingSimMeta struct {
	Model       string // HuggingFace id as served
	VLLMVersion string
	Dataset     string // dataset_path as recorded
	NumRequests int
	StartedAt   string // RFC 3339, as recorded

	TensorParallel int  // 1 when not recorded
	DataParallel   int  // 1 when not recorded
	ExpertParallel bool // enable_expert_parallel
	MaxNumSeqs     int
	// MaxNumBatchedTokens is the engine's token budget per step.
	MaxNumBatchedTokens int
	MaxModelLen         int    // 0 = the model's own limit (null in the file)
	Dtype, KVCacheDtype string // "bfloat16", "auto", ...

	NumGPUBlocks         int     // KV blocks vLLM allocated (per engine)
	BlockSize            int     // tokens per KV block vLLM chose
	GPUMemoryUtilization float64 // share of device memory vLLM may use
	PrefixCaching        *bool   // enable_prefix_caching
	AsyncScheduling      *bool   // scheduler_config.async_scheduling
	ChunkedPrefill       *bool   // scheduler_config.enable_chunked_prefill
	// LongPrefillTokenThreshold is scheduler_config.long_prefill_token_threshold.
	LongPrefillTokenThreshold int
	// MaxNumPartialPrefills is scheduler_config.max_num_partial_prefills.
	MaxNumPartialPrefills int

	DeviceName        string // e.g. "NVIDIA GeForce RTX 4090"
	DeviceCount       int
	DeviceMemoryBytes int64 // total memory of one device
}

// metaJSON is the on-disk shape of the parts of meta.json we read; every
// other key (resolved_config holds hundreds) is ignored.
type metaJSON struct {
	Model        string `json:"model"`
	VLLMVersion  string `json:"vllm_version"`
	DatasetPath  string `json:"dataset_path"`
	NumRequests  *int   `json:"num_requests"`
	StartedAt    string `json:"started_at"`
	EngineKwargs *struct {
		Model                string `json:"model"`
		TensorParallelSize   *int   `json:"tensor_parallel_size"`
		DataParallelSize     *int   `json:"data_parallel_size"`
		EnableExpertParallel *bool  `json:"enable_expert_parallel"`
		MaxNumSeqs           *int   `json:"max_num_seqs"`
		MaxNumBatchedTokens  *int   `json:"max_num_batched_tokens"`
		MaxModelLen          *int   `json:"max_model_len"`
		Dtype                string `json:"dtype"`
		KVCacheDtype         string `json:"kv_cache_dtype"`
	} `json:"engine_kwargs"`
	KVCache *struct {
		NumGPUBlocks         *int     `json:"num_gpu_blocks"`
		BlockSize            *int     `json:"block_size"`
		GPUMemoryUtilization *float64 `json:"gpu_memory_utilization"`
		EnablePrefixCaching  *bool    `json:"enable_prefix_caching"`
	} `json:"kv_cache"`
	Hardware *struct {
		DeviceCount            *int   `json:"device_count"`
		DeviceName             string `json:"device_name"`
		DeviceTotalMemoryBytes *int64 `json:"device_total_memory_bytes"`
	} `json:"hardware"`
	ResolvedConfig *struct {
		CacheConfig *struct {
			BlockSize            *int     `json:"block_size"`
			NumGPUBlocks         *int     `json:"num_gpu_blocks"`
			GPUMemoryUtilization *float64 `json:"gpu_memory_utilization"`
			EnablePrefixCaching  *bool    `json:"enable_prefix_caching"`
		} `json:"cache_config"`
		SchedulerConfig *struct {
			AsyncScheduling           *bool `json:"async_scheduling"`
			EnableChunkedPrefill      *bool `json:"enable_chunked_prefill"`
			LongPrefillTokenThreshold *int  `json:"long_prefill_token_threshold"`
			MaxNumPartialPrefills     *int  `json:"max_num_partial_prefills"`
			MaxNumSeqs                *int  `json:"max_num_seqs"`
			MaxNumBatchedTokens       *int  `json:"max_num_batched_tokens"`
		} `json:"scheduler_config"`
		ModelConfig *struct {
			MaxModelLen *int `json:"max_model_len"`
		} `json:"model_config"`
	} `json:"resolved_config"`
}

// ParseLLMServingSimMeta parses a meta.json; name is used in errors, which
// name file:line:column and the JSON field.
func ParseLLMServingSimMeta(name string, data []byte) (*LLMServingSimMeta, error) {
	file := displayName(name)
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	var j metaJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&j); err != nil {
		return nil, metaError(file, data, dec, err)
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		line, col := lineCol(data, int(off)+len(data[off:])-len(bytes.TrimLeft(data[off:], " \t\r\n")))
		return nil, &Error{File: file, Line: line, Column: col, Msg: "json syntax: unexpected data after the object"}
	}
	m := &LLMServingSimMeta{Model: j.Model, VLLMVersion: j.VLLMVersion, Dataset: j.DatasetPath,
		StartedAt: j.StartedAt, TensorParallel: 1, DataParallel: 1}
	set := func(dst *int, srcs ...*int) {
		for _, s := range srcs {
			if s != nil {
				*dst = *s
				return
			}
		}
	}
	set(&m.NumRequests, j.NumRequests)
	if e := j.EngineKwargs; e != nil {
		if m.Model == "" {
			m.Model = e.Model
		}
		set(&m.TensorParallel, e.TensorParallelSize)
		set(&m.DataParallel, e.DataParallelSize)
		set(&m.MaxNumSeqs, e.MaxNumSeqs)
		set(&m.MaxNumBatchedTokens, e.MaxNumBatchedTokens)
		set(&m.MaxModelLen, e.MaxModelLen)
		m.ExpertParallel = e.EnableExpertParallel != nil && *e.EnableExpertParallel
		m.Dtype, m.KVCacheDtype = e.Dtype, e.KVCacheDtype
	}
	if rc := j.ResolvedConfig; rc != nil {
		if c := rc.CacheConfig; c != nil {
			set(&m.BlockSize, c.BlockSize)
			set(&m.NumGPUBlocks, c.NumGPUBlocks)
			if c.GPUMemoryUtilization != nil {
				m.GPUMemoryUtilization = *c.GPUMemoryUtilization
			}
			m.PrefixCaching = c.EnablePrefixCaching
		}
		if s := rc.SchedulerConfig; s != nil {
			m.AsyncScheduling, m.ChunkedPrefill = s.AsyncScheduling, s.EnableChunkedPrefill
			set(&m.LongPrefillTokenThreshold, s.LongPrefillTokenThreshold)
			set(&m.MaxNumPartialPrefills, s.MaxNumPartialPrefills)
			if m.MaxNumSeqs == 0 {
				set(&m.MaxNumSeqs, s.MaxNumSeqs)
			}
			if m.MaxNumBatchedTokens == 0 {
				set(&m.MaxNumBatchedTokens, s.MaxNumBatchedTokens)
			}
		}
		if mc := rc.ModelConfig; mc != nil && m.MaxModelLen == 0 {
			set(&m.MaxModelLen, mc.MaxModelLen)
		}
	}
	if kv := j.KVCache; kv != nil { // the bench's own summary wins
		set(&m.NumGPUBlocks, kv.NumGPUBlocks)
		set(&m.BlockSize, kv.BlockSize)
		if kv.GPUMemoryUtilization != nil {
			m.GPUMemoryUtilization = *kv.GPUMemoryUtilization
		}
		if kv.EnablePrefixCaching != nil {
			m.PrefixCaching = kv.EnablePrefixCaching
		}
	}
	if h := j.Hardware; h != nil {
		m.DeviceName = h.DeviceName
		set(&m.DeviceCount, h.DeviceCount)
		if h.DeviceTotalMemoryBytes != nil {
			m.DeviceMemoryBytes = *h.DeviceTotalMemoryBytes
		}
	}
	if err := m.check(file, data); err != nil {
		return nil, err
	}
	return m, nil
}

// check rejects numbers no engine runs with, naming the field.
func (m *LLMServingSimMeta) check(file string, data []byte) error {
	for _, f := range []struct {
		name string
		v    int
		min  int
	}{
		{"tensor_parallel_size", m.TensorParallel, 1}, {"data_parallel_size", m.DataParallel, 1},
		{"max_num_seqs", m.MaxNumSeqs, 0}, {"max_num_batched_tokens", m.MaxNumBatchedTokens, 0},
		{"max_model_len", m.MaxModelLen, 0}, {"num_gpu_blocks", m.NumGPUBlocks, 0},
		{"block_size", m.BlockSize, 0}, {"num_requests", m.NumRequests, 0},
		{"long_prefill_token_threshold", m.LongPrefillTokenThreshold, 0},
		{"max_num_partial_prefills", m.MaxNumPartialPrefills, 0},
	} {
		if f.v < f.min {
			line, col := findKey(data, f.name)
			return &Error{File: file, Line: line, Column: col, Field: f.name,
				Msg: fmt.Sprintf("%d is below %d", f.v, f.min)}
		}
	}
	if !(m.GPUMemoryUtilization >= 0 && m.GPUMemoryUtilization <= 1) {
		line, col := findKey(data, "gpu_memory_utilization")
		return &Error{File: file, Line: line, Column: col, Field: "gpu_memory_utilization",
			Msg: fmt.Sprintf("%v is not in [0, 1]", m.GPUMemoryUtilization)}
	}
	return nil
}

// findKey locates the value of the first "key": in data (1:1 if absent).
func findKey(data []byte, key string) (line, col int) {
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 1, 1
	}
	j := i + len(key) + 2
	for j < len(data) && isSep(data[j]) {
		j++
	}
	return lineCol(data, j)
}

// metaError turns a decoding error into a located *Error.
func metaError(file string, data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(data, int(max(se.Offset-1, 0))) // Decode's offset counts the bad byte
		return &Error{File: file, Line: line, Column: col, Msg: "json syntax: " + se.Error(), Err: err}
	case errors.As(err, &te):
		// Offset is the end of the offending value; point at its start.
		end := min(int(te.Offset), len(data))
		start := valueBefore(data, end)
		text := "a JSON " + te.Value // an object or list met at its opening bracket
		if start < end {
			text = strings.TrimSpace(string(data[start:end]))
		} else {
			start = max(end-1, 0)
		}
		line, col := lineCol(data, start)
		field := te.Field
		if i := strings.LastIndex(field, "."); i >= 0 {
			field = field[i+1:]
		}
		return &Error{File: file, Line: line, Column: col, Field: field,
			Msg: fmt.Sprintf("%s is not %s", text, jsonKind(te.Type.String())), Err: err}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(data, len(data))
		return &Error{File: file, Line: line, Column: col, Msg: "json syntax: unexpected end of the file", Err: err}
	}
	line, col := lineCol(data, int(dec.InputOffset()))
	return &Error{File: file, Line: line, Column: col, Msg: "json syntax: " + err.Error(), Err: err}
}

// valueBefore finds the start of the JSON value that ends at end: the first
// byte after the nearest preceding ':' or ',' or '[' (skipping spaces), or
// the value's opening bracket when it is an object or list.
func valueBefore(data []byte, end int) int {
	if end > len(data) {
		end = len(data)
	}
	i := end - 1
	depth := 0
	for ; i >= 0; i-- {
		switch c := data[i]; {
		case c == '}' || c == ']':
			depth++
		case c == '{' || c == '[':
			if depth == 0 {
				return skipSpace(data, i+1)
			}
			depth--
			if depth == 0 {
				return i
			}
		case (c == ':' || c == ',') && depth == 0:
			return skipSpace(data, i+1)
		}
	}
	return 0
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// jsonKind names a Go type as a JSON kind for messages, with its article.
func jsonKind(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	}
	return "an object"
}

// server is the trace header's server block for this run.
func (m *LLMServingSimMeta) server() *tracev2.Server {
	return &tracev2.Server{Type: "vllm", Model: m.Model, TensorParallel: m.TensorParallel, MaxNumSeqs: m.MaxNumSeqs,
		BlockSize: m.BlockSize, GPUMemoryUtilization: m.GPUMemoryUtilization, MaxModelLen: int64(m.MaxModelLen)}
}
