package workload

import (
	"fmt"
	"io"
	"text/tabwriter"

	"servesim/internal/flagspec"
)

// ListFlags describe --list-workloads, which prints the presets instead of
// running the command (flagspec's Answer).
func ListFlags() []flagspec.Flag {
	return []flagspec.Flag{{Name: "list-workloads", Kind: flagspec.Bool, Category: flagspec.CatWorkload,
		Answer: func(_ func(string) any, w io.Writer) error { return ListPresets(w) },
		Usage:  "list the --workload presets with their token lengths (mean, stdev, min, max of a gaussian) and exit"}}
}

// ListPresets writes the presets of --workload as a table: each one's
// shared prefix and the gaussian its prompt and output lengths are drawn
// from (mean, standard deviation, then clipped to [min, max]), from the
// table the presets are built from.
func ListPresets(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "preset\tprefix tokens\tprompt tokens mean/stdev/min/max\toutput tokens mean/stdev/min/max")
	for _, p := range Presets() {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.Name, p.PrefixTokens,
			lengths(p.PromptMean, p.PromptStdev, p.PromptMin, p.PromptMax), lengths(p.OutputMean, p.OutputStdev, p.OutputMin, p.OutputMax))
	}
	fmt.Fprintln(tw, "\nEach needs --rate; the distribution preset holds the flags' defaults. Lengths are drawn from a gaussian of that mean and stdev, clipped to [min, max].")
	return tw.Flush()
}

// lengths is "mean / stdev / min / max", as docs/workload.md writes them.
func lengths(mean, stdev, lo, hi int) string {
	return fmt.Sprintf("%d / %d / %d / %d", mean, stdev, lo, hi)
}
