package cli

import (
	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
	"servesim/internal/flagspec"
)

// DeploymentFlags are the deployment flags of run and replay
// (deploy.Flags), then --list-models and --list-gpus.
func DeploymentFlags() []ucli.Flag {
	return append(SpecFlags(deploy.Flags()), ListFlags()...)
}

// DecisionFlags are run's and replay's flags for the routing-decision log.
func DecisionFlags() []ucli.Flag {
	return InCategory(flagspec.CatCluster,
		&ucli.StringFlag{Name: "trace-level", Value: "none", Usage: "none, or decisions: write every routing decision with its scores (needs --decisions-out)"},
		&ucli.StringFlag{Name: "decisions-out", Usage: "file for --trace-level decisions (JSON lines)"},
	)
}

// OpenDecisions opens the --decisions-out file when --trace-level
// decisions asks for it (nil when not), after checking the two flags agree.
func OpenDecisions(c *ucli.Context) (*Output, error) {
	level, path := c.String("trace-level"), c.String("decisions-out")
	switch level {
	case "none":
		if path != "" {
			return nil, Usagef("--decisions-out needs --trace-level decisions")
		}
		return nil, nil
	case "decisions":
	default:
		return nil, Usagef("--trace-level %q: want none or decisions", level)
	}
	if path == "" || path == "-" {
		return nil, Usagef("--trace-level decisions needs --decisions-out FILE (stdout carries the results)")
	}
	return CreateOutput(path, nil)
}

// ResolvedDeployment is Deployment, resolved (deploy.Resolve): what the
// commands that simulate (run, replay) hand to the simulator.
func ResolvedDeployment(c *ucli.Context) (*deploy.Resolved, error) {
	cfg, err := Deployment(c)
	if err != nil {
		return nil, err
	}
	return deploy.Resolve(cfg)
}

// DeploymentLayers reads --deployment (once) and the deployment flags
// given: what the command line lays over a base deployment.
func DeploymentLayers(c *ucli.Context) (*deploy.Layers, error) {
	return deploy.NewLayers(c.String(deploy.FileFlag), SpecValues(c, deploy.Flags()))
}

// Deployment reads --deployment, then applies the explicitly given flags,
// over the defaults.
func Deployment(c *ucli.Context) (deploy.Config, error) {
	return DeploymentOn(c, deploy.Default())
}

// DeploymentOn is Deployment on top of base instead of the defaults.
// A command that needs the deployment more than once should call
// DeploymentLayers once and use its On.
func DeploymentOn(c *ucli.Context, base deploy.Config) (deploy.Config, error) {
	l, err := DeploymentLayers(c)
	if err != nil {
		return base, err
	}
	return l.On(base)
}
