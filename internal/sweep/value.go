package sweep

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/strictyaml"
)

// Bounds on what a sweep description may ask for, checked before anything
// is allocated.
const (
	MaxAxisValues = 10_000    // values of one key
	MaxCases      = 1_000_000 // cases of a grid (the product of its axes)
)

// Value is one value a key takes in the grid.
type Value struct {
	Text string     // as tables show it: 16, H100, prefix-affinity:3,queue-depth:2, [0.1, 2]
	Node *yaml.Node // as YAML, for the decoder of the key (a scalar or a sequence)
	Pos  Pos
}

// Axis is one swept key and the values it takes, in the order given.
type Axis struct {
	Key    string
	Pos    Pos // of the key
	Values []Value
}

// Float is the value as a number (ok false when it is not one).
func (v Value) Float() (float64, bool) {
	if v.Node == nil || v.Node.Kind != yaml.ScalarNode {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v.Text), 64)
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// identity is what two values of an axis that make the same case share:
// a number's value as YAML reads it (01 and 1 are one value; so are
// 1000, 1_000 and 1e3), else the text.
func (v Value) identity() string {
	n := v.Node
	if n == nil || n.Kind != yaml.ScalarNode {
		return v.Text
	}
	switch n.ShortTag() {
	case "!!int":
		var i int64
		if n.Decode(&i) == nil && (i > 1<<53 || i < -1<<53) {
			return "number " + strconv.FormatInt(i, 10) // beyond what a float64 holds exactly
		}
		fallthrough
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return "number " + strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return v.Text
}

func scalarValue(text string, pos Pos) Value {
	return Value{Text: text, Node: &yaml.Node{Kind: yaml.ScalarNode, Value: text}, Pos: pos}
}

// expandRange reads the range shorthand lo..hi (step 1), lo..hi:step or
// lo..hi*factor, hi included. ok is false when s is not a range (its part
// before ".." is not a number, as in a path "../model.json").
func expandRange(s string, pos Pos, field string) (vals []Value, ok bool, err error) {
	i := strings.Index(s, "..")
	if i <= 0 {
		return nil, false, nil
	}
	loText := strings.TrimSpace(s[:i])
	lo, perr := strconv.ParseFloat(loText, 64)
	if perr != nil {
		return nil, false, nil
	}
	rest := s[i+2:]
	hiText, stepText, op := rest, "1", byte(':')
	if j := strings.IndexAny(rest, ":*"); j >= 0 {
		hiText, stepText, op = rest[:j], rest[j+1:], rest[j]
	}
	hiText, stepText = strings.TrimSpace(hiText), strings.TrimSpace(stepText)
	hi, err1 := strconv.ParseFloat(hiText, 64)
	step, err2 := strconv.ParseFloat(stepText, 64)
	switch {
	case err1 != nil:
		return nil, true, inputErr(pos, field, "range %q: the upper bound %q is not a number (want lo..hi, lo..hi:step or lo..hi*factor)", s, hiText)
	case err2 != nil:
		return nil, true, inputErr(pos, field, "range %q: %q is not a number (want lo..hi, lo..hi:step or lo..hi*factor)", s, stepText)
	case !finite(lo) || !finite(hi) || !finite(step):
		return nil, true, inputErr(pos, field, "range %q: bounds must be finite", s)
	case hi < lo:
		return nil, true, inputErr(pos, field, "range %q: the upper bound is below the lower one", s)
	case op == ':' && !(step > 0):
		return nil, true, inputErr(pos, field, "range %q: the step must be positive", s)
	case op == '*' && !(step > 1):
		return nil, true, inputErr(pos, field, "range %q: the factor must exceed 1", s)
	case op == '*' && !(lo > 0):
		return nil, true, inputErr(pos, field, "range %q: a geometric range needs a positive lower bound", s)
	}
	integer := isInt(loText) && isInt(hiText) && isInt(stepText)
	var n float64
	if op == ':' {
		n = math.Floor((hi-lo)/step+1e-9) + 1
	} else {
		n = math.Floor(math.Log(hi/lo)/math.Log(step)+1e-9) + 1
	}
	if n > MaxAxisValues {
		return nil, true, inputErr(pos, field, "range %q has %.0f values; at most %d", s, n, MaxAxisValues)
	}
	for k := 0; k < int(n); k++ {
		var v float64
		if op == ':' {
			v = lo + float64(k)*step
		} else {
			v = lo * math.Pow(step, float64(k))
		}
		if integer {
			v = math.Round(v)
		}
		vals = append(vals, scalarValue(formatNum(v), pos))
	}
	return vals, true, nil
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// formatNum prints a computed grid value in its shortest form after
// rounding to 12 significant digits (0.1 + 2·0.1 is "0.3", not
// "0.30000000000000004").
func formatNum(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// axisValues reads the values of one key from its YAML node: a scalar (a
// value or a range), or a sequence of them, where a sequence item may
// itself be a sequence (one value of a list-valued key such as
// alpha_coeffs).
func axisValues(n *yaml.Node, file, field string) ([]Value, error) {
	pos := Pos{File: file, Line: n.Line, Col: n.Column}
	switch n.Kind {
	case yaml.ScalarNode:
		return scalarOrRange(n, pos, field)
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return nil, inputErr(pos, field, "no values: give at least one")
		}
		var out []Value
		for _, item := range n.Content {
			ipos := Pos{File: file, Line: item.Line, Col: item.Column}
			switch item.Kind {
			case yaml.ScalarNode:
				vs, err := scalarOrRange(item, ipos, field)
				if err != nil {
					return nil, err
				}
				out = append(out, vs...)
			case yaml.SequenceNode:
				out = append(out, Value{Text: flowText(item), Node: item, Pos: ipos})
			default:
				return nil, inputErr(ipos, field, "a value must be a scalar, a range lo..hi[:step|*factor] or a list")
			}
			if len(out) > MaxAxisValues {
				return nil, inputErr(pos, field, "more than %d values", MaxAxisValues)
			}
		}
		return out, nil
	}
	return nil, inputErr(pos, field, "want a value, a list of values, or a range lo..hi[:step|*factor]")
}

func scalarOrRange(n *yaml.Node, pos Pos, field string) ([]Value, error) {
	if n.Tag == "!!null" || n.Value == "" {
		return nil, inputErr(pos, field, "empty value")
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 { // a quoted scalar is never a range
		vals, ok, err := expandRange(n.Value, pos, field)
		if ok || err != nil {
			return vals, err
		}
	}
	cp := *n
	return []Value{{Text: n.Value, Node: &cp, Pos: pos}}, nil
}

// flowText renders a sequence value on one line, as in [0.1, 2].
func flowText(n *yaml.Node) string {
	cp := *n
	cp.Style = yaml.FlowStyle
	b, err := yaml.Marshal(&cp)
	if err != nil {
		return "[?]"
	}
	return strings.TrimSpace(string(b))
}

// ParseGridFlag reads one --grid value, KEY=VALUES: VALUES is a
// comma-separated list of values and ranges (rate=5,10,20..40:10), or a
// YAML flow list for values that contain commas or are lists themselves
// (routing_scorers=["prefix-affinity:3,queue-depth:2", "queue-depth:1"]).
func ParseGridFlag(s string) (Axis, error) {
	const flag = "--grid"
	key, vals, ok := strings.Cut(s, "=")
	key = strings.ReplaceAll(strings.TrimSpace(key), "-", "_") // the flag's own name is accepted too
	if !ok || key == "" {
		return Axis{}, inputErr(Pos{File: flag}, "", "%q: want KEY=VALUES, e.g. rate=5,10,20 or num_instances=1..8", s)
	}
	base := Pos{File: flag, Col: len(key) + 2}
	if err := checkKeyName(key, Pos{File: flag, Col: 1}); err != nil {
		return Axis{}, err
	}
	ax := Axis{Key: key, Pos: Pos{File: flag, Col: 1}}
	trimmed := strings.TrimSpace(vals)
	if strings.HasPrefix(trimmed, "[") {
		base := base.shift(leadingSpace(vals))
		n, err := strictyaml.Parse(flag, []byte(trimmed))
		if err != nil || n == nil {
			return Axis{}, inputErr(base, key, "%q is not a YAML flow list", trimmed)
		}
		vs, err := axisValues(n, flag, key)
		if err != nil {
			return Axis{}, flagColumns(err, base)
		}
		for i := range vs { // positions in the list are columns of the flag's value
			vs[i].Pos = base.shift(vs[i].Pos.Col - 1)
		}
		ax.Values = vs
		return ax, nil
	}
	off := 0
	for _, item := range strings.Split(vals, ",") {
		pos := base.shift(off + leadingSpace(item))
		off += len(item) + 1
		item = strings.TrimSpace(item)
		if item == "" {
			return Axis{}, inputErr(pos, key, "empty value in %q", vals)
		}
		vs, ok, err := expandRange(item, pos, key)
		if err != nil {
			return Axis{}, err
		}
		if !ok {
			vs = []Value{scalarValue(item, pos)}
		}
		ax.Values = append(ax.Values, vs...)
		if len(ax.Values) > MaxAxisValues {
			return Axis{}, inputErr(base, key, "more than %d values", MaxAxisValues)
		}
	}
	return ax, nil
}

func leadingSpace(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// flagColumns turns the line-1 positions of a flag's YAML value into
// columns of the flag's value.
func flagColumns(err error, base Pos) error {
	if ie, ok := err.(*InputError); ok && ie.Pos.Line > 0 {
		ie.Pos = base.shift(ie.Pos.Col - 1)
	}
	return err
}

// checkKeyName refuses names that cannot be keys (the key's meaning is the
// runner's business). A key may have parts joined by dots, each a name
// (fleet.autoscaler.max_replicas).
func checkKeyName(key string, pos Pos) error {
	if dottedName(key) {
		return nil
	}
	if n := keyName(key); strings.Trim(n, "_") != "" {
		return inputErr(pos, "grid", "key %q: keys are lower case with underscores (did you mean %q?)", key, n)
	}
	return inputErr(pos, "grid", "key %q: keys are lower case with underscores, as in max_num_seqs (the YAML key of the flag --max-num-seqs)", key)
}

// dottedName: key is names joined by single dots.
func dottedName(key string) bool {
	for _, part := range strings.Split(key, ".") {
		if part == "" || keyName(part) != part {
			return false
		}
	}
	return true
}

// keyName is s written as a key: lower case, every run of other
// characters (spaces, dashes, dots) an underscore.
func keyName(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
		} else {
			sep = true
		}
	}
	return b.String()
}
