package replay

import (
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/sweep"
)

// TestSweeperFleetKeys: a fleet key the fleet file does not have is
// refused with the nearest, a value of the wrong type at its column, and
// a fleet key without a fleet file at its key.
func TestSweeperFleetKeys(t *testing.T) {
	withFleet := deploy.Default()
	withFleet.FleetFile = "../../testdata/fleet/autoscaled.yaml"
	for _, tc := range []struct {
		dep  deploy.Config
		grid []string
		want string
	}{
		{withFleet, []string{"fleet.autoscaler.max_replica=2,3"}, `--grid: column 1: grid: unknown key fleet.autoscaler.max_replica (did you mean "fleet.autoscaler.max_replicas"?): want a fleet key (fleet.autoscaler.analyzer.avg_input_tokens, `},
		{withFleet, []string{"fleet.node_pools.max_nodes=4,lots"}, `--grid: column 30: grid.fleet.node_pools.max_nodes: "lots": want an integer`},
		{deploy.Default(), []string{"fleet.autoscaler.max_replicas=2"}, "--grid: column 1: grid: fleet.autoscaler.max_replicas sets a key of the fleet file: give one"},
		{withFleet, []string{"fleet.autoscaler.max_replicas=2", "num_instances=17"}, "every case is infeasible; case 0 (fleet.autoscaler.max_replicas=2 num_instances=17): "},
	} {
		s := &Sweeper{Deploy: tc.dep, Grid: gridOf(t, tc.grid...), Workload: chatbot(50, 5)}
		if err := s.Check(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want prefix %q", tc.grid, err, tc.want)
		}
	}
	s := &Sweeper{Deploy: withFleet, Grid: gridOf(t, "fleet.autoscaler.max_replicas=2,5", "fleet.node_pools.max_nodes=6"), Workload: chatbot(50, 5)}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	set := s.fleetSettings(s.Grid.Case(1))
	if len(set) != 2 || set[0].Path != "autoscaler.max_replicas" || set[0].Value.Value != "5" || set[1].Path != "node_pools.max_nodes" {
		t.Fatalf("case 1's fleet settings: %+v", set)
	}
	if base := s.Base(); base[len(base)-1] != (sweep.Param{Key: "fleet_file", Value: withFleet.FleetFile}) {
		t.Fatalf("base %v: want the fleet file the grid does not vary", base)
	}
}
