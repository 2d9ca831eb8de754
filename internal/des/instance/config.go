package instance

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"servesim/internal/des"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/latency"
)

// Scheduler orders the wait queue (docs/simulator.md §9).
type Scheduler string

// Schedulers.
const (
	SchedFCFS         Scheduler = "fcfs"          // enqueue order; preempted requests at the front
	SchedPriorityFCFS Scheduler = "priority-fcfs" // priority ascending, then arrival, then id
	SchedSJF          Scheduler = "sjf"           // prompt length ascending, then arrival, then id
)

// PreemptionPolicy picks the preemption victim (docs/simulator.md §6.4).
type PreemptionPolicy string

// Preemption policies.
const (
	PreemptFCFS     PreemptionPolicy = "fcfs"     // the tail of the running list
	PreemptPriority PreemptionPolicy = "priority" // largest priority value, ties to the latest arrival
)

// PreemptMode says what a preempted request keeps (docs/simulator.md §4 deviation).
type PreemptMode string

// Preemption modes.
const (
	ModeRecompute PreemptMode = "recompute" // vLLM: keep generated tokens and TTFT; recompute prompt + g
	ModeReset     PreemptMode = "reset"     // BLIS: start over, regenerate all output, re-record TTFT
)

// Batching selects the batch formation (docs/simulator.md §11).
type Batching string

// Batching variants.
const (
	BatchVLLM              Batching = "vllm"               // docs/simulator.md §5, vLLM v1 continuous batching (default)
	BatchVLLMv0            Batching = "vllm-v0"            // prefill-first, whole prompts
	BatchSarathi           Batching = "sarathi"            // chunked prefill under a chunk budget
	BatchOrca              Batching = "orca"               // iteration-level, whole prompts, M tokens reserved
	BatchFasterTransformer Batching = "faster-transformer" // request-level static batches
	BatchLightLLM          Batching = "lightllm"           // token-level KV, projected-peak admission
)

// BatchingVariants lists the variants, default first.
func BatchingVariants() []Batching {
	return []Batching{BatchVLLM, BatchVLLMv0, BatchSarathi, BatchOrca, BatchFasterTransformer, BatchLightLLM}
}

// DefaultChunkSize is Sarathi's default chunk budget C.
const DefaultChunkSize = 512

// PriorityPolicy computes request priorities; lower is more urgent (docs/simulator.md §9).
type PriorityPolicy string

// Priority policies.
const (
	PrioritySLOClass PriorityPolicy = "slo-class"
	PriorityConstant PriorityPolicy = "constant"
	PrioritySLOAging PriorityPolicy = "slo-aging"
)

// DefaultClassPriorities is the slo-class mapping before p = max_p − p(class);
// classes not listed (and the empty class) map like "standard".
func DefaultClassPriorities() map[string]int {
	return map[string]int{"critical": 4, "standard": 3, "batch": -1, "sheddable": -2, "background": -3}
}

// Tracer receives the spec's observational events (priority 7) as direct
// calls; they never change state. Setting one turns fast-forward off.
type Tracer interface {
	Scheduled(now int64, r *Request, tokens int)
	Preempted(now int64, r *Request)
	Left(at int64, r *Request)
}

// StepInfo describes one executed step (Tracer-free step hook).
type StepInfo struct {
	Batch         int // requests given tokens
	PrefillTokens int // new tokens of prefill requests (chunks and recomputes included)
	DecodeTokens  int // decode requests (one token each)
	Generated     int // output tokens produced
	KVUsedBlocks  int // used KV blocks after the execute phase
	Waiting       int // wait-queue depth once the batch is formed
}

// StepObserver receives every executed step, [start, end) on the engine's
// clock, including the steps fast-forward runs inline or with lazy
// decoders (each is reported on its own, as it is applied; start may lie
// after the engine clock). It must not change the simulation; unlike a
// Tracer it leaves fast-forward on.
type StepObserver interface {
	Step(inst int, start, end int64, info StepInfo)
}

// Config configures one instance. Zero values of the policy fields select the
// defaults (fcfs, fcfs, recompute, slo-class).
type Config struct {
	ID int // instance index, reported in results

	KV                   kvcache.Config
	MaxNumSeqs           int // S
	MaxNumBatchedTokens  int // B
	LongPrefillThreshold int // P; 0 = off
	MaxModelLen          int // M; must satisfy ⌈M/b⌉ ≤ T
	// NoChunkedPrefill turns vLLM's chunked prefill off (vllm batching):
	// a waiting request is admitted only when all its uncached prompt
	// tokens (at most P of them when P is set) fit in the step's remaining
	// budget, and admission stops at the first that does not, as vLLM's
	// scheduler does. It needs B ≥ M, which vLLM checks at start-up too.
	NoChunkedPrefill bool

	Scheduler       Scheduler
	Preemption      PreemptionPolicy
	PreemptMode     PreemptMode
	Priority        PriorityPolicy
	AgeWeight       float64        // slo-aging weight per second of age
	ClassPriorities map[string]int // overrides of DefaultClassPriorities, each in [−100, 100]

	Latency latency.Model

	// Batching selects the batch formation ("" = vllm). Variants other than
	// vllm run the reference step (no lazy decoding).
	Batching  Batching
	ChunkSize int // sarathi's chunk budget C; 0 = DefaultChunkSize

	// AsyncScheduling models vLLM's asynchronous scheduling (on by default
	// from vLLM 0.14): the batch of step N+1 is formed while step N runs,
	// so a request enqueued during a step can join only the step after
	// next (async.go). Only the vllm batching without pipeline
	// parallelism has it; elsewhere it is ignored.
	AsyncScheduling bool

	// PipelineStages P > 1 turns pipeline parallelism on (pipeline.go; vllm
	// batching only, no lazy decoding). StageLatency is the StepTime of one
	// stage (L/P layers; nil = Latency's StepTime / P) and
	// StageSendUsPerToken the activation transfer between stages, µs per
	// token (H · activation bytes / interconnect bandwidth).
	PipelineStages      int
	StageLatency        latency.Model
	StageSendUsPerToken float64

	// FastForward keeps steady decoders implicit (a step costs O(changes),
	// not O(batch)) and runs consecutive steps inline while no other event can
	// come first, with results identical to the reference step (lazy.go).
	// Recommended on; off only to cross-check.
	FastForward bool
	// FastForwardBound, if set, returns the earliest time at which something
	// outside this instance may observe or change it (an event of another
	// component, a horizon); no step starting at or after it, or at or after
	// the instance's own next Queued or Timeout event, runs inline. A cluster
	// passes its next cluster event, so other instances' steps do not break
	// inline runs. Default: the engine's next event time, always safe.
	FastForwardBound func() int64

	// OnDone receives every request when it becomes terminal (completed,
	// dropped, timed out, or prefilled for a PrefillOnly part). The Result is
	// only valid during the call; the instance no longer references r (except
	// a prefilled part's KV blocks, until ReleaseKV), so r may be recycled.
	OnDone func(res *Result, r *Request)
	Tracer Tracer
	// Steps, if set, receives every step (StepObserver).
	Steps StepObserver
}

func (c *Config) validate() error {
	var errs []string
	if c.ID < 0 || c.ID > des.MaxSub {
		errs = append(errs, fmt.Sprintf("instance index %d outside 0..%d", c.ID, des.MaxSub))
	}
	if c.MaxNumSeqs <= 0 {
		errs = append(errs, fmt.Sprintf("max-num-seqs %d must be positive", c.MaxNumSeqs))
	}
	if c.MaxNumBatchedTokens <= 0 {
		errs = append(errs, fmt.Sprintf("max-num-batched-tokens %d must be positive", c.MaxNumBatchedTokens))
	}
	if c.LongPrefillThreshold < 0 {
		errs = append(errs, fmt.Sprintf("long-prefill-token-threshold %d must not be negative", c.LongPrefillThreshold))
	}
	if c.NoChunkedPrefill && c.MaxNumBatchedTokens < c.MaxModelLen {
		errs = append(errs, fmt.Sprintf("without chunked prefill, max-num-batched-tokens %d must be at least max-model-len %d (a prompt must fit in one step)", c.MaxNumBatchedTokens, c.MaxModelLen))
	}
	if c.MaxModelLen <= 0 {
		errs = append(errs, fmt.Sprintf("max-model-len %d must be positive", c.MaxModelLen))
	} else if c.KV.BlockSize > 0 && (c.MaxModelLen+c.KV.BlockSize-1)/c.KV.BlockSize > c.KV.Blocks {
		errs = append(errs, fmt.Sprintf("max-model-len %d needs %d blocks of %d tokens, more than the %d KV blocks",
			c.MaxModelLen, (c.MaxModelLen+c.KV.BlockSize-1)/c.KV.BlockSize, c.KV.BlockSize, c.KV.Blocks))
	}
	switch c.Scheduler {
	case "", SchedFCFS, SchedPriorityFCFS, SchedSJF:
	default:
		errs = append(errs, fmt.Sprintf("unknown scheduler %q (fcfs, priority-fcfs, sjf)", c.Scheduler))
	}
	switch c.Preemption {
	case "", PreemptFCFS, PreemptPriority:
	default:
		errs = append(errs, fmt.Sprintf("unknown preemption policy %q (fcfs, priority)", c.Preemption))
	}
	switch c.PreemptMode {
	case "", ModeRecompute, ModeReset:
	default:
		errs = append(errs, fmt.Sprintf("unknown preempt mode %q (recompute, reset)", c.PreemptMode))
	}
	switch c.Priority {
	case "", PrioritySLOClass, PriorityConstant, PrioritySLOAging:
	default:
		errs = append(errs, fmt.Sprintf("unknown priority policy %q (slo-class, constant, slo-aging)", c.Priority))
	}
	known := c.Batching == ""
	for _, b := range BatchingVariants() {
		known = known || b == c.Batching
	}
	if !known {
		errs = append(errs, fmt.Sprintf("unknown batching %q (vllm, vllm-v0, sarathi, orca, faster-transformer, lightllm)", c.Batching))
	}
	if c.ChunkSize < 0 {
		errs = append(errs, fmt.Sprintf("chunk size %d must not be negative", c.ChunkSize))
	}
	if c.PipelineStages < 0 || c.StageSendUsPerToken < 0 {
		errs = append(errs, fmt.Sprintf("pipeline stages %d and stage transfer %g µs/token must not be negative", c.PipelineStages, c.StageSendUsPerToken))
	}
	if c.PipelineStages > 1 {
		if c.Batching != "" && c.Batching != BatchVLLM {
			errs = append(errs, fmt.Sprintf("pipeline parallelism runs with vllm batching only, not %s", c.Batching))
		}
		if c.MaxNumSeqs > 0 && c.PipelineStages > c.MaxNumSeqs {
			errs = append(errs, fmt.Sprintf("%d pipeline stages exceed max-num-seqs %d", c.PipelineStages, c.MaxNumSeqs))
		}
	}
	if c.Batching == BatchLightLLM && c.KV.BlockSize != 1 {
		errs = append(errs, fmt.Sprintf("lightllm batching needs block size 1, got %d", c.KV.BlockSize))
	}
	if c.AgeWeight < 0 {
		errs = append(errs, fmt.Sprintf("priority age weight %g must not be negative", c.AgeWeight))
	}
	for _, k := range slices.Sorted(maps.Keys(c.ClassPriorities)) {
		if v := c.ClassPriorities[k]; v < -100 || v > 100 {
			errs = append(errs, fmt.Sprintf("priority %d of class %q outside [-100, 100]", v, k))
		}
	}
	if c.Latency == nil {
		errs = append(errs, "no latency model")
	}
	if len(errs) > 0 {
		return errors.New("instance config: " + strings.Join(errs, "; "))
	}
	return nil
}

// classPriority returns p = max_p − p(class) under the (possibly overridden)
// mapping; unknown and empty classes map like "standard".
type classMap struct {
	m    map[string]int
	maxP int
}

func newClassMap(over map[string]int) classMap {
	m := DefaultClassPriorities()
	for k, v := range over {
		m[k] = v
	}
	maxP := m["standard"]
	for _, v := range m {
		maxP = max(maxP, v)
	}
	return classMap{m: m, maxP: maxP}
}

func (c classMap) priority(class string) float64 {
	v, ok := c.m[class]
	if !ok {
		v = c.m["standard"]
	}
	return float64(c.maxP - v)
}
