package steps

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is the step table of one trace, as calibrate steps writes it.
type Report struct {
	Trace      string  `json:"trace"`
	Model      string  `json:"model"`          // the deployment's model
	GPU        string  `json:"gpu"`            // and GPU
	Latency    string  `json:"latency_model"`  // the latency model that predicts
	WindowUs   int64   `json:"step_window_us"` // Options.WindowUs
	StepEnds   int     `json:"step_ends"`
	Steps      int     `json:"steps"` // steps with a known start and end
	Requests   int     `json:"requests"`
	Consistent int     `json:"consistent_requests"`
	Sparse     int     `json:"sparse_requests"` // requests with only their first and last chunk placed
	Chunks     int     `json:"chunks"`
	Explained  int     `json:"explained_chunks"`
	Share      float64 `json:"explained_share"`
	Rows       []Row   `json:"rows"`
}

// NewReport is the report of ex with its rows.
func NewReport(ex *Extraction, rows []Row) Report {
	return Report{StepEnds: ex.StepEnds, Steps: len(ex.Steps), Requests: ex.Requests, Consistent: ex.Consistent,
		Sparse: ex.Sparse, Chunks: ex.Chunks, Explained: ex.Explained, Share: ex.ExplainedShare(), Rows: rows}
}

// Formats are the formats Write knows.
func Formats() []string { return []string{"text", "json", "markdown"} }

// Write writes r on w as text, json or markdown.
func (r Report) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		if r.Rows == nil {
			r.Rows = []Row{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "markdown":
		return r.markdown(w)
	case "text":
		return r.text(w)
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(Formats(), ", "))
}

func (r Report) summary() string {
	s := fmt.Sprintf("%s: %d step ends, %d steps with a known start and end; %d of %d chunks explained (%.1f%%), %d of %d requests consistent",
		r.Trace, r.StepEnds, r.Steps, r.Explained, r.Chunks, 100*r.Share, r.Consistent, r.Requests)
	if r.Sparse > 0 {
		s += fmt.Sprintf("; %d requests with only their first and last chunk placed (no ITL data for them)", r.Sparse)
	}
	return s + fmt.Sprintf(". Predicted: %s on %s (%s).", r.Model, r.GPU, r.Latency)
}

func (r Report) text(w io.Writer) error {
	if _, err := fmt.Fprintln(w, r.summary()); err != nil {
		return err
	}
	if len(r.Rows) == 0 {
		_, err := fmt.Fprintln(w, "no step has a known start and end: the steps need a chunk per token (ITL data)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tdecodes\tsteps\tprompt tok\treal p50 ms\treal mean ms\tpred p50 ms\tpred mean ms\terror\t")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%+.1f%%\t\n", x.Kind, x.Decodes, x.Steps, x.PromptTokens,
			x.RealP50Ms, x.RealMeanMs, x.PredP50Ms, x.PredMeanMs, x.ErrorPct)
	}
	return tw.Flush()
}

func (r Report) markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Step times\n\n%s\n\n", r.summary())
	if len(r.Rows) == 0 {
		b.WriteString("No step has a known start and end: the steps need a chunk per token (ITL data).\n")
	} else {
		b.WriteString("| step | decodes | steps | prompt tokens | real p50 ms | real mean ms | predicted p50 ms | predicted mean ms | error |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range r.Rows {
			fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.2f | %.2f | %.2f | %.2f | %+.1f%% |\n", x.Kind, x.Decodes, x.Steps, x.PromptTokens,
				x.RealP50Ms, x.RealMeanMs, x.PredP50Ms, x.PredMeanMs, x.ErrorPct)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
