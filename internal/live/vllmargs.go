package live

import (
	"fmt"
	"strconv"
	"strings"

	"servesim/internal/deploy"
	"servesim/internal/httpload"
)

// maxServeArgsBytes bounds --vllm-args.
const maxServeArgsBytes = 64 << 10

// parseServeArgs reads a `vllm serve` command line (with or without
// "vllm serve", after any environment words VAR=value, the model as its
// first positional argument or --model) and
// returns the deployment keys its flags state (deploy.ServeFlags). Flags
// with no key are skipped: a switch alone; any other, with the next word
// when it does not start with "-" (taken as its value: give the model
// first, as vLLM's own usage line does). A malformed value of a keyed flag
// is an error naming the flag.
func parseServeArgs(line string) (map[string]any, error) {
	if len(line) > maxServeArgsBytes {
		return nil, fmt.Errorf("longer than %d bytes", maxServeArgsBytes)
	}
	words, err := httpload.CommandWords(line)
	if err != nil {
		return nil, err
	}
	byName := map[string]deploy.ServeFlag{}
	for _, f := range deploy.ServeFlags() {
		for _, n := range f.Names {
			byName[n] = f
		}
	}
	out := map[string]any{}
	positional := 0
	for i := 0; i < len(words); i++ {
		w := words[i].Text
		if !strings.HasPrefix(w, "-") || w == "-" {
			if positional == 0 && (w == "vllm" || w == "serve" || w == "env") {
				continue
			}
			if _, _, env := httpload.EnvWord(w); env && positional == 0 {
				continue // VAR=value before the command: the environment, not the model
			}
			if positional == 0 {
				out["model"] = w
			}
			positional++
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		neg := false
		f, known := byName[name]
		if !known {
			if rest, ok := strings.CutPrefix(name, "no-"); ok {
				if f, known = byName[rest]; known && f.Switch {
					neg = true
				}
			}
		}
		takesNext := func() bool { return !hasVal && i+1 < len(words) && !strings.HasPrefix(words[i+1].Text, "-") }
		switch {
		case !known || (f.Key == "" && !f.Switch):
			if takesNext() {
				i++ // the value of a flag with no key
			}
		case f.Key == "":
			// a switch the simulator ignores
		case f.Switch:
			on := !neg
			if hasVal {
				b, err := strconv.ParseBool(strings.ToLower(val))
				if err != nil {
					return nil, fmt.Errorf("%s: %q is not true or false", w, val)
				}
				on = b != neg
			}
			out[f.Key] = on
		default:
			if !hasVal {
				if !takesNext() {
					return nil, fmt.Errorf("--%s needs a value", name)
				}
				i++
				val = words[i].Text
			}
			v, err := f.Parse(val)
			if err != nil {
				return nil, fmt.Errorf("--%s: %v", name, err)
			}
			out[f.Key] = v
		}
	}
	return out, nil
}
