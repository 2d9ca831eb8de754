package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"servesim/internal/tracev2"
)

// Statuses of one deployment key in the config verdict.
const (
	KeyMatched    = "matched"    // the trace and the simulation agree
	KeyMismatched = "mismatched" // they differ: the simulation is of another server
	KeyDefaulted  = "defaulted"  // the trace does not say; the simulation used its value
	KeyUnchecked  = "unchecked"  // the simulation's deployment does not say
)

// ConfigMatch is the config verdict (docs/calibrate.md §9): the deployment the
// real trace states against the one the simulation ran, key by key. The
// three lists are BLIS's; Match and Keys are ours. Without the simulation's
// deployment (--sim-metrics) everything is empty ({}), as in BLIS.
type ConfigMatch struct {
	Matched    []string `json:"matched,omitempty"`
	Defaulted  []string `json:"defaulted,omitempty"`
	Mismatched []string `json:"mismatched,omitempty"`
	// Match is true when no key the trace states differs in the
	// simulation; absent when the simulation's deployment is unknown.
	Match *bool `json:"match,omitempty"`
	// Keys are the keys compared, side by side: every key the trace states
	// or marks absent, and the core keys (tracev2.CoreDeploymentKeys).
	Keys []ConfigKey `json:"keys,omitempty"`
}

// ConfigKey is one deployment key on both sides.
type ConfigKey struct {
	Key    string `json:"key"`
	Trace  any    `json:"trace,omitempty"`  // nil: the trace does not say
	Source string `json:"source,omitempty"` // where the trace's value came from: measured, declared, derived, absent
	Sim    any    `json:"sim,omitempty"`    // nil: the simulation's deployment does not say
	Status string `json:"status"`
}

// configMatch compares the deployment the trace states (h.Deployment, keys
// of a deployment YAML) with the one the simulation ran. sameModel compares
// model names (nil: case-insensitive).
func configMatch(h TraceHeader, sim map[string]any, sameModel func(a, b string) bool) (ConfigMatch, []string) {
	var cm ConfigMatch
	if sim == nil {
		return cm, nil
	}
	if sameModel == nil {
		sameModel = strings.EqualFold
	}
	keys := map[string]bool{}
	for k := range h.Deployment {
		keys[k] = true
	}
	for k, s := range h.Sources {
		if s == tracev2.SourceAbsent {
			keys[k] = true
		}
	}
	for _, k := range tracev2.CoreDeploymentKeys() {
		keys[k] = true
	}
	var warnings []string
	match := true
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		tv, stated := h.Deployment[k]
		sv, simulated := sim[k]
		ck := ConfigKey{Key: k, Sim: sv}
		if stated {
			ck.Trace, ck.Source = tv, tracev2.SourceDeclared
		}
		if s, ok := h.Sources[k]; ok {
			ck.Source = s
		}
		switch {
		case !stated:
			ck.Status = KeyDefaulted
			cm.Defaulted = append(cm.Defaulted, k)
		case !simulated:
			ck.Status = KeyUnchecked
		case sameKeyValue(k, tv, sv, sameModel):
			ck.Status = KeyMatched
			cm.Matched = append(cm.Matched, k)
		default:
			ck.Status = KeyMismatched
			cm.Mismatched = append(cm.Mismatched, k)
			match = false
			warnings = append(warnings, fmt.Sprintf("config mismatch: %s is %s in the trace but %s in the simulation",
				k, tracev2.FormatValue(tv), tracev2.FormatValue(sv)))
		}
		cm.Keys = append(cm.Keys, ck)
	}
	cm.Match = &match
	return cm, warnings
}

func sameKeyValue(k string, a, b any, sameModel func(a, b string) bool) bool {
	x, okx := a.(string)
	y, oky := b.(string)
	if k == "model" && okx && oky {
		return sameModel(x, y)
	}
	return tracev2.SameValue(a, b)
}

// configHeadline is the verdict in one line: "config: match (12 keys)",
// "config: MISMATCH max_num_seqs 256 (trace) vs 8 (sim)", or why it was
// not checked.
func (r *Report) configHeadline() string {
	c := &r.ConfigMatch
	switch {
	case c.Match == nil:
		return "config: not checked (give replay's --metrics-out file as --sim-metrics)"
	case *c.Match:
		s := fmt.Sprintf("config: match (%d keys agree", len(c.Matched))
		if n := len(c.Defaulted); n > 0 {
			s += fmt.Sprintf(", %d not stated by the trace", n)
		}
		return s + ")"
	}
	var diffs []string
	for _, k := range c.Keys {
		if k.Status == KeyMismatched {
			diffs = append(diffs, fmt.Sprintf("%s %s (trace) vs %s (sim)", k.Key, tracev2.FormatValue(k.Trace), tracev2.FormatValue(k.Sim)))
		}
	}
	return "config: MISMATCH " + strings.Join(diffs, "; ")
}

// configRows are the rows of the side-by-side table: key, trace value, its
// source, sim value, status (mismatches marked). With all, every compared
// key; without, the mismatches, the core keys and the keys the trace
// measured, and a count of the others (for text and Markdown).
func (r *Report) configRows(all bool) (rows [][]string, more int) {
	core := map[string]bool{}
	for _, k := range tracev2.CoreDeploymentKeys() {
		core[k] = true
	}
	for _, k := range r.ConfigMatch.Keys {
		if !all && k.Status != KeyMismatched && !core[k.Key] && k.Source != tracev2.SourceMeasured {
			more++
			continue
		}
		status := k.Status
		if status == KeyMismatched {
			status = "MISMATCH"
		}
		src := k.Source
		if src == "" {
			src = "-"
		}
		rows = append(rows, []string{k.Key, tracev2.FormatValue(k.Trace), src, tracev2.FormatValue(k.Sim), status})
	}
	return rows, more
}

func configHeader() []string { return []string{"deployment", "trace", "source", "sim", "status"} }
