package calibrate

// StepsHelp is the --help text of calibrate steps (RunSteps): how the
// steps are read out of chunk times, what the table holds, and the fit.
const StepsHelp = `calibrate steps reads the engine steps of a real trace (TraceV2, any form; - for
stdin) out of the times its chunks arrived, and prints, by step type, the real
step times beside the ones the latency model of its deployment predicts.

A continuous-batching server ends every step with one token for each running
request. Chunk times of all requests within --step-window of each other are one
step end; the steps between two ends are counted from the tokens each request
must have (output tokens − 1 steps after its first token). A step whose start
and end are one step apart is kept, with its batch: the decodes running (and
the context they hold) and the prompts that produced their first token in it,
with the earlier chunks of a prompt longer than what max_num_batched_tokens
leaves after the decodes on the steps before. A request whose chunks contradict
the others' (a preemption, or a window that merges two steps) is not explained;
the summary says how many chunks are.

Every chunk is known from the ITL file (NAME.itl.csv beside the trace, or
--itl-data; observe --record-itl writes it). Without it only each request's
first and last chunk are, which places few steps.

The deployment is the one replay would simulate: the trace's header under
--deployment and the flags. Rows: decode only, one prompt, several prompts, by
the number of decodes running; real and predicted median and mean, in ms, and
the error of the predicted mean.

With --fit-out, the physics model is fitted to the steps themselves (a step's
time is linear in the inverse shares and the eager cost, so no replay is
needed, and queueing blurs nothing: far better conditioned than per-request
errors at saturation), and the fitted deployment is written for replay
--deployment.

Exit codes: 0 success, 1 runtime failure, 2 bad usage or invalid input.

Examples:

   observe --url http://127.0.0.1:8000 --model qwen3-14b --workload chatbot --rate 4 \
     --record-itl -o cap
   calibrate steps cap.csv --format markdown -o steps.md
   calibrate steps cap.csv --fit-out fitted.yaml -o steps.txt`
