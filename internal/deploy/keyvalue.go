package deploy

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"servesim/internal/flagspec"
	"servesim/internal/strictyaml"
)

// This file holds what a key does with the field it names, whatever the
// field's type: set it from a flag, compare, copy, format it, and encode it
// as a trace header holds it.

// flagName is the key's flag: the YAML key with dashes.
func (k key) flagName() string { return dashed(k.name) }

func dashed(name string) string { return strings.ReplaceAll(name, "_", "-") }

// kind is the kind of the key's flag; false for a YAML-only key.
func (k key) kind() (flagspec.Kind, bool) {
	if k.usage == "" {
		return 0, false
	}
	switch k.field(&Config{}).(type) {
	case *string, *[]float64:
		return flagspec.String, true
	case *int:
		return flagspec.Int, true
	case *int64:
		return flagspec.Int64, true
	case *float64:
		return flagspec.Float64, true
	case *bool, **bool:
		return flagspec.Bool, true
	case *time.Duration:
		return flagspec.Duration, true
	}
	return 0, false
}

// setFlag sets the key's field of c from its flag's value v (the Go type of
// the flag's kind).
func (k key) setFlag(c *Config, v any) error {
	switch p := k.field(c).(type) {
	case *string:
		*p = v.(string)
	case *int:
		*p = v.(int)
	case *int64:
		*p = v.(int64)
	case *float64:
		*p = v.(float64)
	case *bool:
		*p = v.(bool)
	case **bool:
		b := v.(bool)
		*p = &b
	case *time.Duration:
		*p = v.(time.Duration)
	case *[]float64:
		xs, err := parseFloats(v.(string))
		if err != nil {
			return invalid("--%s: %v", k.flagName(), err)
		}
		*p = xs
	default:
		return fmt.Errorf("deployment key %s has no flag", k.name)
	}
	return nil
}

// parseFloats reads a comma-separated list of numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for i, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return nil, fmt.Errorf("value %d %q is not a number", i+1, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// same reports whether a and b agree on the key: sameValue, with models
// compared by SameModel ("Qwen/Qwen3-14B" is "qwen3-14b").
func (k key) same(a, b *Config) bool {
	if k.name == "model" {
		return SameModel(a.Model, b.Model)
	}
	return k.sameValue(a, b)
}

// sameValue reports whether a and b hold equal values of the key, an empty
// list or map the same as none.
func (k key) sameValue(a, b *Config) bool {
	x, y := reflect.ValueOf(k.field(a)).Elem(), reflect.ValueOf(k.field(b)).Elem()
	switch x.Kind() {
	case reflect.Slice, reflect.Map:
		if x.Len() == 0 && y.Len() == 0 {
			return true
		}
	}
	return reflect.DeepEqual(x.Interface(), y.Interface())
}

// copyFrom sets the key's field of dst to src's.
func (k key) copyFrom(dst, src *Config) {
	reflect.ValueOf(k.field(dst)).Elem().Set(reflect.ValueOf(k.field(src)).Elem())
}

// decode sets the key's field of c from the YAML value n of file; an
// error names the key as "key NAME" (keyPath).
func (k key) decode(file string, n *yaml.Node, c *Config) error {
	return strictyaml.Decode(file, n, keyPath(k.name), k.field(c))
}

// keyPath is how an error in a deployment file names the key it is about:
// "dep.yaml:3:15: key max_num_seqs: 0 must be positive". Sweeps decode
// their grid values as one-key deployment files and read this form.
func keyPath(name string) string { return "key " + name }

// header is the key's value of c as a trace header holds it in
// x_ext.deployment: what a YAML decoder gives back for the value (int,
// float64, string, bool, nil, []any, map[string]any; a duration as its Go
// string).
func (k key) header(c *Config) any {
	switch p := k.field(c).(type) {
	case *string:
		return *p
	case *int:
		return *p
	case *int64:
		return int(*p)
	case *float64:
		return headerFloat(*p)
	case *bool:
		return *p
	case **bool:
		if *p == nil {
			return nil
		}
		return **p
	case *time.Duration:
		return p.String()
	case *[]float64:
		out := make([]any, len(*p))
		for i, x := range *p {
			out[i] = headerFloat(x)
		}
		return out
	case *map[string]int:
		out := make(map[string]any, len(*p))
		for name, v := range *p {
			out[name] = v
		}
		return out
	}
	panic(fmt.Sprintf("deployment key %s: no header form for %T", k.name, k.field(c)))
}

// headerFloat is a number as YAML gives it back: an integer when its
// shortest form is one (yaml.v3 writes 2 for 2.0 and reads it as an int).
func headerFloat(x float64) any {
	if i, err := strconv.ParseInt(strconv.FormatFloat(x, 'g', -1, 64), 10, 64); err == nil {
		return int(i)
	}
	return x
}

// format is the key's value of c for a message, as tracev2.FormatValue
// writes the header form: "-" for unset, `""` for an empty string, lists
// as [a, b], maps as {k: v}.
func (k key) format(c *Config) string {
	switch p := k.field(c).(type) {
	case *string:
		if *p == "" {
			return `""`
		}
		return *p
	case *float64:
		return strconv.FormatFloat(*p, 'f', -1, 64)
	case **bool:
		if *p == nil {
			return "-"
		}
		return strconv.FormatBool(**p)
	case *time.Duration:
		return p.String()
	case *[]float64:
		parts := make([]string, len(*p))
		for i, x := range *p {
			parts[i] = strconv.FormatFloat(x, 'f', -1, 64)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *map[string]int:
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(*p)) {
			parts = append(parts, fmt.Sprintf("%s: %d", name, (*p)[name]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(reflect.ValueOf(k.field(c)).Elem().Interface())
}
