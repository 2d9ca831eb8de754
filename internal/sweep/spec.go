package sweep

import (
	"errors"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/exitcode"
	"servesim/internal/infile"
	"servesim/internal/strictyaml"
)

// Questions a sweep can answer directly (--find).
const (
	FindMaxRate = "max-rate" // the highest rate each deployment sustains under the SLO
	FindMinCost = "min-cost" // the cheapest deployment of the grid that meets the SLO
	FindMinGPUs = "min-gpus" // the deployment with the fewest GPUs that meets the SLO
	// FindMinShed: the setting of the grid that meets the SLO while its
	// admission rejects (sheds) the fewest requests, then the fewest that
	// fail otherwise: a gateway's admission or routing policy at overload.
	FindMinShed = "min-shed"
)

// DefaultPrecision is the max-rate search's default relative precision.
const DefaultPrecision = 0.01

// SpecExample is a commented sweep file, for --help and the docs.
const SpecExample = `# sweep.yaml: every key of the grid is a deployment key (the flag name with
# underscores: num_instances, tensor_parallel, gpu, max_num_seqs, latency_model,
# routing_policy, pd_split "P:D", ...), a load key (rate; for run also
# num_requests, prompt_tokens, ...) or a fleet file's key, such as
# fleet.autoscaler.max_replicas (docs/fleet.md). Values: a list, or a range
# lo..hi, lo..hi:step, lo..hi*factor (hi included).
grid:
  num_instances: 1..4
  tensor_parallel: [1, 2]
  rate: 5..40:5
slo: ttft.p99<500ms,itl.p99<50ms
find: min-cost          # or max-rate (drop rate from the grid), min-gpus, min-shed
precision: 1%           # max-rate: stop when the bracket is this narrow
prices:                 # USD per GPU-hour, over the built-in list prices
  H100: 2.49`

// Spec is what a sweep varies and what it asks.
type Spec struct {
	Axes      []Axis
	SLO       SLO
	Find      string
	Precision float64 // max-rate: relative width of the final bracket
	Prices    Prices

	findPos Pos
}

// NewSpec is an empty spec with the built-in prices.
func NewSpec() Spec {
	return Spec{Precision: DefaultPrecision, Prices: DefaultPrices(), findPos: Pos{File: "--find"}}
}

// LoadSpec reads a sweep file (SpecExample) over base.
func LoadSpec(path string, base Spec) (Spec, error) {
	data, err := infile.ReadFile(path, infile.ConfigBytes)
	if err != nil {
		return base, inputErr(Pos{File: path}, "", "%v", err)
	}
	return DecodeSpec(path, data, base)
}

// DecodeSpec is LoadSpec on bytes already read; name is used in errors.
func DecodeSpec(name string, data []byte, base Spec) (Spec, error) {
	top, err := strictyaml.Parse(name, data)
	if err != nil {
		return base, fromYAML(err)
	}
	if top == nil {
		return base, inputErr(Pos{File: name}, "", "the sweep file is empty (see --help for an example)")
	}
	if err := strictyaml.WantMapping(name, top, "", "grid, slo, find, precision and prices"); err != nil {
		return base, fromYAML(err)
	}
	s := base
	seen := strictyaml.Keys{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		vpos := Pos{File: name, Line: v.Line, Col: v.Column}
		if err := seen.Add(name, k, ""); err != nil {
			return base, fromYAML(err)
		}
		var err error
		switch k.Value {
		case "grid":
			err = s.decodeGrid(v, name)
		case "slo":
			var text string
			if text, err = scalarText(name, k, v, "an SLO such as 'ttft.p99<500ms'"); err == nil {
				at := vpos
				if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
					at.Col++
				}
				s.SLO, err = parseSLO(text, at)
			}
		case "find":
			s.Find, err = scalarText(name, k, v, "max-rate, min-cost, min-gpus or min-shed")
			s.findPos = vpos
		case "precision":
			var text string
			if text, err = scalarText(name, k, v, "a relative precision such as 1%"); err == nil {
				s.Precision, err = ParsePrecision(text, vpos)
			}
		case "prices":
			s.Prices, err = pricesFrom(v, name, "prices", s.Prices)
		default:
			err = fromYAML(strictyaml.UnknownKey(name, k, "", []string{"grid", "slo", "find", "precision", "prices"}))
		}
		if err != nil {
			return base, err
		}
	}
	return s, nil
}

// scalarText is the text of the value v of key k, which must be one
// scalar (a list, a mapping or nothing is an error saying what it wants).
func scalarText(file string, k, v *yaml.Node, want string) (string, error) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	switch {
	case v.Kind != yaml.ScalarNode:
		return "", fromYAML(strictyaml.At(file, v, k.Value, "want %s, got %s", want, strictyaml.Describe(v)))
	case v.Tag == "!!null":
		return "", fromYAML(strictyaml.At(file, v, k.Value, "want %s, got nothing (leave the key out to give none)", want))
	}
	return v.Value, nil
}

func (s *Spec) decodeGrid(m *yaml.Node, file string) error {
	if err := strictyaml.WantMapping(file, m, "grid", "keys to values (e.g. num_instances: 1..4)"); err != nil {
		return fromYAML(err)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		kpos := Pos{File: file, Line: k.Line, Col: k.Column}
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return inputErr(kpos, "grid", "a key must be a name such as num_instances, got %s", strictyaml.Describe(k))
		}
		if err := checkKeyName(k.Value, kpos); err != nil {
			return err
		}
		vals, err := axisValues(v, file, "grid."+k.Value)
		if err != nil {
			return err
		}
		s.Axes = append(s.Axes, Axis{Key: k.Value, Pos: kpos, Values: vals})
	}
	return nil
}

// SetFind sets the question from the --find flag.
func (s *Spec) SetFind(v string) { s.Find, s.findPos = v, Pos{File: "--find"} }

// ParsePrecision reads a relative precision: 1% or 0.01, in [0.0001, 0.5].
func ParsePrecision(v string, pos Pos) (float64, error) {
	t := strings.TrimSpace(v)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSpace(strings.TrimSuffix(t, "%")), 0.01
	}
	f, err := strconv.ParseFloat(t, 64)
	p := f * scale
	if err != nil || !(p >= 1e-4 && p <= 0.5) {
		return 0, inputErr(pos, "precision", "%q: want a relative precision between 0.01%% and 50%%, e.g. 1%%", v)
	}
	return p, nil
}

// Check validates the spec as a whole: the question, its SLO, and a grid
// that is not empty. rateKey is the load key a max-rate search varies.
func (s *Spec) Check(rateKey string) (*Grid, error) {
	switch s.Find {
	case "", FindMaxRate, FindMinCost, FindMinGPUs, FindMinShed:
	default:
		return nil, inputErr(s.findPos, "find", "%q: want max-rate, min-cost, min-gpus or min-shed", s.Find)
	}
	if s.Find != "" && s.SLO.Empty() {
		return nil, exitcode.Usagef("--find %s needs an SLO, e.g. --slo 'ttft.p99<500ms' (or slo: in the sweep file)", s.Find)
	}
	if s.Find == FindMaxRate {
		for _, ax := range s.Axes {
			if ax.Key == rateKey {
				return nil, inputErr(ax.Pos, "grid."+rateKey, "--find max-rate searches the rate itself: remove %s from the grid", rateKey)
			}
		}
	} else if len(s.Axes) == 0 {
		return nil, exitcode.Usagef("the grid is empty: give --grid KEY=VALUES (e.g. --grid rate=5..40:5 --grid num_instances=1,2,4), a sweep file with a grid: section, or --find max-rate for one deployment")
	}
	return NewGrid(s.Axes)
}

// fromYAML is a strictyaml error as an *InputError (exit code 2, the same
// wording).
func fromYAML(err error) error {
	var e *strictyaml.Error
	if !errors.As(err, &e) {
		return err
	}
	return &InputError{Pos: Pos{File: e.File, Line: e.Line, Col: e.Column}, Field: e.Path, Msg: e.Msg}
}
