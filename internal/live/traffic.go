package live

import (
	"log/slog"

	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// traffic is what observe sends: a workload (spec, preset or flags) or a
// trace played back (--trace). Both become httpload jobs through a planner,
// and every finished job becomes a trace row through record.
type traffic interface {
	// seed is the seed of the synthetic prompt text.
	seed() int64
	// users is the concurrency known before the run (closed-loop users),
	// for the prewarm and the self-test; 0 when there is none.
	users() int
	// newPlanner starts the request stream from its beginning; job ids
	// start at idBase (the warm-up takes 0..idBase−1).
	newPlanner(p *httpload.Prompter, cfg *config, idBase int64, log *slog.Logger) jobPlanner
	// columns are the trace's optional columns, decided before the first row.
	columns() tracev2.Columns
	// describe writes what the header says about the traffic: its name,
	// seed, session context growth, loop type and goodput targets.
	describe(h *tracev2.Header)
	// bench is the traffic's settings as vllm bench serve names them.
	bench() benchFacts
	// client is what the header says of the client that sends it (the
	// cap, prewarm, timeout and sweep level are added from the flags).
	client() tracev2.Client
}

// jobPlanner is one pass over a traffic's requests. jobs and followUp run
// under the dispatcher's plan lock, never at the same time; take runs on
// the sink and has a lock of its own.
type jobPlanner interface {
	jobs(yield func(httpload.Job) bool)
	// followUp is nil when no request depends on a completion.
	followUpFunc() func(httpload.Result) (httpload.Job, bool)
	// take removes and returns the trace fields of a finished job.
	take(id int64) *reqInfo
	// total is the number of requests the run will send when known, else −1.
	total() int64
	// finish ends the pass (sessions still open end as interrupted).
	finish()
}

// modelAware is traffic that learns the served models once set-up has
// listed them.
type modelAware interface{ setModels(models []string) }
