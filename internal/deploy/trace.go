package deploy

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"gopkg.in/yaml.v3"

	"servesim/internal/des/latency"
	"servesim/internal/strictyaml"
	"servesim/internal/tracev2"
)

// This file is the one mapping between a deployment and a trace header,
// both ways: Record writes the deployment a simulation ran into the header
// of the trace it writes, FromTrace reads the deployment a trace states.
// Where the keys go in the header (x_ext.deployment, and BLIS's server keys
// from the same values) is tracev2.Header.SetDeployment's business.

// Record writes the deployment a simulation ran into h (run, replay): every
// key of the resolved deployment, and as derived the keys the simulator
// computed rather than was given (KV blocks from GPU memory, max_model_len
// from the model, the instances of a P/D split). given is the deployment
// before Resolve.
func Record(h *tracev2.Header, given Config, res *Resolved) error {
	keys, err := res.Config.Keys()
	if err != nil {
		return err
	}
	derived := map[string]string{}
	for _, k := range keyList() {
		if !k.sameValue(&res.Config, &given) {
			derived[k.name] = tracev2.SourceDerived
		}
	}
	h.SetDeployment(keys, derived)
	return nil
}

// TraceDeployment is the deployment a trace states, applied to a base.
type TraceDeployment struct {
	// Config is the base with the trace's keys applied.
	Config Config
	// Keys are the keys the trace states and Config took, as the header
	// holds them.
	Keys map[string]any
	// Derived are the keys the trace's simulator computed from the others
	// (x_ext.sources): a replay that changes any other key derives them
	// again.
	Derived map[string]bool
	// UnknownModel is the trace's model when it is not a model the
	// simulator embeds; Config then keeps the base's model.
	UnknownModel string
	// UnknownGPU is the trace's GPU when it is not a GPU the simulator
	// embeds; Config then keeps the base's GPU (a hardware file the
	// command line gives may still name it: OnTrace).
	UnknownGPU string
	// HardwareFile is the hardware file the trace names, which is never
	// opened; Config keeps the base's.
	HardwareFile string
	// Warnings name the keys this version does not know (ignored).
	Warnings []string
}

// FromTrace reads the deployment header h states (x_ext.deployment, else
// BLIS's server keys) onto base. name is the trace's file, for messages. A
// header that states nothing gives base and no keys.
//
// The model, the GPU and the hardware file a trace states are names, never
// paths: a trace comes from elsewhere (a server reports its model's name,
// and a hostile one may report /dev/zero), so only the command line may
// name a file to open. A model or GPU the simulator does not embed is left
// out (UnknownModel, UnknownGPU), so that a capture of a server running a
// model we have no config for replays on the rest of its deployment with the
// model a --model flag or file gives (without one, OnTrace refuses it);
// the hardware file is left out always (HardwareFile).
func FromTrace(name string, h *tracev2.Header, base Config) (*TraceDeployment, error) {
	td := &TraceDeployment{Config: base, Derived: map[string]bool{}}
	keys := h.Deployment()
	if len(keys) == 0 {
		return td, nil
	}
	if m, ok := keys["model"].(string); ok {
		if _, err := latency.LookupModel(m); err != nil {
			td.UnknownModel = m
			delete(keys, "model")
		}
	}
	if g, ok := keys["gpu"].(string); ok && g != "" {
		if _, err := latency.LookupGPU(g); err != nil {
			td.UnknownGPU = g
			delete(keys, "gpu")
		}
	}
	if f, ok := keys["hardware_file"]; ok {
		td.HardwareFile, _ = f.(string)
		delete(keys, "hardware_file")
	}
	where := name + ": x_ext.deployment"
	if h.XExt == nil || len(h.XExt.Deployment) == 0 {
		where = name + ": server"
	}
	cfg, unknown, err := FromKeys(where, keys, base)
	if err != nil {
		return nil, err
	}
	for _, k := range unknown {
		td.Warnings = append(td.Warnings, fmt.Sprintf("%s.%s is not a deployment key this version knows; ignored", where, k))
		delete(keys, k)
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if h.Source("deployment."+k, true) == tracev2.SourceDerived {
			td.Derived[k] = true
		}
	}
	td.Config, td.Keys = cfg, keys
	return td, nil
}

// CheckTraceKey checks the value a trace header states for deployment key
// name as FromTrace takes it: of the key's type, whole where an integer
// goes, valid alone. A key this version does not know is no error
// (FromTrace warns of it), and neither is a model or GPU the simulator does
// not know (FromTrace leaves them out). It is the check tracev2 runs at the
// value's place in the header (tracev2.Options.DeploymentKey).
func CheckTraceKey(name string, value any) error {
	k, ok := keysByName()[name]
	if !ok || name == "model" || name == "gpu" || name == "hardware_file" {
		return nil
	}
	if empty(value) {
		value = nil
	}
	var n yaml.Node
	if err := n.Encode(value); err != nil {
		return err
	}
	cfg := Default()
	if err := k.decode("", &n, &cfg); err != nil {
		var e *strictyaml.Error
		if errors.As(err, &e) {
			return errors.New(e.Msg)
		}
		return err
	}
	for _, p := range cfg.problems() {
		if p.key == name {
			return errors.New(p.msg)
		}
	}
	return nil
}

// SameModel reports whether two model names name the same model: equal up
// to case, a HuggingFace organisation prefix and the forms an embedded name
// accepts ("Qwen/Qwen3-14B" and "qwen3-14b").
func SameModel(a, b string) bool {
	return latency.CanonicalModelName(a) == latency.CanonicalModelName(b)
}

// SameKey reports whether two values of deployment key k are equal
// (tracev2.SameValue; models by SameModel).
func SameKey(k string, a, b any) bool {
	if k == "model" {
		x, okx := a.(string)
		y, oky := b.(string)
		if okx && oky {
			return SameModel(x, y)
		}
	}
	return tracev2.SameValue(a, b)
}
