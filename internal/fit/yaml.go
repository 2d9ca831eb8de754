package fit

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/deploy"
	"servesim/internal/strictyaml"
)

// alwaysKeys are written even at their default value: the coefficients only
// mean something with the model, GPU and TP they were fitted for, unless
// they were fitted on several servers (modelFree): then the server is the
// one each trace states.
func alwaysKeys(modelFree bool) []string {
	if modelFree {
		return []string{"latency_model", "alpha_coeffs", "beta_coeffs"}
	}
	return []string{"model", "gpu", "tensor_parallel", "latency_model", "alpha_coeffs", "beta_coeffs"}
}

// FittedYAML renders a fitted deployment: the comment (saying where the
// coefficients come from and how well they fit), then every key of d that
// differs from deploy.Default() plus alwaysKeys, in the order yaml.v3
// writes deploy.Config. deploy.Load(path, deploy.Default()) gives d back exactly
// (floats print in their shortest round-trip form).
func FittedYAML(d deploy.Config, comment string, modelFree bool) ([]byte, error) {
	var node yaml.Node
	if err := node.Encode(d); err != nil {
		return nil, fmt.Errorf("fitted deployment: %w", err)
	}
	def, got := yamlFields(reflect.ValueOf(deploy.Default())), yamlFields(reflect.ValueOf(d))
	keep := map[string]bool{}
	for _, k := range alwaysKeys(modelFree) {
		keep[k] = true
	}
	out := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i], node.Content[i+1]
		g, ok := got[key.Value]
		if !ok {
			return nil, fmt.Errorf("fitted deployment: key %s has no field", key.Value)
		}
		if !keep[key.Value] && reflect.DeepEqual(g.Interface(), def[key.Value].Interface()) {
			continue
		}
		if val.Kind == yaml.SequenceNode {
			val.Style = yaml.FlowStyle
		}
		out.Content = append(out.Content, key, val)
	}
	out.HeadComment = comment
	b, err := strictyaml.Encode(out, 2)
	if err != nil {
		return nil, fmt.Errorf("fitted deployment: %w", err)
	}
	return b, nil
}

// Comment is the fitted YAML's head comment: provenance and errors, deterministic.
func Comment(res *Result, traceName string) string {
	c := fmt.Sprintf("Fitted by calibrate fit on %s (%d requests fitted", traceName, res.FitRequests)
	if res.HoldoutRequests > 0 {
		c += fmt.Sprintf(", %d held out", res.HoldoutRequests)
	}
	c += fmt.Sprintf(", %d replays).\nMAPE before: TTFT %.1f%%, E2E %.1f%%; after: TTFT %.1f%%, E2E %.1f%%",
		res.Iterations, 100*res.Start.TTFTMAPE, 100*res.Start.E2EMAPE, 100*res.Fit.TTFTMAPE, 100*res.Fit.E2EMAPE)
	if res.Holdout.N > 0 {
		c += fmt.Sprintf("; held out: TTFT %.1f%%, E2E %.1f%%", 100*res.Holdout.TTFTMAPE, 100*res.Holdout.E2EMAPE)
	}
	c += "."
	if s := sigmaComment(res); s != "" {
		c += "\n" + s
	}
	return c + "\nUse: run or replay --deployment THIS_FILE (flags given beside it override it)."
}

// yamlFields maps each YAML key of a struct to its field's value, entering
// inline structs (`yaml:",inline"`) as yaml.v3 does.
func yamlFields(v reflect.Value) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") && f.Type.Kind() == reflect.Struct {
			for k, fv := range yamlFields(v.Field(i)) {
				out[k] = fv
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = v.Field(i)
	}
	return out
}

// WriteSummary tells what was fitted and how well, for a person (the
// command writes it on stderr).
func WriteSummary(w io.Writer, d deploy.Config, res *Result) {
	var b strings.Builder
	fmt.Fprintf(&b, "calibrate fit: %s on %s/%s TP %d: %d requests fitted", res.Kind, d.Model, d.GPU, max(d.TP, 1), res.FitRequests)
	if res.HoldoutRequests > 0 {
		fmt.Fprintf(&b, ", %d held out", res.HoldoutRequests)
	}
	if res.ITLRequests > 0 {
		fmt.Fprintf(&b, ", %d with ITL segments", res.ITLRequests)
	}
	conv := "converged"
	if !res.Converged {
		conv = fmt.Sprintf("mean of the last rounds, spread %.1f%%", 100*res.Spread)
	}
	fmt.Fprintf(&b, "; %d replays (%s)\n", res.Iterations, conv)
	fmt.Fprintf(&b, "alpha_coeffs: %s\nbeta_coeffs:  %s\n", floats(res.Alpha), floats(res.Beta))
	fmt.Fprintf(&b, "%-10s %10s %10s", "MAPE", "start", "fitted")
	if res.Holdout.N > 0 {
		fmt.Fprintf(&b, " %10s", "holdout")
	}
	b.WriteByte('\n')
	for _, m := range []struct {
		name string
		get  func(Errors) float64
	}{{"ttft", func(e Errors) float64 { return e.TTFTMAPE }}, {"e2e", func(e Errors) float64 { return e.E2EMAPE }}} {
		fmt.Fprintf(&b, "%-10s %9.1f%% %9.1f%%", m.name, 100*m.get(res.Start), 100*m.get(res.Fit))
		if res.Holdout.N > 0 {
			fmt.Fprintf(&b, " %9.1f%%", 100*m.get(res.Holdout))
		}
		b.WriteByte('\n')
	}
	if len(res.PerTrace) > 1 {
		fmt.Fprintf(&b, "%-24s %9s %9s %9s %9s\n", "trace", "TTFT from", "to", "E2E from", "to")
		for _, p := range res.PerTrace {
			fmt.Fprintf(&b, "%-24s %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n", p.Name, 100*p.Start.TTFTMAPE, 100*p.Fit.TTFTMAPE,
				100*p.Start.E2EMAPE, 100*p.Fit.E2EMAPE)
		}
	}
	io.WriteString(w, b.String())
}

func floats(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.6g", x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
