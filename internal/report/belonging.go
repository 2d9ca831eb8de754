package report

import "fmt"

// belonging refuses SimResults that are not the replay of the trace: a
// replay simulates every row of its trace under the row's request_id and
// prompt, so results of another trace show as ids on one side missing on
// the other, or as matched ids whose prompts differ. The rule
// (docs/calibrate.md): more than half of the SimResults without a trace
// row, more than half of the trace's rows without a SimResult, or more
// than half of the matched requests with another prompt length is an
// input error; fewer is a warning that names the counts (a replay cut
// short by --horizon, or of rows a filter left out, leaves some
// unmatched).
func belonging(in *Input, m *matching) error {
	traceName, simName := in.TraceName, in.SimName
	if traceName == "" {
		traceName = "the trace"
	}
	if simName == "" {
		simName = "the SimResults"
	}
	nTrace, nSim := len(in.Trace), len(in.Sim)
	lackRow, lackSim := m.unmatchedSim, nTrace-m.idMatched
	counts := fmt.Sprintf("%d of %d SimResults (%s) name a request_id %s lacks, %d of %d rows of %s have no SimResult",
		lackRow, nSim, simName, traceName, lackSim, nTrace, traceName)
	switch {
	case nTrace == 0 || nSim == 0:
		return nil // the no-match error that follows says it
	case 2*lackRow > nSim || 2*lackSim > nTrace:
		return inputErrorf("report: the SimResults are not a replay of this trace: %s (at most half may be unmatched)", counts)
	case m.matched > 0 && 2*m.inputMismatch > m.matched:
		return inputErrorf("report: the SimResults are not a replay of this trace: %d of %d matched requests of %s have another prompt length in %s (at most half may differ)",
			m.inputMismatch, m.matched, traceName, simName)
	}
	if lackRow > 0 || lackSim > 0 {
		m.belongingWarning = "unmatched requests: " + counts + "; they are left out"
	}
	return nil
}
