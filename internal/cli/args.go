package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// reorderArgs moves flags that follow positional arguments in front of them,
// because urfave/cli v2 stops parsing flags at the first positional argument
// and would otherwise silently treat `replay trace.csv --quiet` as two
// positionals. Everything after a bare "--" stays positional. args[0] is the
// program name.
func reorderArgs(flags []ucli.Flag, args []string) []string {
	if len(args) < 2 {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range flags {
		_, isBool := f.(*ucli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var opts, pos []string
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		opts = append(opts, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && i+1 < len(rest) {
			i++
			opts = append(opts, rest[i])
		}
	}
	out := append([]string{args[0]}, opts...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}
