package flagspec

import (
	"io"
	"log/slog"
)

// Kind is the type of a flag's value.
type Kind int

// The kinds of flag values. Values hands each back as the Go type named.
const (
	String   Kind = iota // string
	Bool                 // bool
	Int                  // int
	Int64                // int64
	Float64              // float64
	Duration             // time.Duration
	// Strings is a repeatable flag: []string, every value given, in order,
	// never split at commas (a value may itself be a list).
	Strings
)

// Flag describes one flag.
type Flag struct {
	Name        string   // kebab-case, without dashes
	Aliases     []string // other names it answers to
	Usage       string
	Category    string // the --help heading it is listed under (see Categories)
	Kind        Kind
	Default     any    // a value of Kind's Go type; nil is its zero value
	DefaultText string // shown instead of Default in --help when set
	Hidden      bool
	// Choices are the values a String flag takes, offered by the shell
	// completion; nil: any.
	Choices []string
	// Answer makes a Bool flag a question the command answers instead of
	// running: given true, the flag's Answer writes its reply on w (stdout)
	// and the command does nothing else. value is any flag of the command
	// by name: its value, or its default when not given (nil: no such flag).
	Answer func(value func(name string) any, w io.Writer) error
}

// Values are the flags a command line gave explicitly, by their Name, as
// their Kind's Go type. A flag left at its default is absent.
type Values map[string]any

// Command describes a command whose flags are all described here, so the
// package that owns it needs no flag library: Run gets the flags given, the
// positional arguments, stdin, stdout and a logger on stderr.
type Command struct {
	Name, Usage, ArgsUsage, Description string
	Flags                               []Flag
	Run                                 func(v Values, args []string, stdin io.Reader, stdout io.Writer, log *slog.Logger) error
}

// The --help headings, in the order --help lists them. A command's own
// flags come first, under no heading.
const (
	CatServer     = "SERVER"
	CatWorkload   = "WORKLOAD"
	CatTrace      = "TRACE"
	CatClient     = "CLIENT"
	CatDeployment = "DEPLOYMENT"
	CatKVCache    = "KV CACHE"
	CatBatching   = "BATCHING AND SCHEDULING"
	CatCluster    = "CLUSTER: ADMISSION AND ROUTING"
	CatPD         = "PREFILL/DECODE DISAGGREGATION"
	CatSweep      = "SWEEP"
	CatFit        = "FIT"
	CatGrading    = "GRADING"
	CatGates      = "GATES"
	CatOutput     = "OUTPUT"
	CatGeneral    = "GENERAL"
)

// Categories are the headings of --help in the order it lists them; a
// heading not among them follows these, in the order its flags come.
func Categories() []string {
	return []string{CatServer, CatWorkload, CatTrace, CatClient, CatDeployment, CatKVCache, CatBatching,
		CatCluster, CatPD, CatSweep, CatFit, CatGrading, CatGates, CatOutput, CatGeneral}
}
