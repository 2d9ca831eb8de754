package calibrate

import (
	"strings"

	"servesim/internal/abtest"
)

// CompareHelp is the --help text of calibrate compare (RunCompare).
var CompareHelp = `calibrate compare judges two real runs of a server, A and B (TraceV2 traces, as
observe writes them; any form the other commands take; - for stdin, once): is B
faster or slower, by how much, and is that more than the measurement alone
could make?

When both runs played the same schedule (the same request ids at the same
arrival offsets with the same prompt lengths: observe --trace of one trace, or
one workload spec and seed), requests are paired and the pairs are resampled
together (paired bootstrap); otherwise each run is resampled on its own. The
output says which mode was used and why.

For TTFT, TPOT (each request's mean time per output token) and E2E at p50, p90,
p99 and the mean, the output and request throughputs and, with --slo, goodput
(requests per second that meet every bound), it gives A, B, B's relative
difference from A, its bootstrap interval (--confidence, --resamples, seeded by
--seed: the same inputs give the same bytes), and a verdict against the noise
floor: the larger of the client's self-test error recorded in the traces'
headers (observe's self-test; relative to A's value) and, when a side has
repeats (A1.csv,A2.csv), the largest relative spread between its repeats.
"beyond the noise" means the whole interval lies past the floor; "within the
noise" that it excludes zero but not the floor; otherwise there is no
difference the run can detect. The two deployments (the traces' headers) are
shown side by side with the keys that differ marked.

Did the upgrade help? Run the same trace against both servers, then compare:

   observe --url http://old:8000 --model qwen3-14b --workload chatbot --rate 4 \
           --num-requests 500 --streaming --seed 7 -o before
   observe --url http://new:8000 --model qwen3-14b --trace before.csv --streaming -o after
   calibrate compare before.csv after.csv
   calibrate compare before.csv after.csv --format markdown -o "$GITHUB_STEP_SUMMARY"
   calibrate compare before.csv after.csv --format html -o ab.html
   calibrate compare a1.csv,a2.csv,a3.csv b1.csv,b2.csv,b3.csv --slo 'ttft.p99<500ms' \
             --assert 'ttft.p99:regress,goodput:regress'

Exit codes: 0 success, 1 runtime failure, 2 bad usage or invalid input (a
trace that is not a measured run, one with no request finished ok), 3 a gate
failed (the output is written first).

Gates (--assert):

` + Indent(abtest.GateGrammar, "   ")

// Indent puts prefix before every line of s that is not empty.
func Indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
