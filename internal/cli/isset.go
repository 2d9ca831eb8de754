package cli

import ucli "github.com/urfave/cli/v2"

// flagsSet answers c.IsSet for many names at the cost of one question.
// urfave's IsSet, asked about a flag that is not set, runs a regular
// expression over the names of every flag of the command before it finds
// the flag's definition; the deployment's sixty questions cost some 3 ms of
// every command's 12 ms start. Here the command's flags are read once (the
// names set, by any alias), and a name the command does not define is left
// to IsSet.
type flagsSet struct {
	c       *ucli.Context
	defined map[string]bool
	set     map[string]bool
}

func newFlagsSet(c *ucli.Context) flagsSet {
	s := flagsSet{c: c, defined: map[string]bool{}, set: map[string]bool{}}
	if c.Command == nil {
		return s
	}
	local := map[string]bool{}
	for _, n := range c.LocalFlagNames() {
		local[n] = true
	}
	for _, f := range c.Command.Flags {
		names := f.Names()
		on := false
		for _, n := range names {
			s.defined[n] = true
			on = on || local[n]
		}
		for _, n := range names {
			s.set[n] = on
		}
	}
	return s
}

// isSet is c.IsSet(name).
func (s flagsSet) isSet(name string) bool {
	if s.defined[name] {
		return s.set[name]
	}
	return s.c.IsSet(name)
}
