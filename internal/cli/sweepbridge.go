package cli

import (
	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// The functions of this file read the owners' flag descriptions for the
// sweep commands (`run sweep`, `replay sweep`), which call them by these
// names; every other command reads its flags through the owners directly.
// They are the only code of this package that knows the domain, and the
// layout test names this file as the one exception.

// WorkloadFlags are the workload's flags (workload.Flags).
func WorkloadFlags() []ucli.Flag { return SpecFlags(workload.Flags()) }

// WorkloadOptions are the workload flags given, and --seed, as options.
func WorkloadOptions(c *ucli.Context, stdio IO) (workload.Options, error) {
	return workload.FromFlags(SpecValues(c, append(workload.Flags(), SeedSpec())), stdio.In, StdinName)
}

// WorkloadClient is the client a workload describes (workload.Workload.Client).
func WorkloadClient(wl *workload.Workload) tracev2.Client { return wl.Client() }

// ClientFlags are the simulated client's flags (replay.ClientFlags).
func ClientFlags(trace bool) []ucli.Flag { return SpecFlags(replay.ClientFlags(trace)) }

// ClientFromFlags is the client the flags give (replay.ClientFromFlags).
func ClientFromFlags(c *ucli.Context) (replay.Client, bool, error) {
	return replay.ClientFromFlags(SpecValues(c, replay.ClientFlags(true)))
}

// TraceDeploymentFlags are replay.TraceDeploymentFlags.
func TraceDeploymentFlags() []ucli.Flag { return SpecFlags(replay.TraceDeploymentFlags()) }

// DeploymentFlags are the deployment's flags, then --list-models and
// --list-gpus (deploy.Flags, deploy.ListFlags).
func DeploymentFlags() []ucli.Flag { return SpecFlags(append(deploy.Flags(), deploy.ListFlags()...)) }

// Deployment is --deployment, then the deployment flags given, over the
// defaults.
func Deployment(c *ucli.Context) (deploy.Config, error) {
	return deploy.FromFlags(SpecValues(c, deploy.Flags()))
}
