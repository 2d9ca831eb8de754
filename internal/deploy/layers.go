package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"servesim/internal/clip"
	"servesim/internal/des/latency"
	"servesim/internal/flagspec"
	"servesim/internal/infile"
	"servesim/internal/tracev2"
)

// Layers are what a command line says of a deployment, to lay over a base
// (the defaults, or the deployment a trace states): the --deployment file,
// then the --policy-config bundle, then the flags given. The order is
// defaults < trace < deployment file < policy bundle < flags.
type Layers struct {
	file   string // "" = no file
	data   []byte
	policy string // "" = no policy bundle
	pdata  []byte
	flags  flagspec.Values
}

// NewLayers reads the deployment file at path ("" = none) and the policy
// bundle the flags name (--policy-config), once each, and keeps the flags
// given (by their names in Flags).
func NewLayers(path string, flags flagspec.Values) (*Layers, error) {
	l := &Layers{file: path, flags: flags}
	if path != "" {
		data, err := infile.ReadFile(path, infile.ConfigBytes)
		if err != nil {
			return nil, invalid("deployment: %v", err)
		}
		l.data = data
	}
	if p, _ := flags[PolicyFileFlag].(string); p != "" {
		data, err := infile.ReadFile(p, infile.ConfigBytes)
		if err != nil {
			return nil, invalid("policy bundle: %v", err)
		}
		l.policy, l.pdata = p, data
	}
	return l, nil
}

// On lays the file, then the flags, over base.
func (l *Layers) On(base Config) (Config, error) {
	cfg, _, err := l.apply(base)
	return cfg, err
}

// apply is On, and says what set each key it set: "--max-num-seqs",
// "--deployment FILE" or "--policy-config FILE" (a flag wins over the
// bundle, the bundle over the deployment file).
func (l *Layers) apply(base Config) (Config, map[string]string, error) {
	cfg := base
	given := map[string]string{}
	var set, pset fileSet
	if l.file != "" {
		var err error
		if cfg, set, err = decodeFile(l.file, l.data, cfg); err != nil {
			return cfg, nil, err
		}
		for _, k := range set.keys {
			given[k] = "--" + FileFlag + " " + l.file
		}
	}
	if l.policy != "" {
		var err error
		if cfg, pset, err = decodePolicy(l.policy, l.pdata, cfg); err != nil {
			return cfg, nil, err
		}
		for _, k := range pset.keys {
			given[k] = "--" + PolicyFileFlag + " " + l.policy
		}
	}
	for _, k := range keyList() {
		flag := k.flagName()
		v, on := l.flags[flag]
		off, negated := l.flags["no-"+flag]
		if on && negated && v.(bool) == off.(bool) {
			return cfg, nil, invalid("--%s and --no-%s contradict each other: give one", flag, flag)
		}
		if on {
			if err := k.setFlag(&cfg, v); err != nil {
				return cfg, nil, err
			}
			given[k.name] = "--" + flag
		}
		if negated {
			if err := k.setFlag(&cfg, !off.(bool)); err != nil {
				return cfg, nil, err
			}
			given[k.name] = "--no-" + flag
		}
	}
	// A combination of keys is located in a file that set one of them,
	// unless a layer above that file set another.
	notBy := func(file string) func(string) bool {
		return func(k string) bool {
			return strings.HasPrefix(given[k], "--") && !strings.HasPrefix(given[k], "--"+file+" ")
		}
	}
	if err := set.combinations(cfg, notBy(FileFlag)); err != nil {
		return cfg, nil, err
	}
	if err := pset.combinations(cfg, notBy(PolicyFileFlag)); err != nil {
		return cfg, nil, err
	}
	return cfg, given, nil
}

// OnTrace is the deployment a trace is simulated on: the defaults, then
// the deployment the trace's header states (FromTrace), then the file and
// the flags. Every key the trace states that the file or a flag changes is
// one warning naming both values. Keys the trace's own simulator derived
// (KV blocks from GPU memory, max_model_len) are derived again when
// another key changed. A model the trace names that the simulator does not
// know is an error unless --model (the file or a flag) gives one: simulating
// another model would answer for the wrong server. name is the trace's, for
// messages.
func (l *Layers) OnTrace(name string, h *tracev2.Header, warn func(string)) (Config, error) {
	base := Default()
	td, err := FromTrace(name, h, base)
	if err != nil {
		return base, err
	}
	for _, w := range td.Warnings {
		warn(w)
	}
	final, given, err := l.apply(td.Config)
	if err != nil {
		return final, err
	}
	if td.UnknownModel != "" && given["model"] == "" {
		// A name, looked up among the embedded models only: never opened.
		_, err := latency.LookupModel(clip.Text(td.UnknownModel, maxNameBytes))
		return final, invalid("%s: the trace's model: %v (give it with --model)", name, err)
	}
	td.unnamed(name, &final, given, warn)
	if len(td.Keys) == 0 {
		return final, nil
	}
	byName := keysByName()
	changed := false
	for _, n := range slices.Sorted(maps.Keys(given)) {
		k := byName[n]
		same := k.same(&final, &td.Config)
		changed = changed || (!td.Derived[n] && !same)
		if v, stated := td.Keys[n]; stated && !same {
			now := k.format(&final)
			warn(fmt.Sprintf("%s: the trace says %s %s, %s says %s; simulating %s (--ignore-trace-deployment to simulate on the flags alone, silently)",
				name, n, tracev2.FormatValue(v), given[n], now, now))
		}
	}
	if changed {
		// Derived keys follow the keys they were derived from.
		for n := range td.Derived {
			if given[n] == "" {
				byName[n].copyFrom(&final, &base)
			}
		}
	}
	return final, nil
}

// FromFlags is the deployment a command line gives on its own: the
// --deployment file, then the flags given (v holds the flags of Flags
// given), over the defaults.
func FromFlags(v flagspec.Values) (Config, error) {
	path, _ := v[FileFlag].(string)
	l, err := NewLayers(path, v)
	if err != nil {
		return Default(), err
	}
	return l.On(Default())
}

// unnamed settles what the trace named that is not taken as it is: a model
// or GPU the simulator does not embed, and the hardware file, which is
// never opened. Each the command line does not give is one warning; the
// trace's GPU is looked up by name in a hardware file the command line
// gives.
func (td *TraceDeployment) unnamed(name string, final *Config, given map[string]string, warn func(string)) {
	if td.HardwareFile != "" && given["hardware_file"] == "" {
		warn(fmt.Sprintf("%s: the trace names the hardware file %q, which is not opened (a trace names no file to read); give --hardware-file to use one",
			name, clip.Text(td.HardwareFile, maxNameBytes)))
	}
	if td.UnknownGPU == "" || given["gpu"] != "" {
		return
	}
	if given["hardware_file"] != "" {
		final.GPU = td.UnknownGPU // a name, looked up in the file the user gave
		return
	}
	warn(fmt.Sprintf("%s: the trace's GPU %q is not one the simulator knows; simulating %s instead (give --gpu, or --hardware-file with specs for it)",
		name, clip.Text(td.UnknownGPU, maxNameBytes), final.GPU))
}

// maxNameBytes bounds a name from a trace quoted in a message.
const maxNameBytes = 200
