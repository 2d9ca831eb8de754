package httpload

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// Redacted stands in for a secret in text that is written anywhere.
const Redacted = "[REDACTED]"

// Minimum lengths of the secrets a Redactor replaces wherever they occur: a
// shorter custom header value ("1", "on") is too likely to be ordinary text.
const (
	minKeyLen    = 4
	minHeaderLen = 8
)

// credentialRE matches a credential as a server, a proxy or a database
// driver may echo it: a bearer token (8 characters or more), a basic one
// after its Authorization name, the password of a URL
// (scheme://user:password@host), an OpenAI-style key (sk-...) or a Hugging
// Face token (hf_...). Groups 1 to 3 are what stays before the redaction, group 4 what stays
// after it.
const credentialRE = `(?i)(\bbearer(?:\s+|%20|\+))[A-Za-z0-9._~+/=:-]{8,}` +
	`|(authorization["']?\s*[:=]\s*["']?basic\s+)[A-Za-z0-9+/=]{4,}` +
	`|(\b[a-z][a-z0-9+.-]*://[^\s/:@]*:)[^\s/@]+(@)` +
	`|\bsk-[A-Za-z0-9_-]{8,}|\bhf_[A-Za-z0-9]{8,}`

// Redactor removes secrets from text that is written to a trace, a result
// or a log: text that comes back from a server (an error body, a streamed
// error), a transport error, or the `vllm serve` command line the user
// pasted. It knows the run's own secrets (the API key, the values of the
// custom headers, the base URL's password) and the shapes of credentials
// in general (credentialRE).
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
	return r.credential.ReplaceAllString(s, "${1}${2}${3}"+Redacted+"${4}")
}

// Args returns a command line (`VAR=value ... vllm serve ...`) with its
// secrets replaced by Redacted: the value of every flag whose name says it
// is a secret (--api-key, --hf-token, see SecretName), given as --flag=value
// or as the next word, the value of every environment word (NAME=value)
// whose name does, and then whatever Text removes. The rest of the line is
// kept as written.
func (r Redactor) Args(line string) string {
	words, err := CommandWords(line)
	if err != nil {
		return r.Text(line) // unbalanced quotes: no word to trust
	}
	var b strings.Builder
	prev := 0
	nextIsSecret := false
	for _, w := range words {
		b.WriteString(line[prev:w.Start])
		prev = w.End
		raw := line[w.Start:w.End]
		switch {
		case nextIsSecret && !strings.HasPrefix(w.Text, "-"):
			b.WriteString(Redacted)
			nextIsSecret = false
			continue
		case strings.HasPrefix(w.Text, "-"):
			name, _, hasVal := strings.Cut(strings.TrimLeft(w.Text, "-"), "=")
			nextIsSecret = SecretName(name) && !hasVal
			if SecretName(name) && hasVal {
				raw = w.Text[:strings.IndexByte(w.Text, '=')+1] + Redacted
			}
		default:
			nextIsSecret = false
			if name, _, ok := EnvWord(w.Text); ok && SecretName(name) {
				raw = name + "=" + Redacted
			}
		}
		b.WriteString(raw)
	}
	b.WriteString(line[prev:])
	return r.Text(b.String())
}

// SecretName reports whether a flag or environment variable name (dashes
// and underscores alike, any case) names a secret: it ends in KEY or
// TOKEN (api-key, HF_TOKEN, VLLM_API_KEY; not max-num-batched-tokens), or
// it holds SECRET, PASSWORD, PASSWD or CREDENTIAL anywhere.
func SecretName(name string) bool {
	n := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	if n == "key" || strings.HasSuffix(n, "_key") || strings.HasSuffix(n, "token") {
		return true
	}
	for _, s := range []string{"secret", "password", "passwd", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// EnvWord splits an environment word of a command line (NAME=value, NAME a
// shell variable name) into its name and value.
func EnvWord(w string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(w, "=")
	if !ok || name == "" {
		return "", "", false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return "", "", false
		}
	}
	return name, value, true
}

// Word is one word of a command line: its text once quotes and escapes are
// undone, and where it stands in the line (line[Start:End]).
type Word struct {
	Text       string
	Start, End int
}

// CommandWords splits a command line as a POSIX shell would for plain
// words, 'single' and "double" quotes and backslash escapes (no
// expansions).
func CommandWords(s string) ([]Word, error) {
	var words []Word
	var cur strings.Builder
	start := -1
	var quote rune
	esc := false
	for i, r := range s {
		if start < 0 && !unicode.IsSpace(r) {
			start = i
		}
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				esc = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			esc = true
		case r == '\'' || r == '"':
			quote = r
		case unicode.IsSpace(r):
			if start >= 0 {
				words = append(words, Word{Text: cur.String(), Start: start, End: i})
				cur.Reset()
				start = -1
			}
		default:
			cur.WriteRune(r)
		}
	}
	if quote != 0 || esc {
		return nil, fmt.Errorf("unterminated quote or escape")
	}
	if start >= 0 {
		words = append(words, Word{Text: cur.String(), Start: start, End: len(s)})
	}
	return words, nil
}

// Printable returns s with every control character other than a plain
// space (ESC, NUL, BEL, DEL, C1 codes, tabs and line breaks) written as a
// visible escape (\x1b, \x85), so that text a server sent cannot move a
// terminal's cursor, hide in a CSV cell or end a line of a log.
func Printable(s string) string {
	clean := true
	for _, c := range s {
		if unicode.IsControl(c) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case !unicode.IsControl(c):
			b.WriteRune(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c) // Unicode's controls are all below 0x100
		}
	}
	return b.String()
}
