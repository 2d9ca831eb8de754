package latency

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"servesim/internal/infile"
)

// GPU holds one accelerator's specification as hardware_config.json gives it
// (docs/simulator.md §8.2).
type GPU struct {
	Name       string  // key in the hardware file, e.g. "H100"
	TFlopsPeak float64 // dense 16-bit peak, 10¹² FLOP/s
	TFlopsFP8  float64 // FP8 peak, 10¹² FLOP/s; 0 = no FP8
	BwPeakTBs  float64 // HBM bandwidth, 10¹² bytes/s
	MfuPrefill float64 // model FLOP utilisation reached by prefill (roofline only)
	MfuDecode  float64 // model FLOP utilisation reached by decode (roofline only)
	MemoryGiB  float64 // HBM per GPU, GiB (KV capacity only)
	// LinkGBs is the interconnect bandwidth per direction, GB/s (physics
	// model at TP > 1); 0 = the built-in figure for the GPU's name (ours:
	// BLIS's hardware file has no such key).
	LinkGBs float64
}

// gpuFamily is what the hardware file does not say about a GPU and the
// physics model needs: whether vLLM runs FlashAttention 3 on it (the Hopper
// generation), its interconnect bandwidth per direction, GB/s, and whether
// that interconnect is NVLink.
type gpuFamily struct {
	hopper  bool
	linkGBs float64
	nvlink  bool
}

// family classifies a GPU by its name, the one place that does: NVLink 5
// on the Blackwell data-centre parts (900 GB/s a direction), NVLink 4 on
// the Hopper ones (450 GB/s; the export H800 has 200), NVLink 3 on the
// A100 (300 GB/s); a card named PCIe (H100 PCIe, A100 PCIE) talks over its
// host link, PCIe 5.0 x16 (64 GB/s) on Hopper, 4.0 (32 GB/s) before; the
// rest PCIe 4.0 x16 (32 GB/s), also between GH200 superchips, which stand
// alone outside an NVLink rack.
func (g GPU) family() gpuFamily {
	n := strings.ToUpper(g.Name)
	pcie := strings.Contains(n, "PCIE")
	switch {
	case strings.HasPrefix(n, "B100"), strings.HasPrefix(n, "B200"), strings.HasPrefix(n, "GB200"):
		return gpuFamily{linkGBs: 900, nvlink: true}
	case pcie && strings.HasPrefix(n, "H"):
		return gpuFamily{hopper: true, linkGBs: 64}
	case pcie:
		return gpuFamily{linkGBs: 32}
	case strings.HasPrefix(n, "H100"), strings.HasPrefix(n, "H200"), strings.HasPrefix(n, "H20"):
		return gpuFamily{hopper: true, linkGBs: 450, nvlink: true}
	case strings.HasPrefix(n, "H800"):
		return gpuFamily{hopper: true, linkGBs: 200, nvlink: true}
	case strings.HasPrefix(n, "GH200"):
		return gpuFamily{hopper: true, linkGBs: 32}
	case strings.HasPrefix(n, "A100"):
		return gpuFamily{linkGBs: 300, nvlink: true}
	}
	return gpuFamily{linkGBs: 32}
}

// linkGBs is the interconnect bandwidth per direction, GB/s: the hardware
// file's LinkGBs, else the figure for the GPU's family.
func (g GPU) linkGBs() float64 {
	if g.LinkGBs > 0 {
		return g.LinkGBs
	}
	return g.family().linkGBs
}

// Interconnect names the link between a GPU and the others of its TP or
// DP group and its bandwidth per direction: "NVLink 450 GB/s", "PCIe 32
// GB/s".
func (g GPU) Interconnect() string {
	kind := "NVLink"
	if g.overPCIe() {
		kind = "PCIe"
	}
	return fmt.Sprintf("%s %g GB/s", kind, g.linkGBs())
}

// pcieX16Gen5GBs is PCIe 5.0 x16's bandwidth per direction, GB/s: the
// fastest host link a GPU has; a faster interconnect is NVLink.
const pcieX16Gen5GBs = 64

// overPCIe reports whether the GPUs of a TP or DP group talk over PCIe
// (no NVLink): when the hardware file gives the link, a link no faster
// than PCIe 5.0 x16; else a family without NVLink.
func (g GPU) overPCIe() bool {
	if g.LinkGBs > 0 {
		return g.LinkGBs <= pcieX16Gen5GBs
	}
	return !g.family().nvlink
}

// gpuJSON is the on-disk shape of one entry. Keys starting with "_" are
// comments; any other unknown key is an error, so typos cannot pass silently.
type gpuJSON struct {
	TFlopsPeak *float64 `json:"TFlopsPeak"`
	TFlopsFP8  *float64 `json:"TFlopsFP8"`
	BwPeakTBs  *float64 `json:"BwPeakTBs"`
	MfuPrefill *float64 `json:"mfuPrefill"`
	MfuDecode  *float64 `json:"mfuDecode"`
	MemoryGiB  *float64 `json:"MemoryGiB"`
	LinkGBs    *float64 `json:"LinkGBs"`
}

// ParseGPUs parses a hardware JSON: either an object mapping GPU names to
// specifications (the hardware_config.json format) or a single specification
// object, which takes the name single. The result is sorted by name.
func ParseGPUs(single string, data []byte) ([]GPU, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("hardware config: invalid JSON: %w", err)
	}
	if _, ok := top["TFlopsPeak"]; ok {
		g, err := parseGPU(single, top)
		if err != nil {
			return nil, err
		}
		return []GPU{g}, nil
	}
	out := make([]GPU, 0, len(top))
	for name, msg := range top {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(msg, &fields); err != nil {
			return nil, fmt.Errorf("hardware config: %s: not an object: %w", name, err)
		}
		g, err := parseGPU(name, fields)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hardware config: no GPU entries")
	}
	slices.SortFunc(out, func(a, b GPU) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func parseGPU(name string, fields map[string]json.RawMessage) (GPU, error) {
	var keys []string
	for k := range fields {
		if !strings.HasPrefix(k, "_") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var j gpuJSON
	for _, k := range keys {
		var dst **float64
		switch k {
		case "TFlopsPeak":
			dst = &j.TFlopsPeak
		case "TFlopsFP8":
			dst = &j.TFlopsFP8
		case "BwPeakTBs":
			dst = &j.BwPeakTBs
		case "mfuPrefill":
			dst = &j.MfuPrefill
		case "mfuDecode":
			dst = &j.MfuDecode
		case "MemoryGiB":
			dst = &j.MemoryGiB
		case "LinkGBs":
			dst = &j.LinkGBs
		default:
			return GPU{}, fmt.Errorf("hardware config: %s: unknown key %q (known: TFlopsPeak, TFlopsFP8, BwPeakTBs, mfuPrefill, mfuDecode, MemoryGiB, LinkGBs)", name, k)
		}
		var v float64
		if err := json.Unmarshal(fields[k], &v); err != nil {
			return GPU{}, fmt.Errorf("hardware config: %s: %s: not a number", name, k)
		}
		*dst = &v
	}
	get := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	g := GPU{Name: name, TFlopsPeak: get(j.TFlopsPeak), TFlopsFP8: get(j.TFlopsFP8), BwPeakTBs: get(j.BwPeakTBs),
		MfuPrefill: get(j.MfuPrefill), MfuDecode: get(j.MfuDecode), MemoryGiB: get(j.MemoryGiB), LinkGBs: get(j.LinkGBs)}
	if err := g.validate(); err != nil {
		return GPU{}, fmt.Errorf("hardware config: %w", err)
	}
	return g, nil
}

// validate checks what every model needs: positive peak FLOP/s and bandwidth,
// and finite, non-negative other fields (0 means "not given").
func (g GPU) validate() error {
	if !positive(g.TFlopsPeak) {
		return fmt.Errorf("gpu %s: TFlopsPeak must be a positive number, got %v", g.Name, g.TFlopsPeak)
	}
	if !positive(g.BwPeakTBs) {
		return fmt.Errorf("gpu %s: BwPeakTBs must be a positive number, got %v", g.Name, g.BwPeakTBs)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"TFlopsFP8", g.TFlopsFP8}, {"mfuPrefill", g.MfuPrefill}, {"mfuDecode", g.MfuDecode}, {"MemoryGiB", g.MemoryGiB}, {"LinkGBs", g.LinkGBs}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("gpu %s: %s must be a finite non-negative number, got %v", g.Name, f.name, f.v)
		}
	}
	return nil
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// LoadGPU reads a hardware JSON file (see [ParseGPUs]) and returns the GPU
// called name (case-insensitive). name may be empty when the file holds one
// GPU.
func LoadGPU(path, name string) (GPU, error) {
	data, err := infile.ReadFile(path, infile.ConfigBytes)
	if err != nil {
		return GPU{}, fmt.Errorf("hardware config: %w", err)
	}
	single := name
	if single == "" {
		single = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	gpus, err := ParseGPUs(single, data)
	if err != nil {
		return GPU{}, fmt.Errorf("%s: %w", path, err)
	}
	if name == "" {
		if len(gpus) == 1 {
			return gpus[0], nil
		}
		return GPU{}, fmt.Errorf("%s: holds %d GPUs (%s); name one", path, len(gpus), gpuNames(gpus))
	}
	if g, ok := findGPU(gpus, name); ok {
		return g, nil
	}
	return GPU{}, fmt.Errorf("%s: unknown GPU %q; this file has: %s", path, name, gpuNames(gpus))
}

func findGPU(gpus []GPU, name string) (GPU, bool) {
	for _, g := range gpus {
		if strings.EqualFold(g.Name, name) {
			return g, true
		}
	}
	return GPU{}, false
}

func gpuNames(gpus []GPU) string {
	names := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}
