package verify

import (
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/infile"
	"servesim/internal/sweep"
	"servesim/internal/workload"
)

// plan is what a sweep document answers, checked: the deployment searched,
// its predicted max rate under the SLO and the knee of its latency curve.
type plan struct {
	doc      *sweep.Doc
	slo      sweep.SLO
	answer   sweep.MaxRate
	kneeRPS  float64 // 0 = none
	base     map[string]string
	deployed flagspec.Values // deployment flags: the user's, with the plan's keys
}

// deployKeys are the deployment keys a sweep document records in its
// base, with their flags: the plan states them, and a flag may not say
// otherwise.
var deployKeys = [][2]string{{"model", "model"}, {"gpu", "gpu"}, {"tensor_parallel", "tensor-parallel"},
	{"num_instances", "num-instances"}, {"latency_model", "latency-model"}}

// readPlan reads and checks the sweep document at path: one deployment's
// max-rate answer under an SLO, met at some rate.
func readPlan(path string, flags flagspec.Values) (*plan, error) {
	data, err := infile.ReadFile(path, sweep.MaxDocBytes)
	if err != nil {
		return nil, exitcode.Usagef("%v", err)
	}
	doc, err := sweep.DecodeWholeDoc(path, data)
	if err != nil {
		return nil, exitcode.AsUsage(err)
	}
	p := &plan{doc: doc, base: map[string]string{}}
	for _, b := range doc.Base {
		p.base[b.Key] = b.Value
	}
	a := doc.Answer
	switch {
	case doc.Find != sweep.FindMaxRate || a == nil || doc.SLO == "":
		return nil, exitcode.Usagef("%s: not a capacity plan: want the JSON of run sweep --find max-rate --slo ... --format json (this is %q with find %q)", path, doc.Command, doc.Find)
	case doc.Command != "run sweep":
		return nil, exitcode.Usagef("%s: a plan of %s: verify probes the server with a workload, so it checks run sweep's plans (a trace's plan: give run sweep the workload the trace follows)", path, doc.Command)
	case len(a.MaxRates) != 1:
		return nil, exitcode.Usagef("%s: the plan answers %d deployments; verify checks one: sweep the deployment to verify alone", path, len(a.MaxRates))
	case a.MaxRates[0].MaxRateRPS <= 0:
		return nil, exitcode.Usagef("%s: the plan has no answer: no rate met the SLO %s, so there is no capacity to verify", path, doc.SLO)
	}
	if p.slo, err = sweep.ParseSLO(doc.SLO); err != nil {
		return nil, exitcode.Usagef("%s: slo: %v", path, err)
	}
	p.answer = a.MaxRates[0]
	for _, k := range a.Knees {
		p.kneeRPS = k.RateRPS
	}
	if p.deployed, err = p.deployment(path, flags); err != nil {
		return nil, err
	}
	return p, nil
}

// deployment lays the plan's deployment keys (its base and the searched
// case's parameters) over the deployment flags given; a flag that names
// another value than the plan is refused.
func (p *plan) deployment(path string, flags flagspec.Values) (flagspec.Values, error) {
	v := maps.Clone(flags)
	if v == nil {
		v = flagspec.Values{}
	}
	keys := maps.Clone(p.base)
	for _, pr := range p.answer.Params {
		keys[pr.Key] = pr.Value
	}
	for _, kf := range deployKeys {
		want, ok := keys[kf[0]]
		if !ok {
			continue
		}
		var val any = want
		if kf[0] == "tensor_parallel" || kf[0] == "num_instances" {
			n, err := strconv.Atoi(want)
			if err != nil {
				return nil, exitcode.Usagef("%s: base %s %q is not a whole number", path, kf[0], want)
			}
			val = n
		}
		if given, ok := v[kf[1]]; ok && !sameValue(kf[0], given, val) {
			return nil, exitcode.Usagef("--%s %v: the plan %s was made for %s %v", kf[1], given, path, kf[0], val)
		}
		v[kf[1]] = val
	}
	if _, err := deploy.FromFlags(v); err != nil {
		return nil, err
	}
	return v, nil
}

func sameValue(key string, a, b any) bool {
	if key == "model" {
		return latency.CanonicalModelName(fmt.Sprint(a)) == latency.CanonicalModelName(fmt.Sprint(b))
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// workloads are the plan's workload (for the corrected answer) and the
// probes' (the same, n requests a level), from the workload flags given
// with the plan's preset and seed where the flags give none.
func (p *plan) workloads(flags flagspec.Values, n int64, readSpec func(flagspec.Values) (workload.Options, error)) (planned, probe workload.Options, err error) {
	v := maps.Clone(flags)
	if v == nil {
		v = flagspec.Values{}
	}
	name := p.base["workload"]
	_, preset := v["workload"]
	_, spec := v["workload-spec"]
	switch {
	case preset || spec:
	case name == "flags" || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"):
		if name != "flags" {
			return planned, probe, exitcode.Usagef("the plan's workload is the spec %s: give it with --workload-spec", name)
		}
	case name != "":
		v["workload"] = name
	}
	if s, ok := p.base["seed"]; ok {
		if _, given := v["seed"]; !given {
			seed, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return planned, probe, exitcode.Usagef("the plan's seed %q is not a whole number", s)
			}
			v["seed"] = seed
		}
	}
	if s, ok := p.base["num_requests"]; ok {
		if _, given := v["num-requests"]; !given {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				v["num-requests"] = n
			}
		}
	}
	if planned, err = readSpec(v); err != nil {
		return planned, probe, err
	}
	v["num-requests"] = n
	if probe, err = readSpec(v); err != nil {
		return planned, probe, err
	}
	if planned.Preset != "" && planned.Rate == nil && planned.RampStrategy == nil {
		one := 1.0 // a preset's own rate is never used: the search and the probes set every run's
		planned.Rate, probe.Rate = &one, &one
	}
	return planned, probe, nil
}

// servedName is the name the server serves the plan's model under:
// want if given (it must be served, as listed or as a listed name less its
// tag: Ollama lists servesim-tiny:latest and serves servesim-tiny), else
// the served model whose canonical name is the plan's. A plan made for a
// model config file names no model a server could list: --model vouches
// for it.
func servedName(served []string, want, planModel string) (string, error) {
	if want != "" {
		for _, m := range served {
			if m == want || strings.HasPrefix(m, want+":") {
				if !modelFile(planModel) && latency.CanonicalModelName(want) != latency.CanonicalModelName(planModel) {
					return "", exitcode.Usagef("--model %s: the plan was made for %s", want, planModel)
				}
				return want, nil
			}
		}
		return "", exitcode.Usagef("--model %s: the server serves %s", want, listOr(served))
	}
	for _, m := range served {
		if latency.CanonicalModelName(m) == latency.CanonicalModelName(planModel) {
			return m, nil
		}
	}
	return "", exitcode.Usagef("the plan was made for %s, but the server serves %s: verify the plan on a server of its model", planModel, listOr(served))
}

// modelFile reports whether a plan's model is a model config file (a
// path: a .json file, an absolute or a relative one) rather than a model's
// name (Qwen/Qwen3-14B is a name).
func modelFile(model string) bool {
	return strings.HasSuffix(model, ".json") || filepath.IsAbs(model) || strings.HasPrefix(model, ".")
}

func listOr(xs []string) string {
	if len(xs) == 0 {
		return "no model (GET /v1/models lists none)"
	}
	return strings.Join(xs, ", ")
}
