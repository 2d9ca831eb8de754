package tracev2

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
)

// SimResult is one completed simulated request (docs/tracev2.md §9), as replay writes it
// and calibrate reads it. Times in µs. Fields marked ours are ignored by
// BLIS's decoder.
type SimResult struct {
	RequestID         int64   `json:"request_id"`
	TTFTUs            float64 `json:"ttft_us"` // arrival to first token, overheads included
	E2EUs             float64 `json:"e2e_us"`  // TTFT + ΣITL + A_end
	InputTokens       int     `json:"input_tokens"`
	OutputTokens      int     `json:"output_tokens"`
	SLOClass          string  `json:"slo_class,omitempty"`
	Model             string  `json:"model,omitempty"`
	ITLMeanUs         float64 `json:"itl_mean_us,omitempty"` // ΣITL / (output_tokens − 1); omitted if 0
	ArrivalUs         int64   `json:"arrival_us"`            // ours: normalised injection time
	SchedulingDelayUs float64 `json:"scheduling_delay_us"`   // ours
	NumPreemptions    int     `json:"num_preemptions"`       // ours
	CachedInputTokens int     `json:"cached_input_tokens"`   // ours
	Instance          string  `json:"instance,omitempty"`    // ours: instance_<i>
	// WaitInFlightUs is how long the request waited on arrival for the
	// engine step then executing to end, StepInFlightUs that step's length
	// (ours; both omitted when the engine was idle). The real request met
	// its own server at a phase the simulation does not share, so it could
	// have waited anywhere from 0 to the whole step: calibrate --interval
	// spans that in each request's interval.
	WaitInFlightUs float64 `json:"wait_in_flight_us,omitempty"`
	StepInFlightUs float64 `json:"step_in_flight_us,omitempty"`
}

// SimResultFormat selects the JSON layout.
type SimResultFormat int

const (
	// SimResultArray is a JSON array with 2-space indentation.
	SimResultArray SimResultFormat = iota
	// SimResultJSONL is one compact object per line (for pipes).
	SimResultJSONL
)

// WriteSimResults writes results sorted by request_id (a sorted copy; the
// caller's slice is untouched), "[]" when empty. Whole numbers print
// without a decimal point (encoding/json's shortest form); NaN or infinite
// times are an error.
func WriteSimResults(w io.Writer, results []SimResult, format SimResultFormat) error {
	sorted := slices.Clone(results)
	if sorted == nil {
		sorted = []SimResult{}
	}
	slices.SortStableFunc(sorted, func(a, b SimResult) int { return cmp.Compare(a.RequestID, b.RequestID) })
	for i := range sorted {
		r := &sorted[i]
		for _, v := range []float64{r.TTFTUs, r.E2EUs, r.ITLMeanUs, r.SchedulingDelayUs, r.WaitInFlightUs, r.StepInFlightUs} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("write sim results: request %d: time %v is not finite", r.RequestID, v)
			}
		}
	}
	var out []byte
	switch format {
	case SimResultArray:
		b, err := json.MarshalIndent(sorted, "", "  ")
		if err != nil {
			return fmt.Errorf("write sim results: %w", err)
		}
		out = append(b, '\n')
	case SimResultJSONL:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for i := range sorted {
			if err := enc.Encode(&sorted[i]); err != nil {
				return fmt.Errorf("write sim results: %w", err)
			}
		}
		out = buf.Bytes()
	default:
		return fmt.Errorf("write sim results: unknown format %d", format)
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("write sim results: %w", err)
	}
	return nil
}
