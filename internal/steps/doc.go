// Package steps reads the engine steps of a real server out of the times
// its responses' chunks arrived, and sets a latency model's predicted step
// times beside them (docs/calibrate.md, "Step times from captures").
//
// A continuous-batching server ends every step with one token for each
// running request, so the chunks of all requests bunch at the step ends.
// Extract clusters the chunk times into step ends, numbers the steps from
// the tokens each request must have (output tokens − 1 steps after its
// first token), keeps the steps whose start and end it can tell, and gives
// each its batch: the decodes running and the prompts that produced a
// first token in it. Table compares them with a model by step type.
//
// It reads no file and knows the simulator only through latency.Step; it
// writes only to the io.Writer it is given.
package steps
