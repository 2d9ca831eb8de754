package workload_test

import (
	"fmt"

	"servesim/internal/workload"
)

// A driver (the simulator, or observe) pulls pre-generated requests in
// arrival order and reports every end; closed-loop sessions answer with
// their next round.
func Example() {
	w, err := workload.Resolve(workload.Options{
		SpecPath: "spec.yaml",
		SpecData: []byte(`num_requests: 6
clients:
  - id: chat
    concurrency: 2
    think_time_us: 1000
    input_distribution: {type: constant, params: {value: 8}}
    output_distribution: {type: constant, params: {value: 4}}
`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	src := w.NewSource()
	var queue []*workload.Request
	for r, ok := src.Next(); ok; r, ok = src.Next() {
		queue = append(queue, r)
	}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		doneUs := r.ArrivalUs + 500 // a server answering in 0.5 ms
		fmt.Printf("request %d %s round %d at %d µs, prompt %d tokens\n", r.ID, r.SessionID, r.RoundIndex, r.ArrivalUs, r.PromptTokens())
		if next, ok := src.OnComplete(r.ID, doneUs, r.OutputTokens); ok {
			queue = append(queue, next)
		}
	}
	src.Finish()
	fmt.Printf("%+v\n", src.Sessions())
	// Output:
	// request 0 concurrency_chat_user_0 round 0 at 0 µs, prompt 8 tokens
	// request 1 concurrency_chat_user_1 round 0 at 500 µs, prompt 8 tokens
	// request 2 concurrency_chat_user_0 round 1 at 1500 µs, prompt 8 tokens
	// request 3 concurrency_chat_user_1 round 1 at 2000 µs, prompt 8 tokens
	// request 4 concurrency_chat_user_0 round 2 at 3000 µs, prompt 8 tokens
	// request 5 concurrency_chat_user_1 round 2 at 3500 µs, prompt 8 tokens
	// {Started:2 Active:0 Completed:0 Cancelled:0 HorizonInterrupted:0 BudgetExhausted:2}
}
