package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"servesim/internal/tracev2"
)

// TestTraceNamesAreNotOpened: the model, GPU and hardware file a trace
// states are names. A path there (/dev/zero, a FIFO no one writes to,
// /proc/self/environ) is never opened: the model is unknown, an input
// error unless --model gives one; then the GPU and the hardware file are
// each one warning, and the deployment keeps the defaults. A FIFO opened
// would block this test forever.
func TestTraceNamesAreNotOpened(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	def := Default()
	for _, p := range []string{"/dev/zero", fifo, "/proc/self/environ"} {
		h := &tracev2.Header{XExt: &tracev2.Ext{Deployment: map[string]any{
			"model": p, "gpu": p, "hardware_file": p, "max_num_seqs": 8}}}
		l, err := NewLayers("", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.OnTrace("t.yaml", h, func(string) {}); err == nil || !strings.HasPrefix(err.Error(), `t.yaml: the trace's model: unknown model "`+p+`"`) {
			t.Errorf("%s: %v, want the unknown model refused", p, err)
		}
		if l, err = NewLayers("", map[string]any{"model": def.Model}); err != nil {
			t.Fatal(err)
		}
		var warnings []string
		cfg, err := l.OnTrace("t.yaml", h, func(s string) { warnings = append(warnings, s) })
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if cfg.Model != def.Model || cfg.GPU != def.GPU || cfg.HardwareFile != "" || cfg.MaxNumSeqs != 8 {
			t.Errorf("%s: model %q gpu %q hardware file %q max_num_seqs %d; want the defaults' names, no file, 8",
				p, cfg.Model, cfg.GPU, cfg.HardwareFile, cfg.MaxNumSeqs)
		}
		want := []string{
			`t.yaml: the trace names the hardware file "` + p + `", which is not opened`,
			`t.yaml: the trace's GPU "` + p + `" is not one the simulator knows; simulating ` + def.GPU,
		}
		if len(warnings) != len(want) {
			t.Fatalf("%s: warnings %q, want %d", p, warnings, len(want))
		}
		for i, w := range want {
			if !strings.HasPrefix(warnings[i], w) {
				t.Errorf("%s: warning %q, want it to start %q", p, warnings[i], w)
			}
		}
		if _, err := Resolve(cfg); err != nil {
			t.Errorf("%s: the defaults do not resolve: %v", p, err)
		}
	}
}

// TestTraceGPUInTheUsersHardwareFile: a GPU the trace names that the
// simulator does not embed is looked up, by name, in the hardware file the
// command line gives.
func TestTraceGPUInTheUsersHardwareFile(t *testing.T) {
	hw := filepath.Join(t.TempDir(), "hw.json")
	spec := `{"TFlopsPeak": 165, "TFlopsFP8": 330, "BwPeakTBs": 1.0, "mfuPrefill": 0.5, "mfuDecode": 0.3, "MemoryGiB": 80}`
	if err := os.WriteFile(hw, []byte(`{"RTX4090": `+spec+`, "L4": `+spec+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &tracev2.Header{XExt: &tracev2.Ext{Deployment: map[string]any{"gpu": "RTX4090", "hardware_file": "/etc/other.json"}}}
	l, err := NewLayers("", map[string]any{"hardware-file": hw})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	cfg, err := l.OnTrace("t.yaml", h, func(s string) { warnings = append(warnings, s) })
	if err != nil || cfg.GPU != "RTX4090" || cfg.HardwareFile != hw || len(warnings) != 0 {
		t.Errorf("got gpu %q file %q warnings %q err %v; want RTX4090 from %s, silently", cfg.GPU, cfg.HardwareFile, warnings, err, hw)
	}
	if res, err := Resolve(cfg); err != nil || res.GPU != "RTX4090" {
		t.Errorf("Resolve: %v", err)
	}
}

// TestTraceIntegersAreWhole: a header's fraction for an integer key is
// refused, not truncated.
func TestTraceIntegersAreWhole(t *testing.T) {
	for k, v := range map[string]float64{"num_instances": 2.9, "tensor_parallel": 1.99, "total_kv_blocks": 999.9} {
		h := &tracev2.Header{XExt: &tracev2.Ext{Deployment: map[string]any{k: v}}}
		_, err := FromTrace("t.yaml", h, Default())
		want := fmt.Sprintf(`t.yaml: x_ext.deployment.%s: "%v" is not an integer`, k, v)
		if err == nil || !strings.HasPrefix(err.Error(), "t.yaml") || !strings.Contains(err.Error(), fmt.Sprintf(`"%v" is not an integer`, v)) {
			t.Errorf("%s: %v: got %v, want %q", k, v, err, want)
		}
	}
}
