package e2e

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// abMetric is the part of one `calibrate compare` metric the loop checks.
type abMetric struct {
	Name    string  `json:"name"`
	Diff    float64 `json:"rel_diff"`
	CILo    float64 `json:"ci_lo"`
	CIHi    float64 `json:"ci_hi"`
	Verdict string  `json:"verdict"`
}

// compareRuns is `calibrate compare A B` on two of the loop's runs, its
// Markdown page written beside the summary as compare-NAME.md.
func compareRuns(t *testing.T, s setup, name, a, b string) map[string]abMetric {
	t.Helper()
	args := []string{"compare", filepath.Join(s.out, a+".csv"), filepath.Join(s.out, b+".csv")}
	s.mustTool(t, time.Minute, "compare-"+name+".log", "calibrate", append(args, "--format", "markdown", "-o", filepath.Join(s.out, "compare-"+name+".md"))...)
	out := s.mustTool(t, time.Minute, "compare-"+name+".log", "calibrate", append(args, "--format", "json")...)
	var res struct {
		Metrics []abMetric `json:"metrics"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("compare %s: %v", name, err)
	}
	byName := map[string]abMetric{}
	for _, m := range res.Metrics {
		byName[m.Name] = m
	}
	return byName
}

// checkCompare judges two pairs of the loop's runs with calibrate compare:
// one server at one and at eight users in flight, where the queue at eight
// makes TTFT several times longer (a real difference: found, slower, with
// an interval that excludes zero), and a level against its repeat (the
// same server and requests: the page is written and logged, since drift
// of a shared host can move a repeat beyond its own noise).
func checkCompare(t *testing.T, s setup) {
	slower := compareRuns(t, s, "c1-c8", "c1", "c8")
	for _, name := range []string{"ttft.p50", "e2e.p50"} {
		m, ok := slower[name]
		if !ok {
			t.Fatalf("c1 against c8: no %s in the comparison", name)
		}
		t.Logf("c1 → c8 %s: %+.1f%% (CI %+.1f%% to %+.1f%%) %s", name, 100*m.Diff, 100*m.CILo, 100*m.CIHi, m.Verdict)
		if m.Diff <= 0 || m.CILo <= 0 || m.Verdict != "worse" {
			t.Errorf("c1 → c8 %s: %+.3f (CI %+.3f to %+.3f), verdict %s; want slower beyond the noise", name, m.Diff, m.CILo, m.CIHi, m.Verdict)
		}
	}
	same := compareRuns(t, s, "c4-repeat", "c4", "c4"+repeatSuffix)
	for _, name := range []string{"ttft.p50", "e2e.p50", "e2e.p99"} {
		m := same[name]
		t.Logf("c4 → its repeat %s: %+.1f%% (CI %+.1f%% to %+.1f%%) %s", name, 100*m.Diff, 100*m.CILo, 100*m.CIHi, m.Verdict)
	}
}
