package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// goldenInput is testdata/golden_input.json: a small invented real+sim dataset
// (made by golden_input.py) with every bucket, two SLO classes, a model tag, ITL
// chunks (one request with clock skew), a hit rate and a config mismatch.
type goldenInput struct {
	Header     TraceHeader         `json:"header"`
	Trace      []tracev2.Record    `json:"trace"`
	TraceLocs  []string            `json:"trace_locs"`
	Sim        []tracev2.SimResult `json:"sim"`
	ITL        []tracev2.ITLRow    `json:"itl"`
	ITLGiven   bool                `json:"itl_given"`
	SimMetrics *SimMetrics         `json:"sim_metrics"`
}

func loadGolden(t *testing.T) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden_input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenInput
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		t.Fatalf("golden_input.json: %v", err)
	}
	return Input{Header: g.Header, Trace: g.Trace, TraceLocs: g.TraceLocs, Sim: g.Sim, ITL: g.ITL, ITLGiven: g.ITLGiven, SimMetrics: g.SimMetrics}
}

// goldenReport builds the golden report with a mix of passing and failing gates.
func goldenReport(t *testing.T) *Report {
	t.Helper()
	r := build(t, loadGolden(t), nil)
	g, err := ParseGateFlags(GateFlags{FailUnder: "good", MaxMAPE: "ttft=0.15", Assert: "itl.pearson>0.5,trace.unmatched_real==0,valid==true"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ApplyGates(g); err == nil {
		t.Fatal("golden gates: want a GateError (unmatched_real is 1)")
	}
	return r
}

func TestGoldenOutputs(t *testing.T) {
	r := goldenReport(t)
	for _, out := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"golden.json", func(b *bytes.Buffer) error { return r.WriteJSON(b) }},
		{"golden.txt", func(b *bytes.Buffer) error { return r.WriteText(b) }},
		{"golden.md", func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{"golden.html", func(b *bytes.Buffer) error { return r.WriteHTML(b) }},
	} {
		var b bytes.Buffer
		if err := out.write(&b); err != nil {
			t.Fatalf("%s: %v", out.file, err)
		}
		golden(t, out.file, b.Bytes())
		// Determinism: a second build renders byte-identical output.
		var again bytes.Buffer
		r2 := goldenReport(t)
		switch out.file {
		case "golden.json":
			_ = r2.WriteJSON(&again)
		case "golden.txt":
			_ = r2.WriteText(&again)
		case "golden.md":
			_ = r2.WriteMarkdown(&again)
		default:
			_ = r2.WriteHTML(&again)
		}
		if !bytes.Equal(b.Bytes(), again.Bytes()) {
			t.Errorf("%s: two builds differ", out.file)
		}
	}
}

func TestGoldenJSONShape(t *testing.T) {
	r := goldenReport(t)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	// Top-level keys in the spec's order.
	want := []string{"trace_info", "metrics", "config_match", "known_limitations", "goodput", "hit_rate",
		"ttft_tolerance", "by_slo_class", "by_model", "validity", "phases", "gate"}
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	_, _ = dec.Token()
	var got []string
	for dec.More() {
		k, _ := dec.Token()
		got = append(got, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("keys %v, want %v", got, want)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	metrics := m["metrics"].(map[string]any)
	for _, name := range []string{"ttft", "e2e", "itl", "tpot"} {
		if metrics[name] == nil {
			t.Errorf("metric %s missing", name)
		}
	}
	ti := m["trace_info"].(map[string]any)
	if ti["num_requests"] != 32.0 || ti["warm_up_excluded"] != 2.0 || ti["excluded_non_ok"] != 1.0 || ti["unmatched_real"] != 1.0 ||
		ti["invalid_timing"] != 1.0 || ti["unmatched_sim"] != 1.0 || ti["itl_dropped"] != 1.0 || ti["token_mismatches"] != 1.0 {
		t.Errorf("trace_info = %v", ti)
	}
	if !strings.Contains(b.String(), "\n  \"trace_info\": {\n    \"num_requests\": 32,") {
		t.Error("JSON is not two-space indented with whole numbers printed bare")
	}
}

func TestHTMLSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport(t).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	if len(svgs) != 14 { // 4 metrics x (CDF, scatter, histogram), ttft and e2e over the run
		t.Errorf("%d SVGs, want 14", len(svgs))
	}
	for _, id := range []string{`aria-labelledby="time-ttft-t`, `aria-labelledby="time-e2e-t`} {
		if !strings.Contains(page, id) {
			t.Errorf("page lacks the latency-over-time plot %s", id)
		}
	}
	for i, s := range svgs {
		if !strings.Contains(s, "<title") || !strings.Contains(s, "<desc") {
			t.Errorf("svg %d lacks title or desc", i)
		}
		d := xml.NewDecoder(strings.NewReader(s))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("svg %d is not well-formed XML: %v", i, err)
				}
				break
			}
		}
	}
	for _, forbidden := range []string{"<script", "<link", "<img", "@import", "src=", "href="} {
		if strings.Contains(page, forbidden) {
			t.Errorf("page contains %q: not self-contained", forbidden)
		}
	}
	if n := strings.Count(page, "http"); n != strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("page mentions http %d times beyond the SVG namespace", n)
	}
	for _, want := range []string{"<!DOCTYPE html>", "Gate: FAIL", "Known limitations", "Run validity", "Goodput", "meta-llama/Llama-3.1-8B",
		"Deployment: trace and simulation"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The page opens with the headline: grade, validity and config match,
	// before any table.
	headline := regexp.MustCompile(`<div class="headline">Grade <span class="badge excellent">excellent</span> .*` +
		`Validity <span class="badge ok">valid</span> .*Config <span class="badge flagged">MISMATCH \(1 key\)</span></div>`)
	loc := headline.FindStringIndex(page)
	if loc == nil || loc[0] > strings.Index(page, "<table") {
		t.Errorf("no headline with grade, validity and config before the first table:\n%s", page[:min(len(page), 3000)])
	}
}

func TestTextIsASCIIAndMarkdownEndsWithGate(t *testing.T) {
	in := loadGolden(t)
	in.Trace[10].SLOClass = "crïtical"
	in.Header.GoodputSLOTargets["crïtical"] = SLOTarget{TTFTMs: 100}
	r := build(t, in, nil)
	_ = r.ApplyGates(mustGates(t, "grade>=poor"))
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for i, c := range b.Bytes() {
		if c > 126 {
			t.Fatalf("text byte %d is %#x: not ASCII", i, c)
		}
	}
	b.Reset()
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "**Gate: PASS**" {
		t.Errorf("markdown last line %q, want **Gate: PASS**", last)
	}
	if strings.Contains(b.String(), "<") && !strings.Contains(b.String(), `\<`) {
		t.Error("markdown carries raw HTML")
	}
}

func mustGates(t *testing.T, expr string) Gates {
	t.Helper()
	g, err := ParseGates(expr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
