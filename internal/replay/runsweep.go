package replay

import (
	"path/filepath"
	"strconv"

	"servesim/internal/sweep"
	"servesim/internal/workload"
)

// WorkloadBase describes what every case of a workload sweep (run sweep)
// shares: the workload o and the deployment keys not swept.
func (sw *Sweeper) WorkloadBase(o *workload.Options) []sweep.Param {
	var ps []sweep.Param
	add := func(k, v string) {
		if sw.Grid.Axis(k) == nil && v != "" {
			ps = append(ps, sweep.Param{Key: k, Value: v})
		}
	}
	switch {
	case o.SpecPath != "":
		add("workload", filepath.Base(o.SpecPath))
	case o.Preset != "":
		add("workload", o.Preset)
	default:
		add("workload", "flags")
	}
	if o.Rate != nil {
		add("rate", strconv.FormatFloat(*o.Rate, 'g', -1, 64))
	}
	if o.NumRequests != nil {
		add("num_requests", strconv.FormatInt(*o.NumRequests, 10))
	}
	switch {
	case o.Seed != nil:
		add("seed", strconv.FormatInt(*o.Seed, 10))
	case o.SpecPath == "":
		add("seed", strconv.FormatInt(workload.DefaultSeed, 10))
	}
	return append(ps, sw.Base()...)
}
