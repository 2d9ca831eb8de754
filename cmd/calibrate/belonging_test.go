package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesResultsOfAnotherTrace: SimResults whose request ids mostly
// miss the trace are refused (exit 2), naming both files and the counts;
// a few missing are a warning (the fixture lacks one result already).
func TestRefusesResultsOfAnotherTrace(t *testing.T) {
	var sims []map[string]any
	if err := json.Unmarshal([]byte(readFile(t, simJSON)), &sims); err != nil {
		t.Fatal(err)
	}
	write := func(name string, shift float64, keep int) string {
		out := make([]map[string]any, 0, len(sims))
		for _, s := range sims[:keep] {
			c := map[string]any{}
			for k, v := range s {
				c[k] = v
			}
			c["request_id"] = c["request_id"].(float64) + shift
			out = append(out, c)
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	other := write("other.json", 1000, len(sims))
	_, errs, code := runCmd(t, "", realCSV, other)
	if code != 2 || !strings.Contains(errs, "39 of 39 SimResults ("+other+") name a request_id "+realCSV+" lacks, 40 of 40 rows of "+realCSV+" have no SimResult") {
		t.Errorf("another trace's results: exit %d, stderr %q; want 2 naming both files and counts", code, errs)
	}
	few := write("few.json", 0, len(sims)-3)
	_, errs, code = runCmd(t, "", realCSV, few)
	if code != 0 || !strings.Contains(errs, "4 of 40 rows of "+realCSV+" have no SimResult") {
		t.Errorf("three results missing: exit %d, stderr %q; want 0 and a warning", code, errs)
	}
}
