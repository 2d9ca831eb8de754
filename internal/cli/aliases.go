package cli

import (
	"reflect"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
)

// FlagAliases maps a flag to the other names it answers to: the names BLIS
// and vLLM users type by habit. The deployment's come from
// deploy.KeyAliases (the same table serves the deployment YAML), with
// dashes; the others are here. Help lists them after the flag's own name.
func FlagAliases() map[string][]string {
	out := map[string][]string{
		"log-level":   {"log"},          // BLIS
		"metrics-out": {"metrics-path"}, // BLIS
	}
	for key, names := range deploy.KeyAliases() {
		k := dashed(key)
		for _, n := range names {
			out[k] = append(out[k], dashed(n))
		}
	}
	return out
}

func dashed(key string) string { return strings.ReplaceAll(key, "_", "-") }

// withAliases adds FlagAliases to the flags that have them (urfave/cli
// flags keep their aliases in an Aliases field of every flag type).
func withAliases(flags []ucli.Flag) []ucli.Flag {
	table := FlagAliases()
	for _, f := range flags {
		extra := table[f.Names()[0]]
		if len(extra) == 0 {
			continue
		}
		v := reflect.ValueOf(f)
		if v.Kind() != reflect.Pointer {
			continue
		}
		field := v.Elem().FieldByName("Aliases")
		if !field.IsValid() || !field.CanSet() {
			continue
		}
		have := field.Interface().([]string)
		for _, a := range extra {
			if !slices.Contains(have, a) {
				have = append(have, a)
			}
		}
		field.Set(reflect.ValueOf(have))
	}
	return flags
}
