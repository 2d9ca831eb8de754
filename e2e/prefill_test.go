package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// streamTimes sends one streamed /v1/completions request and returns the
// send time and the arrival time of every chunk that carries text. started
// is closed after the n-th text chunk (n ≤ 0: never).
func streamTimes(ctx context.Context, url, model, prompt string, maxTokens, n int, started chan<- struct{}) (time.Time, []time.Time, error) {
	body, err := json.Marshal(map[string]any{"model": model, "prompt": prompt, "max_tokens": maxTokens, "stream": true})
	if err != nil {
		return time.Time{}, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		return time.Time{}, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	sent := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sent, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sent, nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var times []time.Time
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		at := time.Now()
		var chunk struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &chunk); err != nil {
			return sent, times, err
		}
		if len(chunk.Choices) > 0 && chunk.Choices[0].Text != "" {
			times = append(times, at)
			if len(times) == n && started != nil {
				close(started)
			}
		}
	}
	return sent, times, sc.Err()
}

// prefillProbe is what a long prompt does to a request that is decoding:
// request A decodes a long answer; once it is streaming, B sends a prompt of
// promptTokens tokens (bytes, in this model). Each server step that holds
// part of B's prefill also holds one of A's tokens, so the number of long
// gaps in A's stream while B is in prefill counts the steps B's prefill
// took: 1 without chunked prefill, ⌈promptTokens/chunk⌉ with it.
type prefillProbe struct {
	// LongGaps counts the gaps of A's stream during B's prefill longer
	// than 5× A's 90th-percentile gap before B was sent and than a tenth of
	// the longest gap. The server sends a step's tokens in bursts (most
	// gaps are microseconds), so the median gap is far below a decode step
	// and a decode step slowed by the host (2–6 ms seen) would pass for a
	// prefill step; a step holding 512 prompt tokens takes 70 ms and more,
	// and the longest gap is one of those.
	LongGaps    int
	MedianGapMs float64 // A's median gap before B was sent
	BTTFTMs     float64 // B's time to first token
	GapsMs      []float64
}

func probePrefill(ctx context.Context, url, model string, promptTokens int) (prefillProbe, error) {
	var p prefillProbe
	started := make(chan struct{})
	var wg sync.WaitGroup
	var aSent time.Time
	var aTimes []time.Time
	var aErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		aSent, aTimes, aErr = streamTimes(ctx, url, model, "probe", 1500, 40, started)
	}()
	select {
	case <-started:
	case <-ctx.Done():
		wg.Wait()
		return p, fmt.Errorf("request A never streamed 40 tokens: %v", aErr)
	}
	bSent, bTimes, bErr := streamTimes(ctx, url, model, strings.Repeat("x", promptTokens), 2, 0, nil)
	wg.Wait()
	_ = aSent
	if aErr != nil || bErr != nil {
		return p, fmt.Errorf("probe requests: A: %v, B: %v", aErr, bErr)
	}
	if len(bTimes) == 0 {
		return p, fmt.Errorf("request B streamed no token")
	}
	bFirst := bTimes[0]
	p.BTTFTMs = float64(bFirst.Sub(bSent).Microseconds()) / 1000
	var before []float64
	for k := 1; k < len(aTimes); k++ {
		gap := float64(aTimes[k].Sub(aTimes[k-1]).Microseconds()) / 1000
		switch {
		case aTimes[k].Before(bSent):
			before = append(before, gap)
		case !aTimes[k].After(bFirst.Add(time.Millisecond)):
			p.GapsMs = append(p.GapsMs, gap)
		}
	}
	if len(before) < 10 {
		return p, fmt.Errorf("only %d gaps of A before B was sent", len(before))
	}
	slices.Sort(before)
	p.MedianGapMs = before[len(before)/2]
	long := 5 * before[len(before)*9/10]
	if len(p.GapsMs) > 0 {
		long = max(long, slices.Max(p.GapsMs)/10)
	}
	for _, g := range p.GapsMs {
		if g > long {
			p.LongGaps++
		}
	}
	return p, nil
}
