package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/report"
)

// Grade is one run of calibrate: the inputs, the settings, the gates and
// the outputs, every flag already checked.
type Grade struct {
	Inputs  InputArgs
	Outputs OutputArgs
	Report  report.Config
	Gates   report.Gates
	// SameModel tells whether two model names are one model, for the
	// config verdict (deploy.SameModel).
	SameModel func(a, b string) bool

	Stdin  io.Reader
	Stdout io.Writer
	Log    *slog.Logger // warnings and progress, on the caller's stderr
}

// Run grades the simulator: it checks the inputs and outputs, opens the
// output files, reads the inputs, builds the report, evaluates the gates,
// writes every output, and only then returns an error carrying exit code 3
// when a gate failed.
func Run(ctx context.Context, g Grade) error {
	srcs, err := resolveInputs(g.Inputs)
	if err != nil {
		return err
	}
	plan, err := planOutputs(g.Outputs)
	if err != nil {
		return err
	}
	if err := plan.check(srcs); err != nil {
		return err
	}
	if err := plan.open(g.Stdout); err != nil {
		return err
	}
	defer plan.abort()

	in, err := readInputs(ctx, srcs, g.Stdin, g.Log)
	if err != nil {
		return err
	}
	in.SameModel = g.SameModel
	rep, err := report.Build(in, g.Report)
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		g.Log.Warn(w)
	}
	var gateErr *report.GateError
	if err := rep.ApplyGates(g.Gates); err != nil && !errors.As(err, &gateErr) {
		return err
	}
	if err := plan.write(rep); err != nil {
		return err
	}
	if gateErr != nil {
		// GateError's own text starts with "calibrate:", which main adds.
		return exitcode.WithCode(exitcode.Assertion, fmt.Errorf("gate failed: %s", strings.Join(gateErr.Failures, "; ")))
	}
	return nil
}
