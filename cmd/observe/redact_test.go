package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/httpload/fakevllm"
)

// TestSecretsNeverWritten: a proxy that echoes the request's headers in its
// error bodies (as some do) puts neither the API key, nor a custom header's
// value, nor the URL's password into the trace or onto stderr.
func TestSecretsNeverWritten(t *testing.T) {
	const key, team, pass = "sk-live-0123456789abcdef", "team-secret-4242", "hunter2hunter2"
	srv := startFake(t, fakevllm.Config{})
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `{"error": "upstream refused", "request_headers": {"Authorization": %q, "X-Team": %q}}`,
				r.Header.Get("Authorization"), r.Header.Get("X-Team"))
			return
		}
		r.Header.Del("Authorization")
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(echo.Close)
	withPass := strings.Replace(echo.URL, "http://", "http://alice:"+pass+"@", 1)
	dir := t.TempDir()
	o := observeIn(testCtx(t), "--url", withPass, "--api-key", key, "--header", "X-Team: "+team,
		"--prompt-tokens", "8", "--prompt-tokens-stdev", "0", "--output-tokens", "4", "--output-tokens-stdev", "0",
		"--num-requests", "3", "--rate", "100", "--trace-output", filepath.Join(dir, "cap"), "--record-itl", "--log-level", "debug")
	written := o.Stdout + o.Stderr
	for _, name := range []string{"cap.yaml", "cap.csv", "cap.itl.csv"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		written += string(b)
	}
	for _, secret := range []string{key, team, pass} {
		if strings.Contains(written, secret) {
			t.Errorf("%q was written:\n%s", secret, written)
		}
	}
	tr := loadFiles(t, filepath.Join(dir, "cap"))
	if len(tr.Records) != 3 {
		t.Fatalf("%d rows, want 3\n%s", len(tr.Records), o.Stderr)
	}
	want := `HTTP 502: {"error": "upstream refused", "request_headers": {"Authorization": "Bearer [REDACTED]", "X-Team": "[REDACTED]"}}`
	if got := tr.Records[0].ErrorMessage; got != want {
		t.Errorf("error_message\n got %s\nwant %s", got, want)
	}
}
