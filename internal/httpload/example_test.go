package httpload_test

import (
	"context"
	"fmt"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/httpload/fakevllm"
)

// A run end to end: calibrate prompt sizing, prewarm connections, send an
// open-loop plan at its intended times, and collect one Result per job.
func Example() {
	srv, _ := fakevllm.Start(fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	defer srv.Close()
	ctx := context.Background()

	probe, _ := httpload.NewClient(httpload.Config{BaseURL: srv.URL()})
	cal, _ := probe.Calibrate(ctx)
	prompter, _ := httpload.NewPrompter(42, cal.TokensPerWord)
	client, _ := httpload.NewClient(httpload.Config{BaseURL: srv.URL(), Model: "m", Prompter: prompter})
	defer client.Close()
	_, _ = client.Prewarm(ctx, 4)

	jobs := func(yield func(httpload.Job) bool) {
		for i := range 4 {
			j := httpload.Job{ID: int64(i), IntendedUS: int64(i) * 1000, Stream: true, Chat: true,
				PrefixGroup: "system", PrefixTokens: 32, PromptTokens: 20, MaxTokens: 5, MinTokens: 5,
				Timeout: 10 * time.Second}
			if !yield(j) {
				return
			}
		}
	}
	d, _ := httpload.NewDispatcher(client, httpload.DispatchConfig{Drain: 5 * time.Second})
	done := 0
	stats, err := d.Run(ctx, httpload.NewClock(time.Now()), httpload.Plan{Jobs: jobs}, func(r httpload.Result) {
		// Map to a trace row here: arrival = Job.IntendedUS, send = SendUS, ...
		if r.Status == httpload.StatusOK && r.CompletionTokens == 5 && r.FirstTokenUS >= r.FirstChunkUS {
			done++
		}
	})
	fmt.Println(cal.Source, done, stats.Results, stats.Sent, err)
	// Output: tokenize 4 4 4 <nil>
}
