package cli

import (
	"reflect"
	"slices"

	ucli "github.com/urfave/cli/v2"
)

// FlagAliases maps a flag to the other names it answers to: the names BLIS
// users type by habit. A flag described by its owner (flagspec) brings its
// own; these are for the flags defined here and in the commands. Help
// lists them after the flag's own name.
func FlagAliases() map[string][]string {
	return map[string][]string{
		"log-level":   {"log"},          // BLIS
		"metrics-out": {"metrics-path"}, // BLIS
	}
}

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
