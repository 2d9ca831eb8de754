package deploy

import (
	"time"

	"servesim/internal/flagspec"
)

// FileFlag is the flag that names a deployment YAML file.
const FileFlag = "deployment"

// Flags describe the deployment's flags, generated from its keys: --deployment
// (a YAML file), then one flag per key with its other names, and --no-X for
// the keys vLLM turns off that way, and hidden flags for the `vllm serve`
// flags that a deployment has no key for (IgnoredFlagNotes). Defaults are Default()'s; a flag counts
// only when given (Layers).
func Flags() []flagspec.Flag {
	d := Default()
	out := []flagspec.Flag{{Name: FileFlag, Category: flagspec.CatDeployment, Kind: flagspec.String,
		Usage: "deployment YAML (keys: the flag names below with underscores, or their other names)"}, policyFileFlag()}
	for _, k := range keyList() {
		kind, ok := k.kind()
		if !ok {
			continue
		}
		f := flagspec.Flag{Name: k.flagName(), Usage: k.usage, Category: k.category, Kind: kind,
			Default: flagDefault(k.field(&d)), DefaultText: k.defaultText}
		if k.choices != nil {
			f.Choices = k.choices()
		}
		for _, a := range k.aliases {
			f.Aliases = append(f.Aliases, dashed(a))
		}
		out = append(out, f)
		if k.negation != "" {
			out = append(out, flagspec.Flag{Name: "no-" + k.flagName(), Usage: k.negation, Category: k.category, Kind: flagspec.Bool})
		}
	}
	return append(out, vllmFlagSpecs()...)
}

// flagDefault is a field's value as its flag's default: a list flag and an
// unset switch start empty.
func flagDefault(field any) any {
	switch p := field.(type) {
	case *string:
		return *p
	case *int:
		return *p
	case *int64:
		return *p
	case *float64:
		return *p
	case *bool:
		return *p
	case *time.Duration:
		return *p
	case **bool:
		return false
	case *[]float64:
		return ""
	}
	return nil
}
