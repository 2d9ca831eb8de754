package instance

import (
	"fmt"

	"servesim/internal/des"
	"servesim/internal/des/kvcache"
)

// Status is where a request is in its lifecycle (docs/simulator.md §3).
type Status uint8

// Statuses. Pending, Queued and Running are live; the rest are terminal.
const (
	StatusNew       Status = iota // not yet submitted to an instance
	StatusPending                 // submitted, waiting for its Queued event (Q(r))
	StatusQueued                  // in the wait queue
	StatusRunning                 // in the running batch
	StatusCompleted               // last token produced or length cap reached
	StatusDropped                 // failed an enqueue guard (dropped_unservable)
	StatusTimedOut                // deadline passed first
	StatusRejected                // refused by admission or routing (cluster)
	StatusPrefilled               // P/D prefill part done; its KV blocks stay held until ReleaseKV
	StatusShed                    // pushed out of the cluster's gateway queue to make room
	StatusExpired                 // waited in the gateway queue past its time to live
	StatusEvicted                 // stopped on its instance by the gateway to make room
)

var statusNames = [...]string{"new", "pending", "queued", "running", "completed", "dropped", "timed_out", "rejected", "prefilled",
	"shed", "expired", "evicted"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Terminal reports whether s is a final state.
func (s Status) Terminal() bool { return s >= StatusCompleted }

// Request is one inference request. The caller fills the exported fields
// before Submit and must not change them afterwards; the rest is simulator
// state. Requests are referenced by the simulator only while live.
type Request struct {
	ID        int64
	ArrivalUs int64   // cluster entry time (µs)
	Prompt    []int32 // prompt token ids, shared prefix first; the KV cache hashes full blocks of these
	Output    []int32 // ids of the generated tokens when known (may be nil: ids are then synthesised from ID)
	// KnownHashes, if set, name the prompt's first full blocks at the
	// instances' block size, in regions (kvcache.Seq.Known): the KV cache
	// takes their hashes from the names instead of hashing those blocks'
	// ids in Prompt, which it then never reads.
	KnownHashes  []kvcache.Region
	OutputLen    int // O: the true output length, read only by the execution engine (INV-9)
	MaxOutputLen int // the client's declared budget; 0 = none declared
	SLOClass     string
	Tenant       string
	DeadlineUs   int64 // absolute deadline (µs); 0 = none
	SLOTargetUs  int64 // the request's own TTFT target (µs), read by the gateway's deadline order; 0 = none
	SessionID    string
	Round        int
	Tag          any // caller's data, carried to the Result untouched

	// Private declares that the request's tokens from position PrivateFrom
	// on, prompt and generated, follow its prefix in no other request of the
	// run: true of fresh ids drawn for this request alone, false for a
	// session round whose context a later round resends. The KV cache then
	// neither hashes nor indexes those blocks (kvcache.Seq.Private), which
	// leaves every result unchanged when the declaration is true.
	Private     bool
	PrivateFrom int

	// PrefillOnly marks the prefill part of a disaggregated request (docs/simulator.md
	// §12): it finishes as StatusPrefilled when its prefill completes,
	// produces no token, and keeps its KV blocks until ReleaseKV.
	PrefillOnly bool

	// MediaTokens are the image, audio and video tokens among the
	// prompt's: a cluster with an encode pool encodes them before routing.
	MediaTokens int

	status      Status
	stamp       uint64 // RoutingStamp; 0 = none yet
	inst        *Instance
	seq         kvcache.Seq
	progress    int // tokens whose KV is computed
	g           int // generated tokens
	grant       int // tokens granted in the current step
	preemptions int
	capped      bool

	prioBase float64 // slo-class or constant priority
	prioKey  float64 // time-invariant ordering key (base + w·arrival_s for aging)
	qkey     int64   // fcfs position: enqueue counter, negative for preempted
	qidx     int     // index in the wait-queue heap, -1 when not queued
	staged   bool    // queued but not yet seen by the scheduler (async.go)

	enqueueUs, firstSchedUs, firstTokEnd, lastEnd, doneUs int64
	// flightWait and flightStep are, at the request's last enqueue, the
	// time left of the step then executing and that step's length (both 0
	// when the instance was idle).
	flightWait, flightStep int64
	cachedFirst            int // prompt tokens from the prefix cache at first admission
	hasFirstSched          bool

	queuedH, timeoutH des.Handle

	// Lazy decoding (lazy.go): while lazy, progress and g are the values at
	// round dBase and grow by one per round.
	aseq  int64 // admission sequence: running-list order
	lazy  bool
	lgen  uint32      // invalidates stale completion-heap entries
	bidx  int         // index in its bucket
	res   int         // bucket: the round residue at which it needs a fresh block
	dBase int64       // round at which progress and g were last brought up to date
	dIdx  int64       // step index of the first round not yet in its ITL record
	fin   uint8       // how the last step finished it: finDone, finCapped, finPrefilled (0 = not)
	held  bool        // holds KV blocks reserved for a P/D decode part while not running
	mb    *microBatch // the pipeline micro-batch it is in flight in, if any

	// ITL bookkeeping (itl.go)
	itlSum    int64 // Σ samples, A_tok included
	itlCount  int
	spanOpen  bool
	spanStart int64 // step index of the open span's first sample
	spanEnd   int64 // step index of its last sample
	spans     []span
	explicit  []int64 // samples not equal to one step's Δ (A_tok included)
}

type span struct{ s, e int64 }

// Status is the request's current state.
func (r *Request) Status() Status { return r.status }

// Reset clears a request whose result has been handed out, for reuse as a
// new one by a source that recycles its requests. Every field is cleared
// but the counter that tells stale references the simulator may still hold
// to the old request (entries of lazy decoding's completion heap) from the
// new one: it keeps counting.
func (r *Request) Reset() {
	gen := r.lgen
	*r = Request{}
	r.lgen = gen
}

// Generated is the number of output tokens produced so far.
func (r *Request) Generated() int { return r.g + r.pendingRounds() }

// Progress is the number of tokens whose KV is computed.
func (r *Request) Progress() int { return r.progress + r.pendingRounds() }

func (r *Request) pendingRounds() int {
	if r.lazy && r.inst != nil {
		return int(r.inst.lz.d - r.dBase)
	}
	return 0
}

// Preemptions is how often the request was preempted.
func (r *Request) Preemptions() int { return r.preemptions }

// BlockHash returns the chained hash of the request's full block i (block
// size b); routing scorers use it for prefix affinity. Hashes computed
// before Submit are kept for the instance, which must use the same block
// size.
func (r *Request) BlockHash(i, blockSize int) kvcache.Hash {
	r.initSeq()
	return r.seq.BlockHash(i, blockSize)
}

// PromptHashes returns the chained hashes of the first n full prompt
// blocks (block size b), computed once and kept like BlockHash's. The
// slice is the request's own: the caller reads it before the request is
// submitted or recycled and does not modify it.
func (r *Request) PromptHashes(n, blockSize int) []kvcache.Hash {
	r.initSeq()
	return r.seq.BlockHashes(n, blockSize)
}

// RoutingStamp is the request's number for the stand-ins of its private
// blocks in a router's prefix index (unique per request, so that picking
// it twice, or picking a P/D part of it, sees the same stand-ins as it
// would see the same hashes). The first call takes the next number from
// *counter.
func (r *Request) RoutingStamp(counter *uint64) (stamp uint64, isNew bool) {
	if r.stamp == 0 {
		*counter++
		r.stamp = *counter
		return r.stamp, true
	}
	return r.stamp, false
}

// ShareRoutingStamp gives r the stamp of whole, a request with the same
// tokens (r is a P/D part of it).
func (r *Request) ShareRoutingStamp(whole *Request, counter *uint64) {
	r.stamp, _ = whole.RoutingStamp(counter)
}

// SharedPromptBlocks is the number of leading full prompt blocks that are
// not private (Private): the others' hashes can equal no other request's.
func (r *Request) SharedPromptBlocks(blockSize int) int {
	n := r.PromptBlocks(blockSize)
	if r.Private {
		n = min(n, max(r.PrivateFrom, 0)/blockSize) // Submit refuses a negative one
	}
	return n
}

// PrepareHashes gives the request's hash list a recycled buffer from pool
// (the pool the instances share) before BlockHash fills it.
func (r *Request) PrepareHashes(pool *kvcache.Pool) {
	r.initSeq()
	pool.Prepare(&r.seq)
}

func (r *Request) initSeq() {
	if r.seq.Prompt == nil {
		r.fillSeq(&r.seq)
		r.seq.ExpectedTokens = len(r.Prompt) + r.MaxOutputLen // one hash list for the request's life
	}
}

// fillSeq gives s the request's tokens and privacy.
func (r *Request) fillSeq(s *kvcache.Seq) {
	s.Prompt, s.Output, s.Known = r.Prompt, r.Output, r.KnownHashes
	s.Seed = uint64(r.ID)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	s.Private, s.PrivateFrom = r.Private, r.PrivateFrom
}

// PromptBlocks is the number of full blocks of the prompt.
func (r *Request) PromptBlocks(blockSize int) int { return len(r.Prompt) / blockSize }

func (r *Request) target() int { return len(r.Prompt) + r.g }

// Result is a request's outcome, delivered once when it becomes terminal (or
// at the end of the run for live requests). Times are µs on the run's origin;
// latencies are client-visible (they include A_tok and A_end).
type Result struct {
	ID           int64
	Status       Status
	LengthCapped bool // completed by the max_model_len cap
	Instance     int

	ArrivalUs        int64
	EnqueueUs        int64 // 0 if never enqueued
	FirstScheduledUs int64 // -1 if never scheduled
	FirstTokenUs     int64 // engine time of the first token's step end; -1 if none
	DoneUs           int64 // engine time the request became terminal; -1 if live

	TTFTUs            int64 // first token end + A_tok − arrival; -1 if none
	E2EUs             int64 // TTFT + ΣITL + A_end (A_end only if O > 0); -1 unless completed
	ITLSumUs          int64 // Σ ITL samples (A_tok included)
	ITLCount          int   // number of ITL samples
	SchedulingDelayUs int64 // first scheduled − arrival; -1 if never scheduled
	// InFlightWaitUs is how long the request waited, when it was enqueued,
	// for the step then executing to end, and InFlightStepUs that step's
	// length; both 0 when the instance was idle. Where in a step a request
	// arrives is a phase a real server does not share with the simulation:
	// the same request could have waited anywhere from 0 to the whole step.
	InFlightWaitUs, InFlightStepUs int64

	PromptTokens       int
	OutputTokens       int // tokens generated
	CachedPromptTokens int // from the prefix cache at first admission
	Preemptions        int

	SLOClass  string
	Tenant    string
	SessionID string
	Round     int
	Tag       any

	// NoDecodeKV marks a P/D request dropped because the decode instance it
	// was routed to had no free KV blocks for its prompt when its prefill
	// ended (set by the cluster): a shortage of the moment, not a request
	// the deployment cannot serve.
	NoDecodeKV bool
	// InTransfer marks a live P/D request between its prefill and its
	// decode part at the end of a run (set by the cluster).
	InTransfer bool
	// EncodeRejected marks a multimodal request rejected at the encode
	// stage: no encode instance could take its media (set by the cluster).
	EncodeRejected bool
	// InGateway marks a request still waiting in the cluster's gateway
	// queue at the end of a run (set by the cluster).
	InGateway bool
	// Refusal says why the cluster refused a rejected request ("" =
	// admission): tier-shed, gaie-legacy, tenant-budget, queue-full.
	Refusal string
}

// TPOTUs is ΣITL / (output − 1), 0 when fewer than two tokens.
func (r *Result) TPOTUs() float64 {
	if r.OutputTokens < 2 {
		return 0
	}
	return float64(r.ITLSumUs) / float64(r.OutputTokens-1)
}

// legal[from] is the set of states a request may move to (docs/simulator.md §3).
func legal(from, to Status) bool {
	switch from {
	case StatusNew:
		// New → Dropped: a P/D decode part whose blocks could not be
		// reserved (docs/simulator.md §12 step 2).
		// New → Shed, Expired: the cluster's gateway queue let it go.
		return to == StatusPending || to == StatusRejected || to == StatusDropped || to == StatusShed || to == StatusExpired
	case StatusPending:
		return to == StatusQueued || to == StatusDropped || to == StatusTimedOut || to == StatusEvicted
	case StatusQueued:
		return to == StatusRunning || to == StatusTimedOut || to == StatusEvicted
	case StatusRunning:
		return to == StatusQueued || to == StatusCompleted || to == StatusTimedOut || to == StatusPrefilled || to == StatusEvicted
	}
	return false
}

// setStatus moves r to st; an illegal transition is a programming error.
func setStatus(r *Request, st Status) {
	if !legal(r.status, st) {
		panic(fmt.Sprintf("instance: request %d: illegal transition %s -> %s", r.ID, r.status, st))
	}
	r.status = st
}

// Drop marks a new request that the cluster could not place (a P/D decode
// part whose KV blocks could not be reserved) as dropped_unservable at
// instance inst, and returns its result.
func Drop(r *Request, at int64, inst int) Result {
	setStatus(r, StatusDropped)
	res := Reject(r, at)
	res.Status, res.Instance = StatusDropped, inst
	return res
}

// Unrouted is the result of a request still held by the cluster at the end
// of a run (between arrival and its instance, or between a P/D prefill and
// its decode part); its status stays new.
func Unrouted(r *Request) Result {
	return Result{ID: r.ID, Status: r.status, Instance: -1, ArrivalUs: r.ArrivalUs,
		FirstScheduledUs: -1, FirstTokenUs: -1, DoneUs: -1, TTFTUs: -1, E2EUs: -1, SchedulingDelayUs: -1,
		PromptTokens: len(r.Prompt), SLOClass: r.SLOClass, Tenant: r.Tenant, SessionID: r.SessionID,
		Round: r.Round, Tag: r.Tag}
}

// Refuse marks a request that the cluster let go before it reached an
// instance with st (StatusRejected, StatusShed or StatusExpired) and returns
// its result.
func Refuse(r *Request, at int64, st Status) Result {
	if st == StatusRejected {
		return Reject(r, at)
	}
	setStatus(r, st)
	return refused(r, at, st)
}

// Reject marks a request that admission or routing refused (it never reached
// an instance) and returns its result.
func Reject(r *Request, at int64) Result {
	if r.status != StatusDropped {
		setStatus(r, StatusRejected)
	}
	return refused(r, at, StatusRejected)
}

func refused(r *Request, at int64, st Status) Result {
	return Result{ID: r.ID, Status: st, Instance: -1, ArrivalUs: r.ArrivalUs,
		FirstScheduledUs: -1, FirstTokenUs: -1, DoneUs: at, TTFTUs: -1, E2EUs: -1, SchedulingDelayUs: -1,
		PromptTokens: len(r.Prompt), SLOClass: r.SLOClass, Tenant: r.Tenant, SessionID: r.SessionID,
		Round: r.Round, Tag: r.Tag}
}
