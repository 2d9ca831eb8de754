package replay

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"servesim/internal/deploy"
	"servesim/internal/sweep"
)

// PDSplitKey is the sweep's shorthand for a P/D split, "P:D": it sets
// prefill_instances to P and decode_instances to D.
const PDSplitKey = "pd_split"

// deployKeys are the YAML keys of a deployment (deploy.Config, its inline
// cluster part included) and pd_split, sorted.
func deployKeys() []string {
	var keys []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch {
			case strings.Contains(opts, "inline"):
				walk(f.Type)
			case name != "" && name != "-":
				keys = append(keys, name)
			}
		}
	}
	walk(reflect.TypeOf(deploy.Config{}))
	keys = append(keys, PDSplitKey)
	sort.Strings(keys)
	return keys
}

func isDeployKey(k string) bool {
	for _, d := range deployKeys() {
		if d == k {
			return true
		}
	}
	return false
}

// applyDeployKey sets one deployment key to a grid value, through the
// deployment's own YAML decoder (so a sweep accepts exactly what a
// --deployment file does); errors point at the value.
func applyDeployKey(cfg deploy.Config, key string, v sweep.Value) (deploy.Config, error) {
	if key == PDSplitKey {
		p, d, ok := strings.Cut(v.Text, ":")
		pn, err1 := strconv.Atoi(strings.TrimSpace(p))
		dn, err2 := strconv.Atoi(strings.TrimSpace(d))
		if !ok || err1 != nil || err2 != nil || pn < 1 || dn < 1 {
			return cfg, &sweep.InputError{Pos: v.Pos, Field: "grid." + key, Msg: fmt.Sprintf("%q: want P:D, the prefill and decode instances, e.g. 1:3", v.Text)}
		}
		cfg.PrefillInstances, cfg.DecodeInstances = pn, dn
		return cfg, nil
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: key}, v.Node}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(doc); err != nil {
		return cfg, &sweep.InputError{Pos: v.Pos, Field: "grid." + key, Msg: err.Error()}
	}
	out, err := deploy.Decode("grid", buf.Bytes(), cfg)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "grid: ")
		if _, rest, ok := strings.Cut(msg, "line 1: "); ok {
			msg = rest
		}
		return cfg, &sweep.InputError{Pos: v.Pos, Field: "grid." + key, Msg: fmt.Sprintf("value %s: %s", v.Text, msg)}
	}
	return out, nil
}

// setParsed parses v into a new value and points *dst at it.
func setParsed[T any](dst **T, v string, parse func(string) (T, error)) error {
	x, err := parse(strings.TrimSpace(v))
	if err != nil {
		return err
	}
	*dst = &x
	return nil
}

func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

func parseInt64(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 30s or 500ms", s)
	}
	return d, nil
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return b, nil
}

func parseString(s string) (string, error) { return s, nil }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
