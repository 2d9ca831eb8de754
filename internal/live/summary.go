package live

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"servesim/internal/httpload"
	"servesim/internal/report"
)

// maxITLSamples bounds the inter-token gaps kept for the ITL percentiles;
// beyond it a uniform reservoir sample is kept (4M gaps: 16 MiB).
const maxITLSamples = 4 << 20

// tally accumulates what the end summary reports, one Result at a time, on
// the dispatcher's sink goroutine.
type tally struct {
	goodput goodput
	slo     goodput // a sweep's SLO bounds per request (sweep.SLO.RequestTargets)

	ok, failed, timeouts, dropped, late int64
	inputTokens, outputTokens           int64
	goodputOK, sloOK                    int64
	lastDoneUS                          int64
	firstEndUS, lastEndUS               int64 // first and last end of a completed request

	// Per completed request, in ms (vllm bench serve's definitions):
	// TTFT = first token − send; TPOT = (E2EL − TTFT)/(output − 1);
	// E2EL = last chunk − send; and the same from the intended send time.
	ttft, tpot, e2el, ttftIntended, e2elIntended []float64
	lagMs                                        []float64 // send − intended, every sent request

	// For the steady-state test of the server's queue (steady.Check):
	// every request's arrival at the server (its send; its intended time
	// when never sent) and when it left the queue (its first token; −1
	// when never served: timed out or not sent; its arrival when refused,
	// which is no load). A client cap's own queue is not the server's.
	arrivals, starts []int64

	itlUs   []int32 // gaps between consecutive text chunks, µs
	itlSeen int64
	itlSum  float64 // ms, over every gap (the mean is exact)
	rng     *rand.Rand
}

func newTally(g goodput) *tally {
	return &tally{goodput: g, rng: rand.New(rand.NewPCG(1, 2))}
}

// add counts one Result.
func (t *tally) add(r *httpload.Result) {
	t.lastDoneUS = max(t.lastDoneUS, r.DoneUS, r.LastChunkUS)
	arrived := r.Job.IntendedUS
	if r.Sent() {
		arrived = r.SendUS
	}
	t.arrivals = append(t.arrivals, arrived)
	switch {
	case r.Status == httpload.StatusOK:
		t.starts = append(t.starts, max(r.FirstTokenUS, r.FirstChunkUS))
	case r.Status == httpload.StatusTimeout || !r.Sent():
		t.starts = append(t.starts, -1)
	default:
		t.starts = append(t.starts, arrived)
	}
	if r.Sent() {
		lag := r.LagUS()
		t.lagMs = append(t.lagMs, float64(lag)/1000)
		if lag > 1000 {
			t.late++
		}
	} else {
		t.dropped++
	}
	switch r.Status {
	case httpload.StatusOK:
	case httpload.StatusTimeout:
		t.timeouts++
		t.failed++
		return
	default:
		t.failed++
		return
	}
	if t.ok == 0 || r.LastChunkUS < t.firstEndUS {
		t.firstEndUS = r.LastChunkUS
	}
	t.lastEndUS = max(t.lastEndUS, r.LastChunkUS)
	t.ok++
	out := r.GeneratedTokens()
	t.inputTokens += int64(r.PromptTokens)
	t.outputTokens += int64(out)
	first := r.FirstTokenUS
	if first == 0 {
		first = r.FirstChunkUS
	}
	ttft := float64(first-r.SendUS) / 1000
	e2el := float64(r.LastChunkUS-r.SendUS) / 1000
	t.ttft = append(t.ttft, ttft)
	t.e2el = append(t.e2el, e2el)
	t.ttftIntended = append(t.ttftIntended, float64(first-r.Job.IntendedUS)/1000)
	t.e2elIntended = append(t.e2elIntended, float64(r.LastChunkUS-r.Job.IntendedUS)/1000)
	tpot := 0.0
	if out > 1 && r.Job.Stream { // a response sent whole has no per-token timing
		tpot = (e2el - ttft) / float64(out-1)
		t.tpot = append(t.tpot, tpot)
	}
	t.addITL(r)
	if t.goodput.set() && t.goodput.meets(ttft, tpot, e2el) {
		t.goodputOK++
	}
	if t.slo.meets(ttft, tpot, e2el) {
		t.sloOK++
	}
}

// addITL takes the gaps between the chunks that carried text: from the
// first token on, TextChunks of them (a role chunk before and the usage
// chunk after are not tokens).
func (t *tally) addITL(r *httpload.Result) {
	cs := textChunks(r)
	for k := 1; k < len(cs); k++ {
		gap := cs[k] - cs[k-1]
		t.itlSum += float64(gap) / 1000
		t.itlSeen++
		v := int32(min(gap, 1<<31-1))
		if len(t.itlUs) < maxITLSamples {
			t.itlUs = append(t.itlUs, v)
		} else if i := t.rng.Int64N(t.itlSeen); i < maxITLSamples {
			t.itlUs[i] = v
		}
	}
}

// itlMs is the kept inter-token gaps in ms (a uniform sample beyond
// maxITLSamples) and the exact mean of all of them.
func (t *tally) itlMs() (gaps []float64, mean float64) {
	gaps = make([]float64, len(t.itlUs))
	for i, v := range t.itlUs {
		gaps[i] = float64(v) / 1000
	}
	if t.itlSeen > 0 {
		mean = t.itlSum / float64(t.itlSeen)
	}
	return gaps, mean
}

// textChunks are the arrival times of the chunks of r that carried text:
// TextChunks of them from the first (servers send them back to back, between
// a role chunk and a usage chunk).
func textChunks(r *httpload.Result) []int64 {
	i := r.FirstTokenChunk
	if r.FirstTokenUS == 0 || r.TextChunks < 1 || i < 0 || i >= len(r.ChunkUS) {
		return nil
	}
	return r.ChunkUS[i:min(i+r.TextChunks, len(r.ChunkUS))]
}

// summaryInfo is what the summary says besides the tally.
type summaryInfo struct {
	maxConcurrency int
	interrupted    bool
}

// write renders the summary in the metric names of vllm bench serve, then
// the latencies from the intended send time (which a client that queues
// behind its own concurrency cap would otherwise hide), lag, late and
// dropped counts.
func (t *tally) write(w io.Writer, info summaryInfo) error {
	var b strings.Builder
	line := func(name string, v any) { fmt.Fprintf(&b, "%-40s %v\n", name+":", v) }
	num := func(name string, v float64) { line(name, fmt.Sprintf("%.2f", v)) }
	rule := func(title string) {
		pad := max(50-len(title), 2)
		fmt.Fprintf(&b, "%s%s%s\n", strings.Repeat("-", pad/2), title, strings.Repeat("-", pad-pad/2))
	}
	dur := float64(t.lastDoneUS) / 1e6
	rate := func(n float64) float64 {
		if dur <= 0 {
			return 0
		}
		return n / dur
	}
	b.WriteString("============ Serving Benchmark Result ============\n")
	if info.interrupted {
		line("Interrupted", "yes (requests still in flight were drained or cancelled)")
	}
	line("Successful requests", t.ok)
	line("Failed requests", t.failed)
	if t.timeouts > 0 {
		line("Timed out requests", t.timeouts)
	}
	if info.maxConcurrency > 0 {
		line("Maximum request concurrency", info.maxConcurrency)
	}
	num("Benchmark duration (s)", dur)
	line("Total input tokens", t.inputTokens)
	line("Total generated tokens", t.outputTokens)
	num("Request throughput (req/s)", rate(float64(t.ok)))
	if t.goodput.set() {
		num("Request goodput (req/s)", rate(float64(t.goodputOK)))
	}
	num("Output token throughput (tok/s)", rate(float64(t.outputTokens)))
	num("Total Token throughput (tok/s)", rate(float64(t.inputTokens+t.outputTokens)))
	stat := func(title, short string, xs []float64, mean float64) {
		rule(title)
		if len(xs) == 0 {
			// No sample (nothing streamed, or nothing completed): a 0.00
			// would read as a measurement.
			for _, s := range []string{"Mean", "Median", "P99"} {
				line(s+" "+short+" (ms)", "not measured")
			}
			return
		}
		num("Mean "+short+" (ms)", mean)
		num("Median "+short+" (ms)", report.Percentile(xs, 50))
		num("P99 "+short+" (ms)", report.Percentile(xs, 99))
	}
	stat("Time to First Token", "TTFT", t.ttft, report.Mean(t.ttft))
	stat("Time per Output Token (excl. 1st token)", "TPOT", t.tpot, report.Mean(t.tpot))
	itl, itlMean := t.itlMs()
	stat("Inter-token Latency", "ITL", itl, itlMean)
	stat("End-to-end Latency", "E2EL", t.e2el, report.Mean(t.e2el))
	rule("From the intended send time")
	num("Mean TTFT from intended (ms)", report.Mean(t.ttftIntended))
	num("Median TTFT from intended (ms)", report.Percentile(t.ttftIntended, 50))
	num("P99 TTFT from intended (ms)", report.Percentile(t.ttftIntended, 99))
	num("Mean E2EL from intended (ms)", report.Mean(t.e2elIntended))
	num("Median E2EL from intended (ms)", report.Percentile(t.e2elIntended, 50))
	num("P99 E2EL from intended (ms)", report.Percentile(t.e2elIntended, 99))
	num("Median send lag (ms)", report.Percentile(t.lagMs, 50))
	num("P99 send lag (ms)", report.Percentile(t.lagMs, 99))
	line("Late requests (sent > 1 ms late)", t.late)
	line("Dropped requests (never sent)", t.dropped)
	b.WriteString(strings.Repeat("=", 50) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}
