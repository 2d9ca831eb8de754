package httpload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	tests := []struct {
		file string
		want Metrics
	}{
		{"vllm_new.txt", Metrics{
			Running: 21, Waiting: 5, KVCacheUsage: 0.375,
			PrefixCacheQueries: 16000, PrefixCacheHits: 6000,
			ExternalPrefixCacheQueries: 500, ExternalPrefixCacheHits: 100,
			HasRunning: true, HasWaiting: true, HasKVCacheUsage: true, HasPrefixCache: true, HasExternalPrefixCache: true,
			PrefixCacheSource: "prefix_cache", Preemptions: 9, HasPreemptions: true,
		}},
		{"vllm_old.txt", Metrics{
			Running: 4, Waiting: 1, KVCacheUsage: 0.125, PrefixCacheQueries: 800, PrefixCacheHits: 200,
			HasRunning: true, HasWaiting: true, HasKVCacheUsage: true, HasPrefixCache: true,
			PrefixCacheSource: "gpu_prefix_cache",
		}},
	}
	for _, tc := range tests {
		f, err := os.Open(filepath.Join("testdata", "metrics", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseMetrics(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got != tc.want {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tc.file, got, tc.want)
		}
	}
	m, _ := ParseMetrics(strings.NewReader(""))
	if m != (Metrics{}) || m.HitRate() != 0 {
		t.Errorf("empty page: %+v", m)
	}
	later := Metrics{PrefixCacheQueries: 300, PrefixCacheHits: 120, Running: 2}
	d := later.Sub(Metrics{PrefixCacheQueries: 100, PrefixCacheHits: 20, Running: 9})
	if d.PrefixCacheQueries != 200 || d.PrefixCacheHits != 100 || d.Running != 2 || d.HitRate() != 0.5 {
		t.Errorf("delta %+v, hit rate %v", d, d.HitRate())
	}
}

func TestParseMetricsBounds(t *testing.T) {
	if _, err := ParseMetrics(strings.NewReader("x " + strings.Repeat("9", maxMetricsLineBytes) + "\n")); err == nil || !strings.Contains(err.Error(), "line longer") {
		t.Errorf("long line: %v", err)
	}
	page := strings.Repeat("# "+strings.Repeat("c", 1000)+"\n", maxMetricsBytes/1000+10)
	if _, err := ParseMetrics(strings.NewReader(page)); err == nil || !strings.Contains(err.Error(), "page longer") {
		t.Errorf("long page: %v", err)
	}
}

func TestParseSample(t *testing.T) {
	tests := []struct {
		line  string
		name  string
		value float64
		ok    bool
	}{
		{`a 1`, "a", 1, true},
		{`a{b="c"} 2.5 123`, "a", 2.5, true},
		{`a{b="}"} 3`, "a", 3, true},
		{`a{b="\"}"} 4`, "a", 4, true},
		{`a{b="x"`, "", 0, false},
		{`a`, "", 0, false},
		{`a +Inf`, "a", posInf(), true},
		{`a NaN`, "", 0, false},
		{`a zz`, "", 0, false},
		{`# TYPE a gauge`, "", 0, false},
		{`  `, "", 0, false},
	}
	for _, tc := range tests {
		name, v, ok := parseSample([]byte(tc.line))
		if string(name) != tc.name || v != tc.value || ok != tc.ok {
			t.Errorf("%q: got %q %v %v, want %q %v %v", tc.line, name, v, ok, tc.name, tc.value, tc.ok)
		}
	}
}

func posInf() float64 { var z float64; return 1 / z }

// TestParseCacheConfig: the first engine's vllm:cache_config_info labels,
// escapes undone; a page without it gives nil.
func TestParseCacheConfig(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "metrics", "vllm_new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ParseCacheConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"block_size": "16", "cache_dtype": "auto", "calculate_kv_scales": "False",
		"enable_prefix_caching": "True", "engine": "0", "gpu_memory_utilization": "0.92", "num_gpu_blocks": "18038",
		"num_gpu_blocks_override": "None", "sliding_window": "None", "kv_cache_dtype_skip_layers": `["0", "2"]`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels:\ngot  %v\nwant %v", got, want)
	}
	if got, err := ParseCacheConfig(strings.NewReader("vllm:num_requests_running 1\n")); got != nil || err != nil {
		t.Errorf("a page without it: %v, %v", got, err)
	}
	// Only the known labels, each short and printable, are copied.
	page := `vllm:cache_config_info{block_size="16",hf_token="hf_secret123",cache_dtype="` + strings.Repeat("x", 65) +
		`",engine="0\u001b",swap_space="4"} 1.0` + "\n"
	got, err = ParseCacheConfig(strings.NewReader(strings.ReplaceAll(page, `\u001b`, "\x1b")))
	if want := map[string]string{"block_size": "16", "swap_space": "4"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("hostile labels: got %v, %v, want %v", got, err, want)
	}
	for _, bad := range []string{`{a="1",b=2}`, `{a="1`, `{="x"}`, `x`} {
		if got := parseLabels([]byte(bad)); len(got) > 1 {
			t.Errorf("parseLabels(%q) = %v: malformed labels must stop the read", bad, got)
		}
	}
}
