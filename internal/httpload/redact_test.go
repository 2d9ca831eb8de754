package httpload

import (
	"net/http"
	"testing"
)

func TestRedactor(t *testing.T) {
	r := NewRedactor(Config{BaseURL: "http://alice:pa55word@host:8000", APIKey: "sk-secret-key-123",
		Headers: http.Header{"X-Team-Token": {"team-token-9876"}, "X-Trace": {"1"}}})
	tests := []struct{ in, want string }{
		{`HTTP 500: {"echo": {"Authorization": "Bearer sk-secret-key-123"}}`, `HTTP 500: {"echo": {"Authorization": "Bearer [REDACTED]"}}`},
		{"key sk-secret-key-123 rejected", "key [REDACTED] rejected"},
		{"header X-Team-Token: team-token-9876, X-Trace: 1", "header X-Team-Token: [REDACTED], X-Trace: 1"},
		{"dial http://alice:pa55word@host", "dial http://alice:[REDACTED]@host"},
		{"proxy saw authorization: Bearer%20eyJhbGciOiJIUzI1NiJ9.e30.x", "proxy saw authorization: Bearer%20[REDACTED]"},
		{`"authorization": "Basic YWxpY2U6cGE1NQ=="`, `"authorization": "Basic [REDACTED]"`},
		{"invalid basic auth header; bearer token missing", "invalid basic auth header; bearer token missing"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := r.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	if got := (Redactor{}).Text("Bearer abcdefgh12345"); got != "Bearer abcdefgh12345" {
		t.Errorf("the zero Redactor changed %q", got)
	}
}

func TestRedactorCredentialShapes(t *testing.T) {
	r := NewRedactor(Config{})
	tests := []struct{ in, want string }{
		{"connect postgres://app:s3cr3t-pw@db.internal:5432/x failed", "connect postgres://app:[REDACTED]@db.internal:5432/x failed"},
		{`{"error": "invalid key sk-proj-abcdefgh12345678"}`, `{"error": "invalid key [REDACTED]"}`},
		{"token hf_AbCdEfGh12345678 expired", "token [REDACTED] expired"},
		{"a sk-short and http://host:8000/v1 stay", "a sk-short and http://host:8000/v1 stay"},
	}
	for _, tt := range tests {
		if got := r.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactorArgs(t *testing.T) {
	r := NewRedactor(Config{APIKey: "abc-own-key-1"})
	tests := []struct{ in, want string }{
		{"vllm serve m --api-key sk-live-0123456789 --max-num-seqs 8", "vllm serve m --api-key [REDACTED] --max-num-seqs 8"},
		{"vllm serve m --api-key=plainpass --hf-token 'hf tok' --max-num-batched-tokens 8192 --tokenizer t",
			"vllm serve m --api-key=[REDACTED] --hf-token [REDACTED] --max-num-batched-tokens 8192 --tokenizer t"},
		{"VLLM_API_KEY=k1 HF_TOKEN=k2 DB_PASSWORD=k3 AWS_SECRET_ACCESS=k4 CUDA_VISIBLE_DEVICES=0,1 vllm serve m",
			"VLLM_API_KEY=[REDACTED] HF_TOKEN=[REDACTED] DB_PASSWORD=[REDACTED] AWS_SECRET_ACCESS=[REDACTED] CUDA_VISIBLE_DEVICES=0,1 vllm serve m"},
		{"vllm serve m --served-model-name abc-own-key-1x", "vllm serve m --served-model-name [REDACTED]x"},
		{"vllm serve m --api-key", "vllm serve m --api-key"},
		{"vllm serve m --api-key --tp 2", "vllm serve m --api-key --tp 2"},
		{`vllm serve "unbalanced`, `vllm serve "unbalanced`},
	}
	for _, tt := range tests {
		if got := r.Args(tt.in); got != tt.want {
			t.Errorf("Args(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text é":                "plain text é",
		"\x1b[2Jboom\x00\a\x7f\u0085": `\x1b[2Jboom\x00\x07\x7f\x85`,
		"tab\there":                   `tab\x09here`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
