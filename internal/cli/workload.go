package cli

import (
	"fmt"
	"io"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/flagspec"
	"servesim/internal/workload"
)

// WorkloadFlags are the workload flags of run and observe (workload.md §12).
// Their defaults live in the workload package; a flag counts only when given.
func WorkloadFlags() []ucli.Flag {
	return InCategory(flagspec.CatWorkload,
		&ucli.StringFlag{Name: "workload", Aliases: []string{"w"}, Usage: "named preset: distribution, chatbot, summarization, contentgen, multidoc (needs --rate)"},
		&ucli.StringFlag{Name: "workload-spec", Usage: "workload spec YAML (BLIS WorkloadSpec v2); - reads stdin"},
		&ucli.Float64Flag{Name: "rate", Usage: "requests per second", DefaultText: "1"},
		&ucli.StringFlag{Name: "arrival", Usage: "arrival process for --rate: constant, poisson, gamma, weibull", DefaultText: "constant"},
		&ucli.Int64Flag{Name: "num-requests", Aliases: []string{"n"}, Usage: "requests to generate, follow-ups included; 0 = unlimited", DefaultText: "100"},
		&ucli.DurationFlag{Name: "horizon", Usage: "no arrival after this simulated time, e.g. 10m", DefaultText: "none"},
		&ucli.IntFlag{Name: "concurrency", Usage: "closed-loop users instead of a rate"},
		&ucli.DurationFlag{Name: "think-time", Usage: "think time of --concurrency users, e.g. 500ms"},
		&ucli.IntFlag{Name: "prompt-tokens", Usage: "mean prompt tokens", DefaultText: presetText(512)},
		&ucli.IntFlag{Name: "prompt-tokens-stdev", Usage: "prompt tokens standard deviation", DefaultText: presetText(256)},
		&ucli.IntFlag{Name: "prompt-tokens-min", Usage: "minimum prompt tokens", DefaultText: presetText(2)},
		&ucli.IntFlag{Name: "prompt-tokens-max", Usage: "maximum prompt tokens", DefaultText: presetText(7000)},
		&ucli.IntFlag{Name: "output-tokens", Usage: "mean output tokens", DefaultText: presetText(512)},
		&ucli.IntFlag{Name: "output-tokens-stdev", Usage: "output tokens standard deviation", DefaultText: presetText(256)},
		&ucli.IntFlag{Name: "output-tokens-min", Usage: "minimum output tokens", DefaultText: presetText(2)},
		&ucli.IntFlag{Name: "output-tokens-max", Usage: "maximum output tokens", DefaultText: presetText(7000)},
		&ucli.IntFlag{Name: "prefix-tokens", Usage: "shared prefix tokens of every request (prefix group \"shared\")", DefaultText: "none"},
		&ucli.DurationFlag{Name: "timeout", Usage: "per-request timeout; negative disables", DefaultText: "300s"},
		&ucli.BoolFlag{Name: "streaming", Usage: "requests stream their output"},
		&ucli.StringFlag{Name: "ramp-up-strategy", Usage: "ramp the total rate over --num-requests instead of --rate: linear or exponential (vllm bench serve's)"},
		&ucli.Float64Flag{Name: "ramp-up-start-rps", Usage: "the ramp's first rate, requests/s"},
		&ucli.Float64Flag{Name: "ramp-up-end-rps", Usage: "the ramp's last rate, requests/s"},
	)
}

// presetText is the default of a token flag: the flags' own shape, or
// the --workload preset's.
func presetText(v int) string { return fmt.Sprintf("%d, or the --workload preset's", v) }

// WorkloadOptions maps the explicitly given workload flags (and --seed) onto
// workload options; stdin serves --workload-spec -.
func WorkloadOptions(c *ucli.Context, stdio IO) (workload.Options, error) {
	var o workload.Options
	o.Preset = c.String("workload")
	o.SpecPath = c.String("workload-spec")
	if o.SpecPath == "-" {
		data, err := io.ReadAll(stdio.In)
		if err != nil {
			return o, err
		}
		o.SpecPath, o.SpecData = StdinName, data
	}
	setPtr(c, "seed", &o.Seed, c.Int64)
	setPtr(c, "num-requests", &o.NumRequests, c.Int64)
	setPtr(c, "horizon", &o.Horizon, c.Duration)
	setPtr(c, "rate", &o.Rate, c.Float64)
	setPtr(c, "arrival", &o.Arrival, c.String)
	setPtr(c, "concurrency", &o.Concurrency, c.Int)
	setPtr(c, "think-time", &o.ThinkTime, c.Duration)
	setPtr(c, "prompt-tokens", &o.PromptTokens, c.Int)
	setPtr(c, "prompt-tokens-stdev", &o.PromptTokensStdev, c.Int)
	setPtr(c, "prompt-tokens-min", &o.PromptTokensMin, c.Int)
	setPtr(c, "prompt-tokens-max", &o.PromptTokensMax, c.Int)
	setPtr(c, "output-tokens", &o.OutputTokens, c.Int)
	setPtr(c, "output-tokens-stdev", &o.OutputTokensStdev, c.Int)
	setPtr(c, "output-tokens-min", &o.OutputTokensMin, c.Int)
	setPtr(c, "output-tokens-max", &o.OutputTokensMax, c.Int)
	setPtr(c, "prefix-tokens", &o.PrefixTokens, c.Int)
	setPtr(c, "timeout", &o.Timeout, c.Duration)
	setPtr(c, "streaming", &o.Streaming, c.Bool)
	setPtr(c, "ramp-up-strategy", &o.RampStrategy, c.String)
	setPtr(c, "ramp-up-start-rps", &o.RampStartRPS, c.Float64)
	setPtr(c, "ramp-up-end-rps", &o.RampEndRPS, c.Float64)
	return o, nil
}

// setPtr points *dst at the flag's value when the flag was given.
func setPtr[T any](c *ucli.Context, name string, dst **T, get func(string) T) {
	if c.IsSet(name) {
		v := get(name)
		*dst = &v
	}
}
