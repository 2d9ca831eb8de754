package httpload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// requestBody is the JSON body of both endpoints; fields a job leaves at
// zero are omitted so the server applies its own defaults.
type requestBody struct {
	Model         string         `json:"model,omitempty"`
	Prompt        *string        `json:"prompt,omitempty"`   // /v1/completions
	Messages      []chatMessage  `json:"messages,omitempty"` // /v1/chat/completions
	MaxTokens     int            `json:"max_tokens,omitempty"`
	MinTokens     int            `json:"min_tokens,omitempty"`
	IgnoreEOS     bool           `json:"ignore_eos,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	Priority      *int           `json:"priority,omitempty"`
}

// encodeBody renders a job's request body.
func encodeBody(job Job, model, prompt string) ([]byte, error) {
	if job.MaxTokens < 0 || job.MinTokens < 0 {
		return nil, fmt.Errorf("job %d: max_tokens %d and min_tokens %d must not be negative", job.ID, job.MaxTokens, job.MinTokens)
	}
	if job.MaxTokens > 0 && job.MinTokens > job.MaxTokens {
		return nil, fmt.Errorf("job %d: min_tokens %d exceeds max_tokens %d", job.ID, job.MinTokens, job.MaxTokens)
	}
	b := requestBody{
		Model:     model,
		MaxTokens: job.MaxTokens,
		MinTokens: job.MinTokens,
		IgnoreEOS: job.IgnoreEOS,
		Stream:    job.Stream,
	}
	if job.Chat {
		b.Messages = []chatMessage{{Role: "user", Content: prompt}}
	} else {
		b.Prompt = &prompt
	}
	if job.Stream {
		b.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if job.HasPriority {
		p := job.Priority
		b.Priority = &p
	}
	out, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("job %d: encode body: %w", job.ID, err)
	}
	return out, nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
