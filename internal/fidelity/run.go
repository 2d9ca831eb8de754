package fidelity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// Run is one measured vLLM run: its requests as a TraceV2 real trace and
// what its meta.json (and LLMServingSim's cluster config beside it) say
// about the server.
type Run struct {
	Name    string // e.g. "RTX4090/Llama-3.1-8B": the run's path below the root it was found in
	Dir     string // directory holding requests.jsonl and meta.json
	Header  *tracev2.Header
	Records []tracev2.Record // in request_id order, on the importer's origin
	// Scheduled is each request's first schedule on the same origin (µs,
	// indexed like Records; 0 = not measured).
	Scheduled []int64
	Meta      importer.LLMServingSimMeta
	Hardware  string // accelerator name of LLMServingSim's config.json ("RTX4090"), "" if absent
	// KVPeak is the highest KV cache use vLLM's stat logger reported
	// (timeseries.csv, kv_cache_pct as a fraction), −1 when the run has no
	// timeseries or its logger did not fill the column (all zero).
	KVPeak   float64
	Warnings []string
}

// LoadRun imports the run in dir (a directory holding requests.jsonl and
// meta.json, or the bench's layout with them in a vllm/ subdirectory). name
// labels it in reports.
func LoadRun(name, dir string) (*Run, error) {
	imp, err := importer.OpenLLMServingSim(dir, importer.Options{})
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", name, err)
	}
	meta := imp.Meta()
	if meta == nil {
		return nil, fmt.Errorf("fidelity: run %s: no %s beside the requests: the server settings are unknown", name, importer.LLMServingSimMetaFile)
	}
	r := &Run{Name: name, Dir: dir, Header: imp.Header(), Meta: *meta}
	for {
		rec, err := imp.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("fidelity: run %s: %w", name, err)
		}
		r.Records = append(r.Records, rec)
	}
	if len(r.Records) == 0 {
		return nil, fmt.Errorf("fidelity: run %s: no requests", name)
	}
	r.Warnings = imp.Warnings()
	r.Scheduled = imp.ScheduledTimesUs()
	r.Hardware = clusterHardware(dir)
	if r.KVPeak, err = timeseriesKVPeak(filepath.Join(dir, timeseriesFile)); err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", name, err)
	}
	return r, nil
}

// timeseriesFile is the bench's per-tick log of vLLM's scheduler state,
// beside requests.jsonl.
const timeseriesFile = "timeseries.csv"

// tick is one row of timeseries.csv (the columns the report uses).
type tick struct {
	T       float64 `csv:"t"`
	Running int     `csv:"running"`
	Waiting int     `csv:"waiting"`
	KVPct   float64 `csv:"kv_cache_pct"`
}

// timeseriesKVPeak returns the peak kv_cache_pct of a timeseries.csv as a
// fraction, or −1 when the file is absent or the column is all zero (the
// bench's stat logger leaves it 0 with data parallelism and on some runs).
func timeseriesKVPeak(path string) (float64, error) {
	var ticks []tick
	if err := readCSV(path, &ticks); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return -1, nil
		}
		return 0, err
	}
	peak := 0.0
	for _, t := range ticks {
		peak = max(peak, t.KVPct)
	}
	if peak <= 0 {
		return -1, nil
	}
	return peak / 100, nil
}

// clusterHardware reads the accelerator name from LLMServingSim's cluster
// config.json, which sits in the run directory or its parent (beside the
// vllm/ folder); "" when there is none.
func clusterHardware(dir string) string {
	for _, p := range []string{filepath.Join(dir, "config.json"), filepath.Join(filepath.Dir(filepath.Clean(dir)), "config.json")} {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var c struct {
			Nodes []struct {
				Instances []struct {
					Hardware string `json:"hardware"`
				} `json:"instances"`
			} `json:"nodes"`
		}
		if json.Unmarshal(data, &c) != nil {
			continue
		}
		for _, n := range c.Nodes {
			for _, in := range n.Instances {
				if in.Hardware != "" {
					return in.Hardware
				}
			}
		}
	}
	return ""
}

// FindRuns lists the runs below root: every directory holding
// requests.jsonl and meta.json, named by its path below root without a
// trailing /vllm, in lexical order.
func FindRuns(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != importer.LLMServingSimRequests {
			return nil
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), importer.LLMServingSimMetaFile)); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fidelity: find runs: %w", err)
	}
	slices.Sort(dirs)
	return dirs, nil
}

// RunName is the label of the run in dir below root.
func RunName(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		rel = dir
	}
	rel = filepath.ToSlash(rel)
	return strings.TrimSuffix(rel, "/vllm")
}
