package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

var update = flag.Bool("update", false, "rewrite golden and fixture files")

// runCmd runs the command in-process and returns stdout, stderr and the exit code.
func runCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	r := clitest.Run(context.Background(), "calibrate", run, strings.NewReader(stdin), args...)
	return r.Stdout, r.Stderr, r.Code
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	realCSV    = filepath.Join("testdata", "real.csv")
	realYAML   = filepath.Join("testdata", "real.yaml")
	realITL    = filepath.Join("testdata", "real.itl.csv")
	simJSON    = filepath.Join("testdata", "sim.json")
	simMetrics = filepath.Join("testdata", "sim_metrics.json")
)

// reportJSON decodes a report for value checks.
type reportJSON struct {
	TraceInfo struct {
		NumRequests   int `json:"num_requests"`
		MatchedPairs  int `json:"matched_pairs"`
		ExcludedNonOK int `json:"excluded_non_ok"`
		UnmatchedReal int `json:"unmatched_real"`
		UnmatchedSim  int `json:"unmatched_sim"`
		WarmUp        int `json:"warm_up_excluded"`
	} `json:"trace_info"`
	Metrics map[string]struct {
		RequestLevel struct {
			MAPE    float64 `json:"mape"`
			Pearson float64 `json:"pearson_r"`
			Quality string  `json:"quality"`
		} `json:"request_level"`
		Count int `json:"count"`
	} `json:"metrics"`
	ConfigMatch struct {
		Mismatched []string `json:"mismatched"`
	} `json:"config_match"`
	HitRate *struct {
		AbsErrorPP float64 `json:"abs_error_pp"`
	} `json:"hit_rate"`
	Gate *struct {
		Passed   bool     `json:"passed"`
		Failures []string `json:"failures"`
	} `json:"gate"`
}

func decodeReport(t *testing.T, s string) reportJSON {
	t.Helper()
	var r reportJSON
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not a report JSON: %v\n%s", err, s)
	}
	return r
}

func TestStdoutFormats(t *testing.T) {
	for _, format := range []string{"text", "json", "markdown"} {
		t.Run(format, func(t *testing.T) {
			out, errs, code := runCmd(t, "", realCSV, simJSON, "--sim-metrics", simMetrics, "--format", format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			clitest.Golden(t, *update, "report."+format, out)
			if !strings.Contains(errs, "real.itl.csv") || !strings.Contains(errs, "found beside the trace") {
				t.Errorf("stderr does not say the ITL file was found:\n%s", errs)
			}
			if again, _, _ := runCmd(t, "", realCSV, simJSON, "--sim-metrics", simMetrics, "--format", format); again != out {
				t.Error("two runs over the same inputs printed different bytes")
			}
			if format == "text" {
				for i, r := range out {
					if r > 127 {
						t.Fatalf("text output is not ASCII at byte %d: %q", i, out[max(0, i-20):min(len(out), i+20)])
					}
				}
			}
		})
	}
}

func TestReportValues(t *testing.T) {
	out, errs, code := runCmd(t, "", realCSV, simJSON, "--sim-metrics", simMetrics, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeReport(t, out)
	ti := r.TraceInfo
	if ti.NumRequests != fixtureRows || ti.MatchedPairs != fixtureRows-2 || ti.ExcludedNonOK != 1 || ti.UnmatchedReal != 1 || ti.UnmatchedSim != 0 {
		t.Errorf("trace_info = %+v, want 40 rows, 38 matched, 1 non-ok, 1 unmatched real", ti)
	}
	for _, m := range []string{"ttft", "e2e", "itl", "tpot"} {
		c, ok := r.Metrics[m]
		if !ok {
			t.Errorf("metric %s missing", m)
			continue
		}
		if c.Count != fixtureRows-2 {
			t.Errorf("%s count = %d, want %d", m, c.Count, fixtureRows-2)
		}
	}
	// The fixture's TTFT error is ±6 % uniform (mean |e| 3 %), with the RTT
	// added back exactly.
	if got := r.Metrics["ttft"].RequestLevel.MAPE; got < 0.01 || got > 0.06 {
		t.Errorf("ttft MAPE = %v, want about 0.03", got)
	}
	if r.HitRate == nil || r.HitRate.AbsErrorPP < 2.49 || r.HitRate.AbsErrorPP > 2.51 {
		t.Errorf("hit_rate = %+v, want |38.7%% - 41.2%%| = 2.5 pp", r.HitRate)
	}
	if want := []string{"max_num_seqs"}; strings.Join(r.ConfigMatch.Mismatched, ",") != strings.Join(want, ",") {
		t.Errorf("config_match.mismatched = %v, want %v", r.ConfigMatch.Mismatched, want)
	}
	if !strings.Contains(errs, "max_num_seqs") {
		t.Errorf("no warning about the mismatched max_num_seqs on stderr:\n%s", errs)
	}
	if r.Gate != nil {
		t.Error("gate block present without gate flags")
	}
}

// Every way of naming the same two inputs gives the same report.
func TestInputForms(t *testing.T) {
	want, errs, code := runCmd(t, "", realCSV, simJSON, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	stream := singleStream(t)
	simData := readFile(t, simJSON)
	tests := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"keyed", "", []string{"sim=" + simJSON, "real=" + realCSV}},
		{"header as REAL", "", []string{realYAML, simJSON}},
		{"two-file flags", "", []string{"--trace-header", realYAML, "--trace-data", realCSV, "--sim-results", simJSON}},
		{"sim on stdin", simData, []string{realCSV, "-"}},
		{"keyed sim on stdin", simData, []string{"sim=-", "real=" + realCSV}},
		{"trace on stdin", stream, []string{"-", simJSON, "--itl-data", realITL}},
		{"jsonl sim", "", []string{realCSV, writeTemp(t, "sim.jsonl", jsonLines(t))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs, code := runCmd(t, tt.stdin, append(tt.args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if got != want {
				t.Errorf("report differs from the one over the files:\n%s", got)
			}
		})
	}
}

// singleStream re-encodes the two-file fixture as one stream (header lines
// prefixed by "# ").
func singleStream(t *testing.T) string {
	t.Helper()
	tr, err := tracev2.Load(tracev2.Input{Path: realCSV}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tracev2.WriteStream(&b, tr.Header, tr.Columns, tr.Records); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func jsonLines(t *testing.T) string {
	t.Helper()
	var sims []tracev2.SimResult
	if err := json.Unmarshal([]byte(readFile(t, simJSON)), &sims); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tracev2.WriteSimResults(&b, sims, tracev2.SimResultJSONL); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHTMLFile(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	out, errs, code := runCmd(t, "", realCSV, simJSON, "--html", html, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "calibrate: 38 matched") {
		t.Errorf("stdout should still carry the text summary, got:\n%s", out)
	}
	if strings.Contains(errs, "level=INFO") {
		t.Errorf("--quiet left info on stderr:\n%s", errs)
	}
	page := readFile(t, html)
	if !strings.HasPrefix(strings.ToLower(page), "<!doctype html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("not a whole HTML document: starts %q", page[:min(len(page), 40)])
	}
	// Four metrics, three plots each.
	if got := strings.Count(page, "<svg"); got != 14 {
		t.Errorf("%d <svg> elements, want 14 (CDF, scatter, histogram for 4 metrics; ttft and e2e over the run)", got)
	}
	for _, bad := range []string{"<script", "<link", "<img", "src=", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML contains %q: it must not fetch anything", bad)
		}
	}
	for _, u := range regexp.MustCompile(`url\([^#]`).FindAllString(page, -1) {
		t.Errorf("HTML refers to %s...: only in-page fragments may be referenced", u)
	}
	for _, u := range regexp.MustCompile(`https?://[^"'\s)]*`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("HTML refers to %s", u)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("output directory holds %d entries, want only report.html", len(entries))
	}
}

func TestFileOutputs(t *testing.T) {
	dir := t.TempDir()
	rep, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	out, errs, code := runCmd(t, "", realCSV, simJSON, "--report", rep, "--markdown", md, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got := readFile(t, rep); got != out {
		t.Error("--report file differs from --format json on stdout")
	}
	mdOut, _, _ := runCmd(t, "", realCSV, simJSON, "--format", "markdown")
	if got := readFile(t, md); got != mdOut {
		t.Error("--markdown file differs from --format markdown")
	}
	// --report - replaces the default text on stdout.
	out2, errs, code := runCmd(t, "", realCSV, simJSON, "--report", "-")
	if code != 0 || out2 != out {
		t.Errorf("--report -: exit %d, stdout equal to --format json: %v; %s", code, out2 == out, errs)
	}
}

func TestGates(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string // in stderr
	}{
		{"pass", []string{"--assert", "ttft.mape<15%,e2e.pearson>0.9,grade>=good,trace.matched_pairs==38"}, 0, nil},
		{"shorthands pass", []string{"--fail-under", "good", "--max-mape", "ttft=0.1,e2e=0.1", "--min-pearson", "0.8"}, 0, nil},
		{"fail", []string{"--assert", "ttft.mape<0.001,e2e.pearson>0.5"}, 3, []string{"gate failed", "ttft", "mape"}},
		{"fail under excellent on itl", []string{"--fail-under", "excellent", "--gate-metrics", "itl"}, 3, []string{"gate failed", "itl"}},
		{"absent goodput class fails", []string{"--assert", "goodput.batch.real_slo_attainment>=0.9"}, 3, []string{"gate failed", "batch"}},
		{"syntax", []string{"--assert", "ttft.mape<<0.1"}, 2, []string{"--assert", "column", "^"}},
		{"bad grade", []string{"--fail-under", "great"}, 2, []string{"great"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			_, errs, code := runCmd(t, "", append([]string{realCSV, simJSON, "--report", rep, "-q"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errs)
			}
			for _, s := range tt.contains {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr does not name %q:\n%s", s, errs)
				}
			}
			if tt.code == 2 {
				if _, err := os.Stat(rep); !os.IsNotExist(err) {
					t.Error("a usage error left a report file")
				}
				return
			}
			// The report is written whole before the exit code is chosen.
			r := decodeReport(t, readFile(t, rep))
			if r.Gate == nil || r.Gate.Passed != (tt.code == 0) {
				t.Fatalf("report gate = %+v, want passed=%v", r.Gate, tt.code == 0)
			}
			if tt.code == 3 && len(r.Gate.Failures) == 0 {
				t.Error("failed gate without failures in the report")
			}
		})
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	csv := readFile(t, realCSV)
	lines := strings.SplitAfter(csv, "\n")
	fields := strings.Split(lines[4], ",")
	fields[10] = "-3" // output_tokens
	badCSV := strings.Join(lines[:4], "") + strings.Join(fields, ",") + strings.Join(lines[5:], "")
	dupCSV := strings.Join(lines[:7], "") + lines[3] + strings.Join(lines[7:], "")
	sim := readFile(t, simJSON)
	var sims []tracev2.SimResult
	if err := json.Unmarshal([]byte(sim), &sims); err != nil {
		t.Fatal(err)
	}
	sims[5].RequestID = sims[2].RequestID
	var dupSim bytes.Buffer
	if err := tracev2.WriteSimResults(&dupSim, sims, tracev2.SimResultArray); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.csv", badCSV)
	dup := write("dup.csv", dupCSV)
	dupSimPath := write("dupsim.json", dupSim.String())
	badSim := write("badsim.json", "[\n  {\"request_id\": 0, \"ttft_us\": 1, \"e2e_us\": 2, \"input_tokens\": 3, \"output_tokens\": 4},\n  {\"request_id\": \"x\"}\n]\n")
	// Nonsense that decodes: each is refused at its place (exit 2), not graded.
	oneSim := func(name, obj string) string { return write(name, "[\n"+obj+"\n]\n") }
	noE2E := oneSim("noe2e.json", `  {"request_id": 0, "ttft_us": 1, "input_tokens": 3, "output_tokens": 4}`)
	wrapped := write("wrapped.json", `{"results": [{"request_id": 0, "ttft_us": 1, "e2e_us": 2, "input_tokens": 3, "output_tokens": 4}]}`)
	negTTFT := oneSim("negttft.json", `  {"request_id": 0, "ttft_us": -1, "e2e_us": 2, "input_tokens": 3, "output_tokens": 4}`)
	late := oneSim("late.json", `  {"request_id": 0, "ttft_us": 5, "e2e_us": 2, "input_tokens": 3, "output_tokens": 4}`)
	huge := oneSim("huge.json", `  {"request_id": 0, "ttft_us": 5, "e2e_us": 9.2e19, "input_tokens": 3, "output_tokens": 4}`)
	badMetrics := write("badmetrics.json", "{\n  \"cache_hit_rate\": \"high\"\n}\n")
	outMetrics := write("outmetrics.json", "{\n  \"cache_hit_rate\": 1.5\n}\n")
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  *regexp.Regexp // in stderr
	}{
		{"malformed trace row", "", []string{bad, simJSON}, regexp.MustCompile(`bad\.csv:5:11: column output_tokens: "-3"`)},
		{"duplicate trace id", "", []string{dup, simJSON}, regexp.MustCompile(`duplicate request_id 2 in the trace: .*dup\.csv:4 and .*dup\.csv:8`)},
		{"duplicate sim id", "", []string{realCSV, dupSimPath}, regexp.MustCompile(`duplicate request_id 2 in simulated results: .*dupsim\.json:\d+:3 and .*dupsim\.json:\d+:3`)},
		{"duplicate sim id on stdin", dupSim.String(), []string{realCSV, "-"}, regexp.MustCompile(`duplicate request_id 2 in simulated results: <stdin>:\d+:3 and <stdin>:\d+:3`)},
		{"malformed sim", "", []string{realCSV, badSim}, regexp.MustCompile(`badsim\.json:3:\d+: `)},
		{"sim without e2e_us", "", []string{realCSV, noE2E}, regexp.MustCompile(`noe2e\.json:2:3: field e2e_us: missing or null`)},
		{"sim in a wrapper", "", []string{realCSV, wrapped}, regexp.MustCompile(`wrapped\.json:1:1: json: an object with none of the SimResult fields`)},
		{"negative sim ttft", "", []string{realCSV, negTTFT}, regexp.MustCompile(`negttft\.json:2:3: field ttft_us: -1 is negative`)},
		{"sim ttft after e2e", "", []string{realCSV, late}, regexp.MustCompile(`late\.json:2:3: field ttft_us: 5 is after e2e_us 2`)},
		{"sim e2e beyond any run", "", []string{realCSV, huge}, regexp.MustCompile(`huge\.json:2:3: field e2e_us: 9\.2e\+19 µs is beyond`)},
		{"sim hit rate above 1", "", []string{realCSV, simJSON, "--sim-metrics", outMetrics}, regexp.MustCompile(`outmetrics\.json:2:3: field cache_hit_rate: 1\.5 is outside \[0, 1\]`)},
		{"malformed sim metrics", "", []string{realCSV, simJSON, "--sim-metrics", badMetrics}, regexp.MustCompile(`badmetrics\.json:2:\d+: json: field cache_hit_rate`)},
		{"missing trace", "", []string{filepath.Join(dir, "nope.csv"), simJSON}, regexp.MustCompile(`nope\.csv`)},
		{"no matched pairs", "", []string{realCSV, simJSON, "--warmup-requests", "1000"}, regexp.MustCompile(`no trace row matched`)},
		{"both on stdin", "x", []string{"-", "-"}, regexp.MustCompile(`stdin \(-\) can feed only one input, but the real trace and the simulated results read it`)},
		{"stdin twice keyed", "x", []string{"real=-", "--sim-results", "-"}, regexp.MustCompile(`only one input`)},
		{"itl and sim on stdin", "x", []string{realCSV, "-", "--itl-data", "-"}, regexp.MustCompile(`only one input`)},
		{"no sim", "", []string{realCSV}, regexp.MustCompile(`no simulated results`)},
		{"no trace", "", []string{"--sim-results", simJSON}, regexp.MustCompile(`no real trace`)},
		{"sim twice", "", []string{realCSV, simJSON, "--sim-results", simJSON}, regexp.MustCompile(`given twice`)},
		{"too many", "", []string{realCSV, realCSV, simJSON, "--sim-results", simJSON}, regexp.MustCompile(`too many arguments: .* \(the simulated results are already given\)`)},
		{"traces not disjoint", "", []string{realCSV, realCSV, simJSON}, regexp.MustCompile(`real\.csv:\d+:1: column request_id: \d+ is also on line \d+ of .*real\.csv`)},
		{"two stdout outputs", "", []string{realCSV, simJSON, "--report", "-", "--html", "-"}, regexp.MustCompile(`--report - and --html -`)},
		{"format and report on stdout", "", []string{realCSV, simJSON, "--report", "-", "--format", "json"}, regexp.MustCompile(`--format json and --report -`)},
		{"same file twice", "", []string{realCSV, simJSON, "--report", "x.out", "--html", "x.out"}, regexp.MustCompile(`--report and --html both write x\.out`)},
		{"bad format", "", []string{realCSV, simJSON, "--format", "yaml"}, regexp.MustCompile(`--format "yaml"`)},
		{"negative rtt", "", []string{realCSV, simJSON, "--network-rtt-us", "-5"}, regexp.MustCompile(`--network-rtt-us -5`)},
		{"bad ttft-from", "", []string{realCSV, simJSON, "--ttft-from", "last-chunk"}, regexp.MustCompile(`--ttft-from "last-chunk"`)},
		{"bad slo", "", []string{realCSV, simJSON, "--slo-ttft", "critical=fast"}, regexp.MustCompile(`fast`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := filepath.Join(dir, "r.json")
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--report") {
				args = append(args, "--report", rep)
			}
			out, errs, code := runCmd(t, tt.stdin, args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errs)
			}
			if !tt.want.MatchString(errs) {
				t.Errorf("stderr does not match %s:\n%s", tt.want, errs)
			}
			if out != "" {
				t.Errorf("stdout carries %q after an input error", out)
			}
			// Nothing that looks like a report, and no temporary file left.
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() == "r.json" || strings.HasPrefix(e.Name(), ".") {
					t.Errorf("%s left behind after an input error", e.Name())
				}
			}
		})
	}
}

// jsonPath walks a decoded JSON value along dot-separated keys.
func jsonPath(t *testing.T, v any, path string) any {
	t.Helper()
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %q is not inside an object", path, k)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("%s: key %q missing", path, k)
		}
	}
	return v
}

// The setting flags reach the report.
func TestSettings(t *testing.T) {
	base, errs, code := runCmd(t, "", realCSV, simJSON, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var b any
	json.Unmarshal([]byte(base), &b)
	baseSimMean := jsonPath(t, b, "metrics.ttft.workload_level.sim_mean").(float64)
	tests := []struct {
		args []string
		path string
		want any
	}{
		// ids 10..39 without the failed 17 and the unmatched 31.
		{[]string{"--warmup-requests", "10"}, "trace_info.warm_up_excluded", 10.0},
		{[]string{"--warmup-requests", "10"}, "trace_info.matched_pairs", 28.0},
		// arrivals 1 ms + i·180 ms fall below 1 s for i = 0..5.
		{[]string{"--warmup-duration", "1s"}, "trace_info.warm_up_excluded", 6.0},
		// Without the header's 0.5 ms RTT every sim TTFT is 500 µs shorter.
		{[]string{"--network-rtt-us", "0"}, "metrics.ttft.workload_level.sim_mean", baseSimMean - fixtureRTTUs},
		{[]string{"--network-rtt-us", "1500"}, "metrics.ttft.workload_level.sim_mean", baseSimMean + 1000},
		{[]string{"--slo-ttft", "critical=1ms"}, "goodput.targets.critical.ttft_ms", 1.0},
		{[]string{"--slo-ttft", "critical=1ms"}, "goodput.per_class.critical.real_slo_attainment", 0.0},
		{[]string{"--slo-e2e", "standard=10s"}, "goodput.targets.standard.e2e_ms", 10000.0},
		{[]string{"--ttft-mape-threshold", "0.01"}, "ttft_tolerance.within", false},
		{[]string{"--ttft-mape-threshold", "0.01"}, "ttft_tolerance.threshold", 0.01},
		{[]string{"--hit-rate-tolerance-pp", "1", "--sim-metrics", simMetrics}, "hit_rate.within", false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+" "+tt.path, func(t *testing.T) {
			out, errs, code := runCmd(t, "", append([]string{realCSV, simJSON, "--format", "json", "-q"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			got := jsonPath(t, v, tt.path)
			if g, ok := got.(float64); ok {
				if w := tt.want.(float64); math.Abs(g-w) > 1e-6*math.Max(1, math.Abs(w)) {
					t.Errorf("%s = %v, want %v", tt.path, g, w)
				}
				return
			}
			if got != tt.want {
				t.Errorf("%s = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// TestHelpStatesOneDefault: no flag's help states two defaults, in the
// comparison and in fit.
func TestHelpStatesOneDefault(t *testing.T) {
	clitest.CheckHelp(t, command())
	clitest.CheckHelp(t, fitCommand())
}

// TestCompletionScripts: the bash, zsh and fish scripts name every flag of
// the comparison and of fit, and fit itself.
func TestCompletionScripts(t *testing.T) { clitest.CheckCompletion(t, command()) }
