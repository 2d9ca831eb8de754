package replay

import (
	"fmt"
	"strings"

	"servesim/internal/deploy"
	"servesim/internal/des/metrics"
	"servesim/internal/exitcode"
	"servesim/internal/suggest"
	"servesim/internal/sweep"
)

// FleetKeyPrefix starts the sweep keys that set a key of the fleet file
// over what the file says (docs/fleet.md): fleet.autoscaler.max_replicas,
// fleet.node_pools.max_nodes (every pool),
// fleet.instance_lifecycle.loading_delay.mean, ...
const FleetKeyPrefix = "fleet."

func isFleetKey(k string) bool { return strings.HasPrefix(k, FleetKeyPrefix) }

// checkFleetAxis refuses, at the axis, a fleet key the fleet file does not
// have (with the nearest), a value of the wrong type (at the value), and
// fleet keys without a fleet file.
func (s *Sweeper) checkFleetAxis(ax sweep.Axis) error {
	path := strings.TrimPrefix(ax.Key, FleetKeyPrefix)
	if err := deploy.CheckFleetSetting(deploy.FleetSetting{Path: path}); err != nil {
		keys := deploy.FleetKeys()
		for i := range keys {
			keys[i] = FleetKeyPrefix + keys[i]
		}
		hint := ""
		if near := suggest.Closest(ax.Key, keys); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return &sweep.InputError{Pos: ax.Pos, Field: "grid", Msg: fmt.Sprintf("unknown key %s%s: want a fleet key (%s)", ax.Key, hint, strings.Join(keys, ", "))}
	}
	for _, v := range ax.Values {
		if err := deploy.CheckFleetSetting(deploy.FleetSetting{Path: path, Value: v.Node}); err != nil {
			return &sweep.InputError{Pos: v.Pos, Field: "grid." + ax.Key, Msg: err.Error()}
		}
	}
	if s.Deploy.FleetFile == "" && s.Grid.Axis("fleet_file") == nil {
		return &sweep.InputError{Pos: ax.Pos, Field: "grid", Msg: fmt.Sprintf("%s sets a key of the fleet file: give one (--fleet-file, or fleet_file in the grid)", ax.Key)}
	}
	return nil
}

// fleetSettings are the case's fleet keys, in grid order.
func (s *Sweeper) fleetSettings(c sweep.Case) []deploy.FleetSetting {
	var out []deploy.FleetSetting
	for i, v := range c.Values {
		if k := s.Grid.Axes[i].Key; isFleetKey(k) {
			out = append(out, deploy.FleetSetting{Path: strings.TrimPrefix(k, FleetKeyPrefix), Value: v.Node})
		}
	}
	return out
}

// resolveCase checks that a case's deployment can be built, with its
// fleet settings over its fleet file.
func resolveCase(cfg deploy.Config, set []deploy.FleetSetting) error {
	dep, err := deploy.Resolve(cfg)
	if err != nil || len(set) == 0 {
		return err
	}
	if cfg.FleetFile == "" {
		return exitcode.Usagef("fleet keys need a fleet file: this case has none")
	}
	return dep.SetFleet(set)
}

// fleetRow is a run's fleet in total, for its sweep row (nil without a
// fleet).
func fleetRow(f *metrics.FleetSummary, autoscaled bool) *sweep.FleetRow {
	if f == nil {
		return nil
	}
	return &sweep.FleetRow{Autoscaled: autoscaled, GPUHours: f.GPUHours, ReplicaHours: f.ReplicaHours, Dollars: f.Dollars,
		DollarsPerMTok: f.DollarsPerMillionTokens, PeakReplicas: f.PeakReplicas, ScaleUps: f.ScaleUps, ScaleDowns: f.ScaleDowns}
}
