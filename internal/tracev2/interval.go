package tracev2

import (
	"path/filepath"
	"strings"
)

// IntervalResultPaths names the SimResult files of a replay's interval
// beside its results file: sim.json gives sim.lo.json and sim.hi.json
// (the runs with every step time × 1 − 1.645σ and × 1 + 1.645σ). The
// results file itself stays the plain SimResult file BLIS reads.
func IntervalResultPaths(results string) (lo, hi string) {
	ext := filepath.Ext(results)
	stem := strings.TrimSuffix(results, ext)
	return stem + ".lo" + ext, stem + ".hi" + ext
}
