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
	// --record-itl streams every request, and the header says so.
	if c := tr.Header.XExt.Client; c == nil || c.Streaming != "all" || !tr.Records[0].Streaming {
		t.Errorf("--record-itl: client %+v, row streaming %v; want streaming all", c, tr.Records[0].Streaming)
	}
	want := `HTTP 502: {"error": "upstream refused", "request_headers": {"Authorization": "Bearer [REDACTED]", "X-Team": "[REDACTED]"}}`
	if got := tr.Records[0].ErrorMessage; got != want {
		t.Errorf("error_message\n got %s\nwant %s", got, want)
	}
}

// TestServerSecretsAndControlBytes: a server whose error bodies carry a
// database URL with its password, an sk- key and terminal control bytes
// leaves none of them in the trace or the detailed result; the secrets in
// a pasted `vllm serve` line (flags and environment words) are redacted in
// serve_args, and the environment words are not taken for the model.
func TestServerSecretsAndControlBytes(t *testing.T) {
	const key, dbPass, skKey, hfTok = "own-api-key-77", "dbpass99", "sk-proj-abcdefgh12345678", "hf_AbCdEfGh12345678"
	srv := startFake(t, fakevllm.Config{Model: "fake-model"})
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	leaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "db postgres://app:%s@db:5432/x said \x1b[31mno\x00\a for %s", dbPass, skKey)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(leaky.Close)
	dir := t.TempDir()
	args := "VLLM_API_KEY=" + key + " HF_TOKEN=" + hfTok + " vllm serve Qwen/Qwen3-14B --api-key " + key +
		" --hf-token=" + hfTok + " --max-num-seqs 8"
	o := observeIn(testCtx(t), "--url", leaky.URL, "--api-key", key, "--model", "fake-model",
		"--prompt-tokens", "8", "--prompt-tokens-stdev", "0", "--output-tokens", "4", "--output-tokens-stdev", "0",
		"--num-requests", "2", "--rate", "100", "--no-self-test", "--trace-output", filepath.Join(dir, "cap"),
		"--result-json", filepath.Join(dir, "r.json"), "--result-detailed", "--vllm-args", args)
	written := o.Stdout + o.Stderr
	for _, name := range []string{"cap.yaml", "cap.csv", "r.json"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		written += string(b)
	}
	for _, secret := range []string{key, dbPass, skKey, hfTok, "\x1b", "\x00", "\a"} {
		if strings.Contains(written, secret) {
			t.Errorf("%q was written:\n%q", secret, written)
		}
	}
	tr := loadFiles(t, filepath.Join(dir, "cap"))
	want := `HTTP 500: db postgres://app:[REDACTED]@db:5432/x said \x1b[31mno\x00\x07 for [REDACTED]`
	if len(tr.Records) != 2 || tr.Records[0].ErrorMessage != want {
		t.Fatalf("rows %d, error_message\n got %q\nwant %q\n%s", len(tr.Records), tr.Records[0].ErrorMessage, want, o.Stderr)
	}
	x := tr.Header.XExt
	wantArgs := "VLLM_API_KEY=[REDACTED] HF_TOKEN=[REDACTED] vllm serve Qwen/Qwen3-14B --api-key [REDACTED] --hf-token=[REDACTED] --max-num-seqs 8"
	if x.ServerInfo == nil || x.ServerInfo.ServeArgs != wantArgs {
		t.Errorf("serve_args %+v, want %q", x.ServerInfo, wantArgs)
	}
	if m := x.Deployment["model"]; m != "Qwen/Qwen3-14B" {
		t.Errorf("deployment model %v, want Qwen/Qwen3-14B", m)
	}
}
