package replay

import (
	"context"
	"fmt"

	"servesim/internal/deploy"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
)

// replayInterval replays the trace twice more, with every step time ×
// (1 − zσ) and × (1 + zσ), σ the deployment's (deploy.Resolved.Sigma), and
// writes the SimResults of each beside the results file
// (tracev2.IntervalResultPaths), in its format: what calibrate --interval
// reads to say how often the real values fall inside the simulated 90%
// interval. The seed is the replay's: a trace's arrivals are fixed, so the
// interval is the model's.
func (j *job) replayInterval(ctx context.Context) error {
	lo, hi := tracev2.IntervalResultPaths(j.resultsPath)
	sigma := j.dep.Sigma()
	for i, path := range []string{lo, hi} {
		side := 2*i - 1
		dep, err := j.dep.ScaleStepTimes(deploy.IntervalScale(sigma, side))
		if err != nil {
			return err
		}
		tr, err := NewTrace(j.in.Rows, j.opts)
		if err != nil {
			return err
		}
		if err := j.cmd.Trace.pace(tr); err != nil {
			tr.Close()
			return err
		}
		var list []tracev2.SimResult
		cfg := j.config()
		cfg.Deploy = dep
		res, err := Simulate(ctx, cfg, tr, tr.FollowUps(), func(_ *tracev2.Record, r *tracev2.SimResult) error {
			if r != nil {
				list = append(list, *r)
			}
			return nil
		})
		if cerr := tr.Close(); err == nil {
			err = cerr
		}
		if err == nil && res.Interrupted {
			err = ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("interval at step-time scale %g: %w", deploy.IntervalScale(sigma, side), err)
		}
		if err := writeResults(path, list, j.cmd.Format); err != nil {
			return err
		}
	}
	j.log.Info("interval", "step_time_sigma", sigma, "lo", lo, "hi", hi)
	return nil
}

// writeResults writes SimResults to a file, complete or not at all.
func writeResults(path string, list []tracev2.SimResult, format string) error {
	out, err := outfile.Open(path, nil)
	if err != nil {
		return err
	}
	defer out.Abort()
	f := tracev2.SimResultArray
	if format == "jsonl" {
		f = tracev2.SimResultJSONL
	}
	if err := tracev2.WriteSimResults(out, list, f); err != nil {
		return err
	}
	return out.Commit()
}
