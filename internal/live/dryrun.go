package live

import (
	"fmt"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/tracev2"
)

// dryRunStatus is the status of a planned row: it was never sent.
const dryRunStatus = "planned"

// dryRun writes the requests a run would send, in send order, as a trace
// (mode generated, t0 at --start-at or else the epoch): the pre-generated requests of the workload (follow-ups
// depend on completions and are not known), or the played trace's rows,
// this worker's slice when sharded. Prompt text is not built beyond what
// sessions need, and no server is contacted.
func dryRun(cfg *config, tr traffic, stdio IO) error {
	p, err := httpload.NewPrompter(tr.seed(), 1)
	if err != nil {
		return err
	}
	pl := tr.newPlanner(p, cfg, 0, nil)
	defer pl.finish()
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeGenerated
	// A plan starts at --start-at, else at no particular time: the epoch,
	// the same for every worker, so planned slices merge as they are.
	t0 := time.Unix(0, 0)
	if !cfg.startAt.IsZero() {
		t0 = cfg.startAt
	}
	h.CreatedAt = tracev2.FormatCreatedAt(t0)
	h.XExt = &tracev2.Ext{Tool: "observe", ToolVersion: cfg.version, TimeOrigin: tracev2.OriginRelative, T0UnixUs: t0.UnixMicro()}
	tr.describe(h)
	tw, err := openTrace(cfg, stdio, h, tr.columns())
	if err != nil {
		return fmt.Errorf("--trace-output: %w", err)
	}
	for j := range pl.jobs {
		res := httpload.Result{Job: j, Status: dryRunStatus}
		rec := record(&res, pl.take(j.ID))
		rec.SendTimeUs = j.IntendedUS
		rec.OutputTokens = j.MaxTokens
		rec.XRequestID = ""
		if err := tw.Write(&rec); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	return tw.Close(nil)
}
