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
