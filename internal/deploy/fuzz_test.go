package deploy

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzDecode: decoding any deployment YAML never panics; every failure is
// one line with exit code 2 that names the file; a deployment that decodes
// encodes and decodes again to the same bytes, and resolving it never
// panics (it may be refused, with exit code 2). Seeds: testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("model: llama-3.1-8b-instruct\nmax_num_seqs: 64\n"))
	f.Add([]byte("num_instances: 4\nprefill_instances: 1\ndecode_instances: 3\npd_decider: always\nrouting_policy: weighted\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode("dep.yaml", data, Default())
		if err != nil {
			checkInputError(t, err, "dep.yaml")
			return
		}
		first, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatalf("encode %+v: %v", cfg, err)
		}
		again, err := Decode("again.yaml", first, Default())
		if err != nil {
			t.Fatalf("a decoded deployment does not decode again: %v\n%s", err, first)
		}
		if second, _ := yaml.Marshal(again); !bytes.Equal(first, second) {
			t.Fatalf("the round trip changed the deployment:\n%s\n---\n%s", first, second)
		}
		if _, err := Resolve(cfg); err != nil {
			checkInputError(t, err, "")
		}
	})
}

// checkInputError fails unless err is one line, exit code 2, naming file
// first when file is not "".
func checkInputError(t *testing.T, err error, file string) {
	t.Helper()
	var ec interface{ ExitCode() int }
	msg := err.Error()
	if !errors.As(err, &ec) || ec.ExitCode() != 2 || strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, file) {
		t.Fatalf("error %q (%T): want one line with exit code 2 naming %s", msg, err, file)
	}
}
