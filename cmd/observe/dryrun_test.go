package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

// blisSpecs are the workload specs BLIS documents: every example file that
// is a workload spec, and every YAML block of its two workload documents.
// A block that shows only part of a spec (clients without aggregate_rate,
// clients whose arrival and distributions are elided as "# ...") is
// completed with the keys it leaves out; nothing it gives is changed.
func blisSpecs(t *testing.T) map[string][]byte {
	t.Helper()
	specs := map[string][]byte{}
	dir := shareddata.Path(t, "blis/examples")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`(?m)^(clients|cohorts|inference_perf):`).Match(b) {
			specs["examples/"+filepath.Base(f)] = b
		}
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	for _, doc := range []string{"workload-spec.md", "workloads.md"} {
		b, err := os.ReadFile(shareddata.Path(t, "blis/docs/"+doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range block.FindAllSubmatch(b, -1) {
			specs[doc+"#"+string(rune('a'+i))] = completeSpec(t, m[1])
		}
	}
	if len(specs) < 15 {
		t.Fatalf("found %d specs in BLIS's examples and documents; the paths moved?", len(specs))
	}
	return specs
}

// completeSpec adds what a documentation fragment leaves out: a rate and
// a request count, and per client a rate fraction, an arrival process and
// lengths.
func completeSpec(t *testing.T, text []byte) []byte {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(text, &doc); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if _, ok := doc["aggregate_rate"]; !ok {
		doc["aggregate_rate"] = 20.0
	}
	if _, ok := doc["num_requests"]; !ok {
		doc["num_requests"] = 300
	}
	clients, _ := doc["clients"].([]any)
	for _, c := range clients {
		m := c.(map[string]any)
		if _, ok := m["rate_fraction"]; !ok {
			m["rate_fraction"] = 1.0
		}
		if _, ok := m["arrival"]; !ok {
			m["arrival"] = map[string]any{"process": "poisson"}
		}
		for _, k := range []string{"input_distribution", "output_distribution"} {
			if _, ok := m[k]; !ok {
				m[k] = map[string]any{"type": "constant", "params": map[string]any{"value": 64}}
			}
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBLISSpecsSameArrivalsInObserveAndRun: every workload spec BLIS
// documents — cohorts with diurnal, spike and drain patterns, lifecycle
// windows, multi-turn, multimodal, inference_perf stages — is accepted by
// observe (dry run, no server) and by run, and both produce the same
// requests: the same intended arrival times, lengths, clients and
// sessions, request by request.
func TestBLISSpecsSameArrivalsInObserveAndRun(t *testing.T) {
	runBin := bins.Path(t, "run")
	for name, spec := range blisSpecs(t) {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spec.yaml")
			writeFile(t, path, string(spec))
			o := observeIn(testCtx(t), "--dry-run", "--quiet", "--workload-spec", path, "--num-requests", "400")
			if o.Err != nil {
				t.Fatalf("observe: exit %d: %v\n%s\n%s", o.Code, o.Err, o.Stderr, spec)
			}
			planned := loadStream(t, o.Stdout)
			var out, errb bytes.Buffer
			cmd := exec.Command(runBin, "--workload-spec", path, "--num-requests", "400", "--quiet", "--trace-output", "-")
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("run: %v\n%s", err, errb.String())
			}
			ran := loadStream(t, out.String())
			if len(planned.Records) == 0 {
				t.Fatal("observe plans no request")
			}
			byID := map[int64]*tracev2.Record{}
			for i := range ran.Records {
				byID[ran.Records[i].RequestID] = &ran.Records[i]
			}
			for _, p := range planned.Records {
				r, ok := byID[p.RequestID]
				if !ok {
					t.Errorf("request %d planned by observe is not in run's trace", p.RequestID)
					continue
				}
				if r.ArrivalTimeUs != p.ArrivalTimeUs || r.InputTokens != p.InputTokens || r.OutputTokens != p.OutputTokens ||
					r.PrefixLength != p.PrefixLength || r.ClientID != p.ClientID || r.SessionID != p.SessionID || r.RoundIndex != p.RoundIndex {
					t.Errorf("request %d: observe plans %s at %d µs (%d+%d in, %d out, session %q round %d); run has %s at %d µs (%d+%d in, %d out, session %q round %d)",
						p.RequestID, p.ClientID, p.ArrivalTimeUs, p.PrefixLength, p.InputTokens, p.OutputTokens, p.SessionID, p.RoundIndex,
						r.ClientID, r.ArrivalTimeUs, r.PrefixLength, r.InputTokens, r.OutputTokens, r.SessionID, r.RoundIndex)
				}
			}
		})
	}
}
