package cli

import ucli "github.com/urfave/cli/v2"

// Hidden is f left out of --help: defined, so a command reads its default,
// but not offered. Flag kinds without a Hidden field are returned as they
// are.
func Hidden(f ucli.Flag) ucli.Flag {
	switch f := f.(type) {
	case *ucli.BoolFlag:
		f.Hidden = true
	case *ucli.DurationFlag:
		f.Hidden = true
	case *ucli.Float64Flag:
		f.Hidden = true
	case *ucli.IntFlag:
		f.Hidden = true
	case *ucli.Int64Flag:
		f.Hidden = true
	case *ucli.StringFlag:
		f.Hidden = true
	case *ucli.StringSliceFlag:
		f.Hidden = true
	case *ucli.GenericFlag:
		f.Hidden = true
	}
	return f
}
