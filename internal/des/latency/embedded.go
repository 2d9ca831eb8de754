package latency

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"servesim/internal/suggest"
)

// embedded holds the model configs (BLIS's, Apache-2.0, and others
// transcribed from their publishers' config.json) and the GPU table; see
// data/PROVENANCE.md. It is read-only.
//
//go:embed data/hardware_config.json data/models/*.json data/LICENSE data/PROVENANCE.md
var embedded embed.FS

// KnownModels lists the embedded model names, sorted.
func KnownModels() []string {
	entries, err := fs.ReadDir(embedded, "data/models")
	if err != nil {
		return nil // cannot happen: the directory is embedded at build time
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.Sort(names)
	return names
}

// KnownGPUs lists the embedded GPU names, sorted.
func KnownGPUs() []string {
	gpus, err := embeddedGPUs()
	if err != nil {
		return nil
	}
	names := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = g.Name
	}
	return names
}

func embeddedGPUs() ([]GPU, error) {
	data, err := embedded.ReadFile("data/hardware_config.json")
	if err != nil {
		return nil, fmt.Errorf("embedded hardware config: %w", err)
	}
	return ParseGPUs("", data)
}

// CanonicalModelName maps a model reference to the embedded naming: the part
// after the last "/" (so HuggingFace ids like "Qwen/Qwen3-14B" work),
// lower-cased, through the aliases people type ("llama-2-70b" is
// "llama-2-70b-chat-hf", see [ModelAliases]), with a leading "meta-" dropped
// when that names a known model ("Meta-Llama-3.1-8B-Instruct"). A name it
// does not know comes back lower-cased.
func CanonicalModelName(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimSuffix(n, "/")
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	known, aliases := KnownModels(), ModelAliases()
	for _, c := range []string{n, strings.TrimPrefix(n, "meta-")} {
		if slices.Contains(known, c) {
			return c
		}
		if a, ok := aliases[c]; ok {
			return a
		}
	}
	return n
}

// ModelAliases maps the other names people type for an embedded model to
// its embedded name: the short name without "-instruct", "-chat-hf" or
// "-it", and the base model of an embedded chat or instruct model whose
// config.json states the same architecture (same layers, widths, heads,
// vocabulary and context).
func ModelAliases() map[string]string {
	return map[string]string{
		"llama-2-7b": "llama-2-7b-hf", "llama-2-7b-chat": "llama-2-7b-chat-hf",
		"llama-2-13b": "llama-2-13b-chat-hf", "llama-2-13b-hf": "llama-2-13b-chat-hf", "llama-2-13b-chat": "llama-2-13b-chat-hf",
		"llama-2-70b": "llama-2-70b-chat-hf", "llama-2-70b-hf": "llama-2-70b-chat-hf", "llama-2-70b-chat": "llama-2-70b-chat-hf",
		"llama-3-8b": "llama-3-8b-instruct", "llama-3-70b": "llama-3-70b-instruct",
		"llama-3.1-8b": "llama-3.1-8b-instruct", "llama-3.1-70b": "llama-3.1-70b-instruct",
		"llama-3.2-1b": "llama-3.2-1b-instruct", "llama-3.2-3b": "llama-3.2-3b-instruct",
		"llama-3.3-70b": "llama-3.3-70b-instruct",
		"qwen2.5-7b":    "qwen2.5-7b-instruct", "qwen2.5-14b": "qwen2.5-14b-instruct",
		"qwen2.5-32b": "qwen2.5-32b-instruct", "qwen2.5-72b": "qwen2.5-72b-instruct",
		"mistral-7b-instruct": "mistral-7b-instruct-v0.3", "mistral-7b-v0.3": "mistral-7b-instruct-v0.3",
		"mixtral-8x7b": "mixtral-8x7b-v0.1", "mixtral-8x7b-instruct": "mixtral-8x7b-instruct-v0.1",
		"mixtral-8x22b": "mixtral-8x22b-v0.1", "mixtral-8x22b-instruct": "mixtral-8x22b-instruct-v0.1",
		"gemma-2-9b": "gemma-2-9b-it", "gemma-2-27b": "gemma-2-27b-it",
		"deepseek-v2-lite-chat": "deepseek-v2-lite",
		// Fine-tunes and earlier releases of an embedded architecture
		// (Mistral 7B v0.1/v0.2 differ from v0.3 only in a 768-token
		// smaller vocabulary).
		"codellama-34b-hf": "codellama-34b-instruct-hf", "codellama-34b-python-hf": "codellama-34b-instruct-hf",
		"mistral-7b-instruct-v0.1": "mistral-7b-instruct-v0.3", "mistral-7b-instruct-v0.2": "mistral-7b-instruct-v0.3",
		"mistral-7b-v0.1": "mistral-7b-instruct-v0.3",
		"yi-34b-chat":     "yi-34b", "yi-1.5-34b": "yi-34b", "yi-1.5-34b-chat": "yi-34b",
		"qwen3-30b-a3b-instruct-2507": "qwen3-30b-a3b", "qwen3-30b-a3b-thinking-2507": "qwen3-30b-a3b",
		"vicuna-7b-v1.5": "llama-2-7b-hf", "vicuna-13b-v1.5": "llama-2-13b-chat-hf",
	}
}

// fp8Suffixes name a checkpoint whose weights are stored in 8-bit floats:
// the architecture of the name without the suffix, one byte a weight.
func fp8Suffixes() []string { return []string{"-fp8-dynamic", "-fp8"} }

// LookupModel returns the embedded config of a model by name
// (case-insensitive; HuggingFace ids accepted, see [CanonicalModelName]).
// An unknown name gives an error that lists the known models and says how to
// pass a config file instead.
func LookupModel(name string) (*ModelConfig, error) {
	canon := CanonicalModelName(name)
	known := KnownModels()
	if canon != "" && !slices.Contains(known, canon) {
		for _, suf := range fp8Suffixes() {
			if base, ok := strings.CutSuffix(canon, suf); ok && base != "" {
				if mc, err := LookupModel(base); err == nil {
					mc.Name, mc.WeightBytes = canon, 1
					return mc, nil
				}
			}
		}
	}
	if canon == "" || !slices.Contains(known, canon) {
		return nil, unknownModel(name, canon, known)
	}
	data, err := embedded.ReadFile(path.Join("data/models", canon+".json"))
	if err != nil {
		return nil, fmt.Errorf("embedded model %s: %w", canon, err)
	}
	mc, err := ParseModelConfig(canon, data)
	if err != nil {
		return nil, fmt.Errorf("embedded model %s: %w", canon, err)
	}
	return mc, nil
}

// LookupGPU returns an embedded GPU by name (case-insensitive): H100,
// A100-SXM (alias A100-80), L40S. An unknown name gives an error that lists
// the known GPUs and says how to pass a hardware file instead.
func LookupGPU(name string) (GPU, error) {
	gpus, err := embeddedGPUs()
	if err != nil {
		return GPU{}, err
	}
	if g, ok := findGPU(gpus, strings.TrimSpace(name)); ok {
		return g, nil
	}
	// Names match without regard to case: suggest among lower-case ones,
	// name the GPU as it is spelled.
	spelled := map[string]string{}
	for _, g := range gpus {
		spelled[strings.ToLower(g.Name)] = g.Name
	}
	hint := ""
	if s := suggest.Closest(strings.ToLower(strings.TrimSpace(name)), slices.Collect(maps.Keys(spelled))); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", spelled[s])
	}
	return GPU{}, fmt.Errorf("unknown GPU %q%s; known GPUs: %s; for another GPU pass a hardware JSON file with TFlopsPeak, TFlopsFP8, BwPeakTBs, mfuPrefill, mfuDecode and MemoryGiB",
		name, hint, gpuNames(gpus))
}

// maxNear is how many resembling names an unknown-model error lists.
const maxNear = 6

// unknownModel is the error for a model name typed that canonicalises to
// canon and is not embedded: the names (embedded and aliases) that resemble
// it (suggest.Near), led by a "did you mean" when the nearest of those is
// also a typo of it (suggest.Closest); all the embedded models when none
// resembles it.
func unknownModel(typed, canon string, known []string) error {
	names := slices.Concat(known, slices.Collect(maps.Keys(ModelAliases())))
	near := suggest.Near(canon, names, maxNear)
	list := "known models: " + strings.Join(known, ", ")
	hint := ""
	if len(near) > 0 {
		list = fmt.Sprintf("known models near it: %s (%d in all: --list-models)", strings.Join(near, ", "), len(known))
		if suggest.Closest(canon, names) == near[0] {
			hint = fmt.Sprintf(" (did you mean %q?)", near[0])
		}
	}
	return fmt.Errorf("unknown model %q%s; %s; for another model pass the path to its HuggingFace config.json (or to the directory holding it) instead of a name",
		typed, hint, list)
}

// ResolveModel accepts what a user types for a model: an existing file, or a
// directory holding config.json, is loaded as a HuggingFace config
// ([LoadModelConfig]); anything else is looked up among the embedded models
// ([LookupModel]).
func ResolveModel(ref string) (*ModelConfig, error) {
	if ref == "" {
		return nil, errors.New("no model given; known models: " + strings.Join(KnownModels(), ", "))
	}
	if st, err := os.Stat(ref); err == nil {
		if !st.IsDir() {
			return LoadModelConfig(ref)
		}
		if _, err := os.Stat(filepath.Join(ref, "config.json")); err == nil {
			return LoadModelConfig(ref)
		}
	}
	if strings.HasSuffix(strings.ToLower(ref), ".json") {
		return nil, fmt.Errorf("model config file %q does not exist", ref)
	}
	return LookupModel(ref)
}

// ResolveGPU accepts what a user types for a GPU. With a hardware file, the
// GPU is looked up in it ([LoadGPU]; name may be empty if the file holds one
// GPU). Without one, an existing file named by name is loaded as a hardware
// JSON holding one GPU; anything else is looked up among the embedded GPUs.
func ResolveGPU(name, hardwareFile string) (GPU, error) {
	if hardwareFile != "" {
		return LoadGPU(hardwareFile, name)
	}
	if name == "" {
		return GPU{}, errors.New("no GPU given; known GPUs: " + strings.Join(KnownGPUs(), ", "))
	}
	if st, err := os.Stat(name); err == nil && !st.IsDir() {
		return LoadGPU(name, "")
	}
	return LookupGPU(name)
}
