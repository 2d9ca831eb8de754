package replay

import (
	"encoding/json"
	"fmt"
	"io"

	"servesim/internal/des/metrics"
	"servesim/internal/tracev2"
)

// Setup is what a simulation ran on: the resolved deployment, as
// deployment-YAML keys (deploy.Config.Keys), and the client. run and replay
// write it after their summary and into the header of the trace they write,
// so that calibrate can compare it with the trace's own.
type Setup struct {
	Deployment map[string]any
	Client     tracev2.Client
}

// WriteSummarySetup writes the summary JSON as WriteSummary does, with the
// keys "deployment" and "client" of setup after the summary's own.
func WriteSummarySetup(w io.Writer, s *metrics.Summary, setup *Setup) error {
	if setup == nil {
		return WriteSummary(w, "json", s)
	}
	doc := struct {
		*metrics.Summary
		Deployment map[string]any  `json:"deployment"`
		Client     *tracev2.Client `json:"client"`
	}{s, setup.Deployment, &setup.Client}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
