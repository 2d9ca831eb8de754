package sweep

// Param is the value one swept key takes in a case.
type Param struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Case is one point of the grid: its index (0-based, row-major: the last
// axis varies fastest) and the value of every axis.
type Case struct {
	Index  int
	Values []Value // one per axis, in axis order
}

// Grid is the cross product of its axes.
type Grid struct {
	Axes []Axis
	n    int
}

// NewGrid checks the axes: no key twice, no axis without values, no value
// twice in an axis (01 and 1 are one value: Value.identity), at most MaxCases cases. A grid without axes has one
// case: the base deployment and workload as they are.
func NewGrid(axes []Axis) (*Grid, error) {
	n := 1
	seen := map[string]Pos{}
	for _, ax := range axes {
		if p, dup := seen[ax.Key]; dup {
			return nil, inputErr(ax.Pos, "grid", "key %s is swept twice (first at %s)", ax.Key, p)
		}
		seen[ax.Key] = ax.Pos
		if len(ax.Values) == 0 {
			return nil, inputErr(ax.Pos, "grid."+ax.Key, "no values: give at least one")
		}
		values := map[string]Value{}
		for _, v := range ax.Values {
			id := v.identity()
			if first, dup := values[id]; dup {
				if first.Text == v.Text {
					return nil, inputErr(v.Pos, "grid."+ax.Key, "value %s appears twice (first at %s)", v.Text, first.Pos)
				}
				return nil, inputErr(v.Pos, "grid."+ax.Key, "value %s is %s again (first at %s)", v.Text, first.Text, first.Pos)
			}
			values[id] = v
		}
		if n > MaxCases/len(ax.Values) {
			return nil, inputErr(ax.Pos, "grid", "the grid has more than %d cases; split it into several sweeps", MaxCases)
		}
		n *= len(ax.Values)
	}
	return &Grid{Axes: axes, n: n}, nil
}

// Len is the number of cases.
func (g *Grid) Len() int { return g.n }

// Case returns case k (0 ≤ k < Len).
func (g *Grid) Case(k int) Case {
	c := Case{Index: k, Values: make([]Value, len(g.Axes))}
	for i := len(g.Axes) - 1; i >= 0; i-- {
		m := len(g.Axes[i].Values)
		c.Values[i] = g.Axes[i].Values[k%m]
		k /= m
	}
	return c
}

// Params is the case's key = value list, in axis order.
func (g *Grid) Params(c Case) []Param {
	ps := make([]Param, len(c.Values))
	for i, v := range c.Values {
		ps[i] = Param{Key: g.Axes[i].Key, Value: v.Text}
	}
	return ps
}

// Keys are the swept keys, in axis order.
func (g *Grid) Keys() []string {
	ks := make([]string, len(g.Axes))
	for i, ax := range g.Axes {
		ks[i] = ax.Key
	}
	return ks
}

// Axis returns the axis of key (nil when the key is not swept).
func (g *Grid) Axis(key string) *Axis {
	for i := range g.Axes {
		if g.Axes[i].Key == key {
			return &g.Axes[i]
		}
	}
	return nil
}
