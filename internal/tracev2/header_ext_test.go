package tracev2

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDeploymentView: x_ext.deployment wins; without it BLIS's server keys
// are the deployment, zeros absent; SetDeployment writes both consistently.
func TestDeploymentView(t *testing.T) {
	blis := &Header{Server: &Server{Type: "vllm", Model: "llama-3.1-8b-instruct", TensorParallel: 2, MaxNumSeqs: 8, MaxModelLen: 4096}}
	want := map[string]any{"model": "llama-3.1-8b-instruct", "tensor_parallel": 2, "max_num_seqs": 8, "max_model_len": 4096}
	if got := blis.Deployment(); !reflect.DeepEqual(got, want) {
		t.Errorf("from server keys: got %v, want %v", got, want)
	}
	if got := (&Header{Server: &Server{Type: "vllm"}}).Deployment(); got != nil {
		t.Errorf("a server block with only its type: got %v, want nil", got)
	}
	if got := (*Header)(nil).Deployment(); got != nil {
		t.Errorf("nil header: got %v", got)
	}

	h := &Header{}
	dep := map[string]any{"model": "qwen3-14b", "tensor_parallel": 4, "max_num_seqs": 64, "block_size": 32,
		"gpu_memory_utilization": 0.85, "max_model_len": 16384, "gpu": "H100"}
	h.SetDeployment(dep, map[string]string{"max_model_len": SourceDerived})
	wantServer := &Server{Type: "vllm", Model: "qwen3-14b", TensorParallel: 4, MaxNumSeqs: 64, BlockSize: 32,
		GPUMemoryUtilization: 0.85, MaxModelLen: 16384}
	if !reflect.DeepEqual(h.Server, wantServer) {
		t.Errorf("server block: got %+v, want %+v", h.Server, wantServer)
	}
	if got := h.Deployment(); !reflect.DeepEqual(got, dep) {
		t.Errorf("x_ext.deployment: got %v, want %v", got, dep)
	}
	dep["gpu"] = "L40S" // the header holds a copy
	if h.XExt.Deployment["gpu"] != "H100" {
		t.Error("SetDeployment kept the caller's map")
	}
	for _, c := range []struct {
		path    string
		present bool
		want    string
	}{{"deployment.max_model_len", true, SourceDerived}, {"deployment.gpu", true, SourceDeclared},
		{"deployment.scheduler", false, SourceAbsent}} {
		if got := h.Source(c.path, c.present); got != c.want {
			t.Errorf("Source(%s) = %s, want %s", c.path, got, c.want)
		}
	}
}

// TestExtChecks: bad facts in x_ext are located errors (or warnings for an
// unknown source), as every other header key.
func TestExtChecks(t *testing.T) {
	head := "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\nx_ext:\n"
	tests := []struct {
		name, ext, err, warn string
	}{
		{"negative cap", "    client:\n        max_concurrency: -2\n", `h.yaml:7:26: key x_ext.client.max_concurrency: -2 is negative`, ""},
		{"cap not a number", "    client:\n        users: many\n", `h.yaml:7:16: key x_ext.client.users: "many" is not an integer`, ""},
		{"NaN in the deployment", "    deployment:\n        kv_cpu_bandwidth: .nan\n", `h.yaml:7:27: key x_ext.deployment.kv_cpu_bandwidth: is not a finite number`, ""},
		{"unknown source", "    sources:\n        deployment.model: guessed\n", "",
			`h.yaml:7:27: key x_ext.sources.deployment.model: "guessed" is not measured, declared, derived or absent; ignored`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var warns []string
			h, err := ReadHeader(strings.NewReader(head+tc.ext), "h.yaml", Options{Warn: collect(&warns)})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error: got %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 1 || warns[0] != tc.warn {
				t.Errorf("warnings: got %q, want %q", warns, tc.warn)
			}
			if h.XExt.Sources != nil {
				t.Errorf("the unknown source was kept: %v", h.XExt.Sources)
			}
		})
	}
}

// TestSidecarMerge: a header without x_ext takes its sidecar's; a header
// with one ignores a stale sidecar.
func TestSidecarMerge(t *testing.T) {
	dir := t.TempDir()
	hp, dp := filepath.Join(dir, "t.yaml"), filepath.Join(dir, "t.csv")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(dp, strings.Join(Columns{}.Names(), ",")+"\n")
	write(ExtSidecarPath(hp), "x_ext:\n    tool: observe\n    client:\n        max_concurrency: 256\n")
	write(hp, "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\n")
	for _, in := range []Input{{Path: hp}, {Path: dp}, {HeaderPath: hp, DataPath: dp}} {
		r, h, err := Open(in, Options{Warn: noWarn(t)})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if h.XExt == nil || h.XExt.Tool != "observe" || h.XExt.Client == nil || h.XExt.Client.MaxConcurrency != 256 {
			t.Errorf("Open(%+v): x_ext %+v, want the sidecar's", in, h.XExt)
		}
	}
	write(hp, "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\nx_ext:\n    tool: run\n")
	_, h, err := Open(Input{Path: hp}, Options{Warn: noWarn(t)})
	if err != nil {
		t.Fatal(err)
	}
	if h.XExt.Tool != "run" || h.XExt.Client != nil {
		t.Errorf("the header's own x_ext lost to the sidecar: %+v", h.XExt)
	}
	write(ExtSidecarPath(hp), "x_ext:\n    client: [1\n")
	write(hp, "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\n")
	if _, _, err := Open(Input{Path: hp}, Options{}); err == nil || !strings.HasPrefix(err.Error(), ExtSidecarPath(hp)+":") {
		t.Errorf("a broken sidecar: got %v, want an error naming it", err)
	}
	if got := ExtSidecarPath("a/cap.yml"); got != "a/cap.ext.yaml" {
		t.Errorf("ExtSidecarPath(a/cap.yml) = %s", got)
	}
}

// TestServerConflict: a header whose server keys and x_ext.deployment name
// two servers is refused where the deployment's key stands; a sidecar of
// another trace's server is refused by its name.
func TestServerConflict(t *testing.T) {
	text := "trace_version: 3\ntime_unit: us\nmode: real\nserver:\n  model: a/m\n  tensor_parallel: 2\n" +
		"x_ext:\n  deployment:\n    model: b/other\n    tensor_parallel: 2\n"
	_, err := ReadHeader(strings.NewReader(text), "h.yaml", Options{})
	if want := "h.yaml:9:12: key x_ext.deployment.model: b/other differs from server.model a/m: the header describes two servers"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	h := DefaultHeader()
	h.Server = &Server{Model: "a/m"}
	h.XExt = &Ext{Deployment: map[string]any{"model": "b/other"}}
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "x_ext.deployment.model: b/other differs from server.model a/m") {
		t.Errorf("Validate: %v", err)
	}

	dir := t.TempDir()
	hp := filepath.Join(dir, "t.yaml")
	for p, s := range map[string]string{
		filepath.Join(dir, "t.csv"): strings.Join(Columns{}.Names(), ",") + "\n",
		ExtSidecarPath(hp):          "x_ext:\n    deployment:\n        model: b/other\n",
		hp:                          "trace_version: 3\ntime_unit: us\nmode: real\nserver:\n    model: a/m\n",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = Open(Input{Path: hp}, Options{})
	want := ExtSidecarPath(hp) + ": key x_ext.deployment.model: b/other differs from server.model a/m: the header describes two servers (" +
		hp + "): the sidecar belongs to another trace"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

// TestSidecarIsBounded: a sidecar that is /dev/zero is refused after
// MaxHeaderBytes, in one line naming it and the bound.
func TestSidecarIsBounded(t *testing.T) {
	dir := t.TempDir()
	hp := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(hp, []byte("trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", ExtSidecarPath(hp)); err != nil {
		t.Fatal(err)
	}
	_, _, err := Open(Input{Path: hp}, Options{})
	want := ExtSidecarPath(hp) + ": x_ext sidecar is larger than 16 MiB"
	if err == nil || err.Error() != want {
		t.Errorf("a sidecar of /dev/zero: got %v, want %q", err, want)
	}
}
