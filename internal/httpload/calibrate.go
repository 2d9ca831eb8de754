package httpload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// calibrationWords is the length of the calibration text: long enough that
// a constant (a BOS token) moves the ratio by about 0.1 %.
const calibrationWords = 1000

// Calibration is the measured size of the vocabulary in the server's tokens.
type Calibration struct {
	TokensPerWord float64
	Source        string // "tokenize" (POST /tokenize) or "usage" (usage.prompt_tokens of one completion)
	Words         int    // words in the calibration text
	Tokens        int    // tokens the server counted for it
	MaxModelLen   int    // from /tokenize when the server reports it; 0 = unknown
}

// Calibrate measures the tokens per vocabulary word of the server's
// tokenizer: from vLLM's /tokenize (without special tokens) when the server
// has it, else from usage.prompt_tokens of one non-streamed completion of
// one token. The calibration text is fixed, so the measurement repeats.
func (c *Client) Calibrate(ctx context.Context) (Calibration, error) {
	p, err := NewPrompter(0, 1)
	if err != nil {
		return Calibration{}, err
	}
	text := p.Prefix("calibration", calibrationWords)
	cal, err := c.tokenize(ctx, text)
	if err == nil {
		return cal, nil
	}
	if ctx.Err() != nil {
		return Calibration{}, fmt.Errorf("httpload: calibrate: %w", err)
	}
	r := c.Do(ctx, NewClock(time.Now()), Job{ID: -1, Prompt: text, MaxTokens: 1})
	if r.Status != StatusOK {
		return Calibration{}, fmt.Errorf("httpload: calibrate: /tokenize: %v; completion: %s", err, r.Error)
	}
	if r.PromptTokens <= 0 {
		return Calibration{}, fmt.Errorf("httpload: calibrate: /tokenize: %v; completion reported no usage.prompt_tokens", err)
	}
	return Calibration{
		TokensPerWord: float64(r.PromptTokens) / calibrationWords,
		Source:        "usage",
		Words:         calibrationWords,
		Tokens:        r.PromptTokens,
	}, nil
}

// tokenize asks vLLM's /tokenize how many tokens text has.
func (c *Client) tokenize(ctx context.Context, text string) (Calibration, error) {
	body, err := json.Marshal(struct {
		Model            string `json:"model,omitempty"`
		Prompt           string `json:"prompt"`
		AddSpecialTokens bool   `json:"add_special_tokens"`
	}{c.cfg.Model, text, false})
	if err != nil {
		return Calibration{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/tokenize", bytes.NewReader(body))
	if err != nil {
		return Calibration{}, err
	}
	c.setCommon(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return Calibration{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return Calibration{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return Calibration{}, fmt.Errorf("%w: HTTP %d: %s", errNoTokenize, resp.StatusCode, c.red.Text(oneLine(raw)))
	}
	var out struct {
		Count       int `json:"count"`
		MaxModelLen int `json:"max_model_len"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return Calibration{}, fmt.Errorf("%w: %v", errNoTokenize, err)
	}
	if out.Count <= 0 {
		return Calibration{}, fmt.Errorf("%w: count %d", errNoTokenize, out.Count)
	}
	return Calibration{
		TokensPerWord: float64(out.Count) / calibrationWords,
		Source:        "tokenize",
		Words:         calibrationWords,
		Tokens:        out.Count,
		MaxModelLen:   out.MaxModelLen,
	}, nil
}
