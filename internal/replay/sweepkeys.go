package replay

import (
	"errors"
	"fmt"
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

// deployKeys are the keys of a deployment (deploy.KeyNames) and
// pd_split, sorted.
func deployKeys() []string {
	keys := append(deploy.KeyNames(), PDSplitKey)
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

// applyDeployKey sets one deployment key to a grid value through
// deploy.SetKey (so a sweep accepts exactly what a --deployment file
// does); errors point at the value.
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
	text, err := yaml.Marshal(v.Node)
	if err != nil {
		return cfg, &sweep.InputError{Pos: v.Pos, Field: "grid." + key, Msg: err.Error()}
	}
	out, err := deploy.SetKey(cfg, key, string(text))
	var ke *deploy.KeyError
	if errors.As(err, &ke) {
		msg := ke.Msg
		if strings.Contains(msg, "is not a list") {
			msg += " (a list-valued key takes a list of lists, e.g. [[1, 2, 3], [4, 5, 6]])"
		}
		return cfg, &sweep.InputError{Pos: v.Pos, Field: "grid." + key, Msg: fmt.Sprintf("value %s: %s", v.Text, msg)}
	}
	if err != nil {
		return cfg, err
	}
	return out, nil
}

// setValue decodes a grid value into a new T (as a --deployment file's
// YAML would be) and points *dst at it.
func setValue[T any](dst **T, v sweep.Value) error {
	x := new(T)
	if err := v.Node.Decode(x); err != nil {
		want := "a value of its type"
		switch any(*x).(type) {
		case int, int64:
			want = "an integer"
		case float64:
			want = "a number"
		case bool:
			want = "true or false"
		case time.Duration:
			want = "a duration such as 30s or 500ms"
		}
		return fmt.Errorf("%q: want %s", v.Text, want)
	}
	*dst = x
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
