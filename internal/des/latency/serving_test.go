package latency

import "testing"

// TestFP8AndFineTuneNames: an FP8 checkpoint of an embedded model is its
// architecture at one byte a weight; a fine-tune of an embedded
// architecture is that architecture; anything else stays unknown.
func TestFP8AndFineTuneNames(t *testing.T) {
	base, err := LookupModel("Qwen/Qwen3-14B")
	if err != nil {
		t.Fatal(err)
	}
	fp8, err := LookupModel("Qwen/Qwen3-14B-FP8")
	if err != nil || fp8.WeightBytes != 1 || fp8.Layers != base.Layers || fp8.Hidden != base.Hidden || fp8.DtypeBytes != base.DtypeBytes {
		t.Errorf("Qwen3-14B-FP8: %+v, %v; want Qwen3-14B at one byte a weight", fp8, err)
	}
	for name, want := range map[string]string{
		"codellama/CodeLlama-34b-hf": "codellama-34b-instruct-hf", "mistralai/Mistral-7B-Instruct-v0.2": "mistral-7b-instruct-v0.3",
		"01-ai/Yi-34B-Chat": "yi-34b", "Qwen/Qwen3-30B-A3B-Instruct-2507": "qwen3-30b-a3b", "lmsys/vicuna-7b-v1.5": "llama-2-7b-hf",
	} {
		if m, err := LookupModel(name); err != nil || m.Name != want {
			t.Errorf("%s: %v, %v; want %s", name, m, err, want)
		}
	}
	for _, name := range []string{"foo-fp8", "-fp8", "gpt-5"} {
		if _, err := LookupModel(name); err == nil {
			t.Errorf("%s was found", name)
		}
	}
}
