package fakevllm

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
)

// maxRequestBytes bounds a request body.
const maxRequestBytes = 32 << 20

// maxCacheBlocks bounds the prefix cache; it is cleared when full.
const maxCacheBlocks = 1 << 16

// maxSharedWords bounds the word prefixes kept for CountSharedPrefix (about
// 40 MB); they are cleared when full, so a test must stay below it.
const maxSharedWords = 1 << 21

type wireRequest struct {
	Model    string `json:"model"`
	Prompt   any    `json:"prompt"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	MinTokens           int  `json:"min_tokens"`
	IgnoreEOS           bool `json:"ignore_eos"`
	Stream              bool `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Priority *int `json:"priority"`
}

// parseRequest reads a completion request body.
func (s *Server) parseRequest(r *http.Request) (Request, int, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return Request{}, 0, fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxRequestBytes {
		return Request{}, 0, fmt.Errorf("body longer than %d bytes", maxRequestBytes)
	}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, 0, fmt.Errorf("invalid JSON body: %w", err)
	}
	req := Request{
		Path:      r.URL.Path,
		Header:    r.Header.Clone(),
		Chat:      strings.HasSuffix(r.URL.Path, "/chat/completions"),
		Stream:    w.Stream,
		Model:     w.Model,
		MinTokens: w.MinTokens,
		IgnoreEOS: w.IgnoreEOS,
		Priority:  w.Priority,
	}
	req.IncludeUsage = w.Stream && w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	if req.Chat {
		if len(w.Messages) == 0 {
			return Request{}, 0, fmt.Errorf("chat request without messages")
		}
		var parts []string
		for _, m := range w.Messages {
			c, ok := m.Content.(string)
			if !ok {
				return Request{}, 0, fmt.Errorf("message content must be a string")
			}
			parts = append(parts, c)
		}
		req.Prompt = strings.Join(parts, "\n")
	} else {
		p, ok := w.Prompt.(string)
		if !ok {
			return Request{}, 0, fmt.Errorf("prompt must be a string")
		}
		req.Prompt = p
	}
	out := s.cfg.OutputTokens
	switch {
	case w.MaxTokens != nil:
		out = *w.MaxTokens
	case w.MaxCompletionTokens != nil:
		out = *w.MaxCompletionTokens
	}
	if out < 1 || w.MinTokens < 0 || w.MinTokens > out {
		return Request{}, 0, fmt.Errorf("max_tokens %d must be ≥ 1 and ≥ min_tokens %d", out, w.MinTokens)
	}
	req.MaxTokens = out
	req.PromptTokens = s.countTokens(req.Prompt, true)
	if req.Chat {
		req.PromptTokens += s.cfg.ChatTemplateTokens - 1 // the template replaces the BOS
	}
	if req.PromptTokens+out > s.cfg.MaxModelLen {
		return Request{}, 0, fmt.Errorf("prompt of %d tokens plus %d output tokens exceeds max_model_len %d",
			req.PromptTokens, out, s.cfg.MaxModelLen)
	}
	return req, out, nil
}

// countTokens is the fake tokenizer: round(words·TokensPerWord), plus a BOS.
func (s *Server) countTokens(text string, special bool) int {
	n := int(math.Round(float64(len(strings.Fields(text))) * s.cfg.TokensPerWord))
	if special {
		n++
	}
	return n
}

// prefixCache remembers hashes of block-aligned word prefixes, at most
// limit of them (cleared when full).
type prefixCache struct {
	blocks map[uint64]struct{}
	limit  int
}

func newPrefixCache(limit int) prefixCache {
	return prefixCache{blocks: map[uint64]struct{}{}, limit: limit}
}

// lookup returns how many leading words of text are cached, in whole blocks
// of block words, and inserts text's blocks. Call with the server lock held.
func (c *prefixCache) lookup(text string, block int) int {
	words := strings.Fields(text)
	h := fnv.New64a()
	hit, missed := 0, false
	for i := 0; i+block <= len(words); i += block {
		for _, w := range words[i : i+block] {
			h.Write([]byte(w))
			h.Write([]byte{' '})
		}
		key := h.Sum64()
		if _, ok := c.blocks[key]; ok && !missed {
			hit += block
			continue
		}
		missed = true
		if len(c.blocks) >= c.limit {
			clear(c.blocks)
		}
		c.blocks[key] = struct{}{}
	}
	return hit
}
