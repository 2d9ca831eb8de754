package httpload

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted stands in for a secret in text that is written anywhere.
const Redacted = "[REDACTED]"

// Minimum lengths of the secrets a Redactor replaces wherever they occur: a
// shorter custom header value ("1", "on") is too likely to be ordinary text.
const (
	minKeyLen    = 4
	minHeaderLen = 8
)

// credentialRE matches an HTTP credential as a server or proxy may echo it:
// a bearer token (8 characters or more), or a basic one after its
// Authorization name. Group 1 or 2 is what stays before the redaction.
const credentialRE = `(?i)(\bbearer(?:\s+|%20|\+))[A-Za-z0-9._~+/=:-]{8,}|(authorization["']?\s*[:=]\s*["']?basic\s+)[A-Za-z0-9+/=]{4,}`

// Redactor removes secrets from text that comes back from a server (an
// error body, a streamed error) or from a transport error before it is
// written to a trace or a log: the API key, the values of the custom
// headers, the base URL's password, and any bearer or basic token.
type Redactor struct {
	secrets    []string
	credential *regexp.Regexp
}

// NewRedactor gathers the secrets of cfg.
func NewRedactor(cfg Config) Redactor {
	r := Redactor{credential: regexp.MustCompile(credentialRE)}
	add := func(s string, min int) {
		if s = strings.TrimSpace(s); len(s) >= min {
			r.secrets = append(r.secrets, s)
		}
	}
	add(cfg.APIKey, minKeyLen)
	for _, vs := range cfg.Headers {
		for _, v := range vs {
			add(v, minHeaderLen)
		}
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p, minKeyLen)
		}
	}
	return r
}

// Text returns s with every secret and credential replaced by Redacted.
func (r Redactor) Text(s string) string {
	if s == "" {
		return s
	}
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	if r.credential == nil {
		return s
	}
	return r.credential.ReplaceAllString(s, "${1}${2}"+Redacted)
}
