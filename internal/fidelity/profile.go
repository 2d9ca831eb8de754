package fidelity

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gocarina/gocsv"

	"servesim/internal/fit"
)

// denseRow and seqRow are rows of dense.csv and per_sequence.csv.
type denseRow struct {
	Layer  string  `csv:"layer"`
	Tokens int     `csv:"tokens"`
	Us     float64 `csv:"time_us"`
}

type seqRow struct {
	Layer string  `csv:"layer"`
	Seqs  int     `csv:"sequences"`
	Us    float64 `csv:"time_us"`
}

// ProfileDir is where LLMServingSim's profiler puts the profile of a model
// (HuggingFace id) on a hardware label at a TP degree, below root
// (profiler/perf).
func ProfileDir(root, hardware, model string, tp int) string {
	return filepath.Join(root, hardware, filepath.FromSlash(model), "bf16", fmt.Sprintf("tp%d", tp))
}

// LoadProfile reads the CSVs of one profile directory. moe.csv is optional;
// the others are required.
func LoadProfile(dir string) (*fit.Profile, error) {
	p := &fit.Profile{Dir: dir, Dense: map[string][]fit.Point{}, PerSequence: map[string][]fit.Point{}}
	var dense []denseRow
	if err := readCSV(filepath.Join(dir, "dense.csv"), &dense); err != nil {
		return nil, fmt.Errorf("fidelity: profile: %w", err)
	}
	for _, r := range dense {
		p.Dense[r.Layer] = append(p.Dense[r.Layer], fit.Point{X: float64(r.Tokens), Us: r.Us})
	}
	var seqs []seqRow
	if err := readCSV(filepath.Join(dir, "per_sequence.csv"), &seqs); err != nil {
		return nil, fmt.Errorf("fidelity: profile: %w", err)
	}
	for _, r := range seqs {
		p.PerSequence[r.Layer] = append(p.PerSequence[r.Layer], fit.Point{X: float64(r.Seqs), Us: r.Us})
	}
	if err := readCSV(filepath.Join(dir, "attention.csv"), &p.Attention); err != nil {
		return nil, fmt.Errorf("fidelity: profile: %w", err)
	}
	if err := readCSV(filepath.Join(dir, "moe.csv"), &p.MoE); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("fidelity: profile: %w", err)
	}
	for _, m := range []map[string][]fit.Point{p.Dense, p.PerSequence} {
		for k := range m {
			slices.SortFunc(m[k], func(a, b fit.Point) int { return cmp.Compare(a.X, b.X) })
		}
	}
	if len(p.Dense) == 0 || len(p.Attention) == 0 || len(p.PerSequence["lm_head"]) == 0 {
		return nil, fmt.Errorf("fidelity: profile %s: dense, attention and lm_head rows are all required", dir)
	}
	return p, nil
}

// readCSV binds a CSV file's rows by column name. Its errors name the file
// (os.ErrNotExist when it is absent).
func readCSV(path string, out any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := gocsv.UnmarshalBytes(data, out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
