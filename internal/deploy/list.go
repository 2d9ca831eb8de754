package deploy

import (
	"fmt"
	"io"
	"text/tabwriter"

	"servesim/internal/des/latency"
	"servesim/internal/flagspec"
)

// ListFlags describe --list-models and --list-gpus, which print what the
// embedded tables know instead of running the command (flagspec's Answer).
func ListFlags() []flagspec.Flag {
	return []flagspec.Flag{
		{Name: "list-models", Kind: flagspec.Bool, Category: flagspec.CatDeployment, Answer: listings,
			Usage: "list the embedded models (layers, KV bytes per token, the smallest TP that fits --gpu) and exit"},
		{Name: "list-gpus", Kind: flagspec.Bool, Category: flagspec.CatDeployment, Answer: listings,
			Usage: "list the embedded GPUs (peak FLOP/s, memory, bandwidth) and exit"},
	}
}

// listings prints on w what --list-models and --list-gpus ask for: the
// models on --gpu (with --hardware-file), then the GPUs.
func listings(value func(string) any, w io.Writer) error {
	models, _ := value("list-models").(bool)
	gpus, _ := value("list-gpus").(bool)
	if models {
		gpu, _ := value("gpu").(string)
		hw, _ := value("hardware-file").(string)
		if err := ListModels(w, gpu, hw); err != nil {
			return err
		}
	}
	if gpus {
		if models {
			fmt.Fprintln(w)
		}
		return ListGPUs(w)
	}
	return nil
}

// listTPs are the tensor-parallel degrees tried for a model's fit.
func listTPs() []int { return []int{1, 2, 4, 8, 16} }

// ListModels writes a table of the embedded models: architecture, KV cache
// per token (one GPU holding all KV heads, 16-bit unless the config says
// otherwise), weights, and the smallest TP whose GPUs of gpu (default H100)
// hold the weights with room for KV blocks at vLLM's default 0.9 memory
// utilisation.
func ListModels(w io.Writer, gpu, hardwareFile string) error {
	if gpu == "" {
		gpu = "H100"
	}
	g, err := latency.ResolveGPU(gpu, hardwareFile)
	if err != nil {
		return invalid("--list-models: %v", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\tlayers\thidden\tKV heads\tKV KiB/token\tweights GB\texperts\tTP on %s\t\n", g.Name)
	for _, name := range latency.KnownModels() {
		m, err := latency.LookupModel(name)
		if err != nil {
			return err
		}
		experts := "-"
		if m.IsMoE() {
			experts = fmt.Sprintf("%d (%d active)", m.Experts, m.ExpertsPerToken)
		}
		fit := "none ≤ 16"
		for _, tp := range listTPs() {
			if _, err := latency.KVBlocks(m, g, tp, 0.9, 16); err == nil {
				fit = fmt.Sprint(tp)
				break
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t%.1f\t%s\t%s\t\n", name, m.Layers, m.Hidden, m.KVHeads,
			latency.KVBytesPerTokenPerGPU(m, 1)/1024, latency.WeightParams(m)*m.WeightBytes/1e9, experts, fit)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, "\n--model takes a name above, a HuggingFace id (Qwen/Qwen3-14B), or the path of a config.json.")
	return err
}

// ListGPUs writes a table of the embedded GPUs.
func ListGPUs(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "gpu\tBF16 TFLOP/s\tFP8 TFLOP/s\tmemory GiB\tbandwidth TB/s\tinterconnect\t\n")
	for _, name := range latency.KnownGPUs() {
		g, err := latency.LookupGPU(name)
		if err != nil {
			return err
		}
		fp8 := "-"
		if g.TFlopsFP8 > 0 {
			fp8 = fmt.Sprintf("%g", g.TFlopsFP8)
		}
		fmt.Fprintf(tw, "%s\t%g\t%s\t%g\t%g\t%s\t\n", name, g.TFlopsPeak, fp8, g.MemoryGiB, g.BwPeakTBs, g.Interconnect())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n--gpu takes a name above; --hardware-file FILE adds others (hardware_config.json format).")
	return err
}

// FlagChoices are the values shell completion offers for the deployment
// flags that take one of a known set: the embedded models and GPUs.
func FlagChoices() map[string][]string {
	return map[string][]string{"model": latency.KnownModels(), "gpu": latency.KnownGPUs()}
}
