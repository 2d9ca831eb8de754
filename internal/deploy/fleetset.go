package deploy

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/des/cluster"
	"servesim/internal/suggest"
)

// FleetSetting sets one key of a fleet file over what the file says: a
// sweep's fleet.* keys (docs/fleet.md). Path is the key's place in the
// file, dot-separated ("autoscaler.max_replicas",
// "instance_lifecycle.loading_delay.mean"); a key under node_pools sets
// it in every pool ("node_pools.max_nodes"). A key under autoscaler
// leaves a fleet without one as it is: a static fleet stays static.
type FleetSetting struct {
	Path  string
	Value *yaml.Node
}

// FleetKeys are the paths a FleetSetting may name, sorted.
func FleetKeys() []string {
	leaves := fleetLeaves()
	return slices.Sorted(maps.Keys(leaves))
}

// fleetLeaves maps each path a FleetSetting may name to its Go type.
func fleetLeaves() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			out[prefix] = t
			return
		}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if name == "gpu_memory_gib" || name == "name" || name == "gpu_type" {
				continue // identities of a pool and a key it ignores: nothing to vary
			}
			sub := name
			if prefix != "" {
				sub = prefix + "." + name
			}
			walk(t.Field(i).Type, sub)
		}
	}
	walk(reflect.TypeOf(fleetDoc{}), "")
	return out
}

// CheckFleetSetting refuses a path that is not one of FleetKeys, with the
// nearest one, and a value of the wrong type for its key.
func CheckFleetSetting(s FleetSetting) error {
	t, ok := fleetLeaves()[s.Path]
	if !ok {
		hint := ""
		if near := suggest.Closest(s.Path, FleetKeys()); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return fmt.Errorf("unknown fleet key %q%s: want one of %s", s.Path, hint, strings.Join(FleetKeys(), ", "))
	}
	if s.Value == nil {
		return nil
	}
	if err := s.Value.Decode(reflect.New(t).Interface()); err != nil {
		want := map[reflect.Kind]string{reflect.Int: "an integer", reflect.Int64: "an integer", reflect.Float64: "a number", reflect.Bool: "true or false"}[t.Kind()]
		if want == "" {
			want = "a " + t.Kind().String()
		}
		return fmt.Errorf("%q: want %s", s.Value.Value, want)
	}
	return nil
}

// apply sets the setting in a fleet file's document.
func (s FleetSetting) apply(root *yaml.Node) error {
	return setPath(root, strings.Split(s.Path, "."), s)
}

func setPath(n *yaml.Node, segs []string, s FleetSetting) error {
	if n.Kind == yaml.SequenceNode {
		for _, e := range n.Content {
			if err := setPath(e, segs, s); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: line %d: want a mapping to set %s in", s.Path, n.Line, strings.Join(segs, "."))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != segs[0] {
			continue
		}
		v := n.Content[i+1]
		if len(segs) == 1 {
			n.Content[i+1] = s.Value
			return nil
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line, Column: v.Column}
		}
		return setPath(v, segs[1:], s)
	}
	switch {
	case segs[0] == "autoscaler":
		return nil // a static fleet stays static
	case segs[0] == "node_pools":
		return fmt.Errorf("%s: the file has no node_pools to set it in", s.Path)
	case len(segs) == 1:
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: segs[0]}, s.Value)
		return nil
	}
	child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: segs[0]}, child)
	return setPath(child, segs[1:], s)
}

// SetFleet reads the deployment's fleet file again with the settings
// applied over it, and makes that the fleet of the run.
func (r *Resolved) SetFleet(set []FleetSetting) error {
	if r.Config.FleetFile == "" {
		return invalid("fleet keys need a fleet file (--fleet-file, or fleet_file in the grid)")
	}
	f, err := r.checkedFleet(&r.ClusterConfig, set)
	if err != nil {
		return err
	}
	r.ClusterConfig.Fleet = f
	return nil
}

// checkedFleet reads the fleet file with the settings, grows its initial
// nodes to hold the cluster's instances (growInitial) and checks it
// against the cluster.
func (r *Resolved) checkedFleet(cc *cluster.Config, set []FleetSetting) (*cluster.Fleet, error) {
	f, err := r.readFleet(r.Config.FleetFile, set)
	if err != nil {
		return nil, err
	}
	growInitial(f, len(cc.Instances))
	if err := f.Check(cc); err != nil {
		return nil, invalid("%s: %v", r.Config.FleetFile, err)
	}
	return f, nil
}

// growInitial adds initial nodes, pool by pool and up to each pool's
// max_nodes, until they hold n replicas: --num-instances sizes a fleet
// whose file names fewer initial nodes (a static fleet of N replicas is
// the file and num_instances N).
func growInitial(f *cluster.Fleet, n int) {
	slots := 0
	per := make([]int, len(f.Pools))
	for i, p := range f.Pools {
		if p.TP >= 1 && p.GPUsPerNode >= p.TP {
			per[i] = p.GPUsPerNode / p.TP
		}
		slots += max(p.InitialNodes, 0) * per[i]
	}
	for i := range f.Pools {
		p := &f.Pools[i]
		for slots < n && per[i] > 0 && p.InitialNodes >= 0 && p.InitialNodes < p.MaxNodes {
			p.InitialNodes++
			slots += per[i]
		}
	}
}
