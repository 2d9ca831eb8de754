package deploy

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/tracev2"
)

// taggedFields maps the yaml tag of every field of Config (inline structs
// included) to the field's address in c.
func taggedFields(v reflect.Value, out map[string]uintptr) {
	t := v.Type()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		switch {
		case opts == "inline":
			taggedFields(v.Field(i), out)
		case name != "" && name != "-":
			out[name] = v.Field(i).Addr().Pointer()
		}
	}
}

// TestKeyListIsConfig: the key list names every tagged field of Config
// once, each key's field is the one its tag names, and no key is missing.
func TestKeyListIsConfig(t *testing.T) {
	var c Config
	tags := map[string]uintptr{}
	taggedFields(reflect.ValueOf(&c).Elem(), tags)
	seen := map[string]bool{}
	for _, k := range keyList() {
		if seen[k.name] {
			t.Errorf("key %s is listed twice", k.name)
		}
		seen[k.name] = true
		addr, ok := tags[k.name]
		if !ok {
			t.Errorf("key %s is no yaml tag of Config", k.name)
			continue
		}
		if got := reflect.ValueOf(k.field(&c)).Pointer(); got != addr {
			t.Errorf("key %s sets another field than the one tagged %s", k.name, k.name)
		}
	}
	for name := range tags {
		if !seen[name] {
			t.Errorf("Config's field %s has no key", name)
		}
	}
}

// yamlKeys is the header form as a YAML round trip gives it: the reference
// the generated Keys must equal.
func yamlKeys(t *testing.T, c Config) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestKeysAreTheYAMLForm: the header's x_ext.deployment is what a YAML
// encoder and decoder give for the Config, value for value and type for
// type, whole numbers in float fields and empty lists included.
func TestKeysAreTheYAMLForm(t *testing.T) {
	on := true
	for _, mod := range []func(*Config){
		func(*Config) {},
		gatewayOff,
		func(c *Config) {
			c.AlphaCoeffs, c.BetaCoeffs = []float64{1, 2.5, 1e6}, []float64{0.125, 3, 1e21}
			c.ClassPriorities = map[string]int{"critical": 4, "batch": -2}
			c.AsyncScheduling, c.PriorityAgeWeight, c.KVCPUBandwidth = &on, 2, 123456.75
			c.AdmissionLatency, c.KVCPUBaseLatencyUs = 1500*time.Microsecond, 7
			c.HardwareFile, c.TokenBucketCapacity = "", 1e15
			c.StepTimeSigma = 0.06
		},
	} {
		c := Default()
		mod(&c)
		got, _ := c.Keys()
		want := yamlKeys(t, c)
		for _, k := range keyList() {
			if k.omitZero && reflect.ValueOf(k.field(&c)).Elem().IsZero() {
				delete(want, k.name) // left out at zero (key.omitZero)
			}
		}
		d := Default()
		for _, k := range keyList() {
			if k.omitDefault && reflect.DeepEqual(reflect.ValueOf(k.field(&c)).Elem().Interface(), reflect.ValueOf(k.field(&d)).Elem().Interface()) {
				delete(want, k.name) // left out at its default (key.omitDefault)
			}
		}
		delete(want, "fleet_file") // left out when empty (key.omitZero)
		if !reflect.DeepEqual(got, want) {
			for k := range want {
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Errorf("%s: got %#v, want %#v", k, got[k], want[k])
				}
			}
		}
	}
}

// TestFlagsFromKeys: every key but the YAML-only ones has its flag, with
// its aliases dashed, and the on/off pairs have their --no- flag.
func TestFlagsFromKeys(t *testing.T) {
	byName := map[string]flagspec.Flag{}
	for _, f := range Flags() {
		if _, dup := byName[f.Name]; dup {
			t.Errorf("--%s twice", f.Name)
		}
		byName[f.Name] = f
		if f.Category == "" {
			t.Errorf("--%s has no --help heading", f.Name)
		}
	}
	for _, name := range KeyNames() {
		f, ok := byName[strings.ReplaceAll(name, "_", "-")]
		if name == "class_priorities" {
			if ok {
				t.Error("class_priorities has a flag")
			}
			continue
		}
		if !ok {
			t.Errorf("key %s has no flag", name)
		}
		for _, a := range KeyAliases()[name] {
			if !strings.Contains(" "+strings.Join(f.Aliases, " ")+" ", " "+strings.ReplaceAll(a, "_", "-")+" ") {
				t.Errorf("--%s lacks the alias %s", f.Name, a)
			}
		}
	}
	for _, n := range []string{"deployment", "no-enable-prefix-caching", "no-enable-chunked-prefill"} {
		if _, ok := byName[n]; !ok {
			t.Errorf("no --%s", n)
		}
	}
	if f := byName["max-num-seqs"]; f.Kind != flagspec.Int || f.Default != 0 || !strings.Contains(f.DefaultText, "1024") {
		t.Errorf("--max-num-seqs: %+v", f)
	}
}

// TestLayers: the file over the base, the flags over the file, the on/off
// pairs, and a bad coefficient list.
func TestLayers(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/d.yaml"
	writeFile(t, path, "max_num_seqs: 64\ntp: 2\n")
	l, err := NewLayers(path, flagspec.Values{"max-num-seqs": 8, "no-enable-prefix-caching": true, "alpha-coeffs": "1, 2"})
	if err != nil {
		t.Fatal(err)
	}
	got, given, err := l.apply(Default())
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxNumSeqs != 8 || got.TP != 2 || got.EnablePrefixCaching || !reflect.DeepEqual(got.AlphaCoeffs, []float64{1, 2}) {
		t.Errorf("layers: %+v", got)
	}
	want := map[string]string{"max_num_seqs": "--max-num-seqs", "tensor_parallel": "--deployment " + path,
		"enable_prefix_caching": "--no-enable-prefix-caching", "alpha_coeffs": "--alpha-coeffs"}
	if !reflect.DeepEqual(given, want) {
		t.Errorf("given %v, want %v", given, want)
	}
	for _, tt := range []struct {
		flags flagspec.Values
		want  string
	}{
		{flagspec.Values{"enable-chunked-prefill": true, "no-enable-chunked-prefill": true}, "--enable-chunked-prefill and --no-enable-chunked-prefill contradict each other: give one"},
		{flagspec.Values{"beta-coeffs": "1,x"}, `--beta-coeffs: value 2 "x" is not a number`},
	} {
		l, _ := NewLayers("", tt.flags)
		if _, err := l.On(Default()); err == nil || err.Error() != tt.want {
			t.Errorf("%v: %v, want %q", tt.flags, err, tt.want)
		}
	}
	if _, err := NewLayers(dir+"/none.yaml", nil); err == nil || !strings.HasPrefix(err.Error(), "deployment: open ") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestOnTrace: a flag that changes a key the trace states is one warning,
// and the keys the trace's simulator derived are derived again.
func TestOnTrace(t *testing.T) {
	_, res, h := recorded(t)
	var warns []string
	l, _ := NewLayers("", flagspec.Values{"max-num-seqs": 64, "model": "Qwen/Qwen3-14B"})
	got, err := l.OnTrace("t.yaml", h, func(s string) { warns = append(warns, s) })
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxNumSeqs != 64 || got.TotalKVBlocks != 0 || got.MaxModelLen != 0 || got.AsyncScheduling != nil {
		t.Errorf("OnTrace: %+v; want max_num_seqs 64 and the derived keys derived again", got)
	}
	want := "t.yaml: the trace says max_num_seqs 32, --max-num-seqs says 64; simulating 64 (--ignore-trace-deployment to simulate on the flags alone, silently)"
	if len(warns) != 1 || warns[0] != want {
		t.Errorf("warnings %q, want [%q] (the same model by another name is no change)", warns, want)
	}
	l, _ = NewLayers("", flagspec.Values{"model": "qwen3-14b"})
	if got, _ := l.OnTrace("t.yaml", h, func(s string) { t.Error(s) }); got.TotalKVBlocks != res.TotalKVBlocks {
		t.Errorf("nothing changed, yet the derived keys were derived again: %+v", got)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOnTraceUnknownModel: a trace naming a model the simulator does not
// know is an input error (exit 2) that names the trace and the models near
// it, unless --model gives one; then that model is simulated, silently.
func TestOnTraceUnknownModel(t *testing.T) {
	h := &tracev2.Header{Server: &tracev2.Server{Model: "acme/llama-3.1-8b-chat", TensorParallel: 2, MaxNumSeqs: 8}}
	l, _ := NewLayers("", nil)
	_, err := l.OnTrace("b.yaml", h, func(s string) { t.Error(s) })
	want := `b.yaml: the trace's model: unknown model "acme/llama-3.1-8b-chat"; known models near it: llama-3.1-8b, llama-3.1-8b-instruct,`
	if exitcode.Of(err) != exitcode.Usage || err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "(give it with --model)") {
		t.Errorf("unknown model: %v (exit %d), want exit 2 and %q…(give it with --model)", err, exitcode.Of(err), want)
	}
	l, _ = NewLayers("", flagspec.Values{"model": "meta-llama/Llama-3.1-8B-Instruct"})
	got, err := l.OnTrace("b.yaml", h, func(s string) { t.Error(s) })
	if err != nil || got.Model != "meta-llama/Llama-3.1-8B-Instruct" || got.TP != 2 || got.MaxNumSeqs != 8 {
		t.Errorf("with --model: %+v, %v; want the flag's model on the trace's TP 2 and 8 seqs", got, err)
	}
}
