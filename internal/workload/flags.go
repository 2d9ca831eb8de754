package workload

import (
	"fmt"
	"io"

	"servesim/internal/flagspec"
	"servesim/internal/infile"
)

// Flags describe the workload flags of run and observe (docs/workload.md).
// Their defaults live in Options' resolution, not here: a flag counts only
// when given, so --help shows each default as text.
func Flags() []flagspec.Flag {
	f := func(name string, kind flagspec.Kind, usage, def string, aliases ...string) flagspec.Flag {
		return flagspec.Flag{Name: name, Aliases: aliases, Usage: usage, Category: flagspec.CatWorkload, Kind: kind, DefaultText: def}
	}
	s, i, i64, fl, d, b := flagspec.String, flagspec.Int, flagspec.Int64, flagspec.Float64, flagspec.Duration, flagspec.Bool
	return []flagspec.Flag{
		f("workload", s, "named preset: distribution, chatbot, summarization, contentgen, multidoc (needs --rate; --list-workloads shows their lengths)", "", "w"),
		f("workload-spec", s, "workload spec YAML (BLIS WorkloadSpec v2); - reads stdin", ""),
		f("rate", fl, "requests per second", "1"),
		f("arrival", s, "arrival process for --rate: constant, poisson, gamma, weibull. constant is BLIS's for the same flags, so a run compares one to one with blis run; vllm bench serve sends poisson (burstiness 1.0) unless told otherwise: give --arrival poisson to match it", "constant"),
		f("num-requests", i64, "requests to generate, follow-ups included; 0 = unlimited", "100", "n"),
		f("horizon", d, "no arrival after this simulated time, e.g. 10m", "none"),
		f("concurrency", i, "closed-loop users instead of a rate", ""),
		f("think-time", d, "think time of --concurrency users, e.g. 500ms", ""),
		f("prompt-tokens", i, "mean prompt tokens", presetText(512)),
		f("prompt-tokens-stdev", i, "prompt tokens standard deviation", presetText(256)),
		f("prompt-tokens-min", i, "minimum prompt tokens", presetText(2)),
		f("prompt-tokens-max", i, "maximum prompt tokens", presetText(7000)),
		f("output-tokens", i, "mean output tokens", presetText(512)),
		f("output-tokens-stdev", i, "output tokens standard deviation", presetText(256)),
		f("output-tokens-min", i, "minimum output tokens", presetText(2)),
		f("output-tokens-max", i, "maximum output tokens", presetText(7000)),
		f("prefix-tokens", i, "shared prefix tokens of every request (prefix group \"shared\")", "none"),
		f("timeout", d, "per-request timeout; negative disables", "300s"),
		f("streaming", b, "requests stream their output", ""),
		f("slo-class", s, "SLO class of the requests: critical, standard, sheddable, batch or background (a gateway's tiers: priorities 4, 3, -2, -1, -3; empty is standard)", "none"),
		f("tenant", s, "tenant id of the requests (a gateway's flows and budgets)", "none"),
		f("ramp-up-strategy", s, "ramp the total rate over --num-requests instead of --rate: linear or exponential (vllm bench serve's)", ""),
		f("ramp-up-start-rps", fl, "the ramp's first rate, requests/s", ""),
		f("ramp-up-end-rps", fl, "the ramp's last rate, requests/s", ""),
	}
}

// presetText is the default of a token flag: the flags' own shape, or
// the --workload preset's.
func presetText(v int) string { return fmt.Sprintf("%d, or the --workload preset's", v) }

// SeedFlag is the name of the seed flag FromFlags reads beside Flags
// (each command describes its own --seed).
const SeedFlag = "seed"

// FromFlags maps the workload flags given (Flags, and SeedFlag as an
// int64) onto Options. --workload-spec - reads the spec from stdin, named
// stdinName in errors and in the trace header.
func FromFlags(v flagspec.Values, stdin io.Reader, stdinName string) (Options, error) {
	var o Options
	o.Preset, _ = v["workload"].(string)
	o.SpecPath, _ = v["workload-spec"].(string)
	if o.SpecPath == "-" {
		data, err := infile.Read(stdin, stdinName, infile.ConfigBytes)
		if err != nil {
			return o, err
		}
		o.SpecPath, o.SpecData = stdinName, data
	}
	given(v, SeedFlag, &o.Seed)
	given(v, "num-requests", &o.NumRequests)
	given(v, "horizon", &o.Horizon)
	given(v, "rate", &o.Rate)
	given(v, "arrival", &o.Arrival)
	given(v, "concurrency", &o.Concurrency)
	given(v, "think-time", &o.ThinkTime)
	given(v, "prompt-tokens", &o.PromptTokens)
	given(v, "prompt-tokens-stdev", &o.PromptTokensStdev)
	given(v, "prompt-tokens-min", &o.PromptTokensMin)
	given(v, "prompt-tokens-max", &o.PromptTokensMax)
	given(v, "output-tokens", &o.OutputTokens)
	given(v, "output-tokens-stdev", &o.OutputTokensStdev)
	given(v, "output-tokens-min", &o.OutputTokensMin)
	given(v, "output-tokens-max", &o.OutputTokensMax)
	given(v, "prefix-tokens", &o.PrefixTokens)
	given(v, "timeout", &o.Timeout)
	given(v, "streaming", &o.Streaming)
	given(v, "slo-class", &o.SLOClass)
	given(v, "tenant", &o.Tenant)
	given(v, "ramp-up-strategy", &o.RampStrategy)
	given(v, "ramp-up-start-rps", &o.RampStartRPS)
	given(v, "ramp-up-end-rps", &o.RampEndRPS)
	return o, nil
}

// given points *dst at the flag's value when the flag was given.
func given[T any](v flagspec.Values, name string, dst **T) {
	if x, ok := v[name].(T); ok {
		*dst = &x
	}
}

// FlagChoices are the values shell completion offers for --workload: the
// presets' names.
func FlagChoices() map[string][]string {
	var presets []string
	for _, p := range Presets() {
		presets = append(presets, p.Name)
	}
	return map[string][]string{"workload": presets}
}
