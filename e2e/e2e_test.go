package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"servesim/internal/testkit/gguf"
	"servesim/internal/tracev2"
)

// The served model and the server's settings. The deployment YAML the
// simulator gets (deploymentYAML) describes exactly these.
const (
	modelName  = "servesim-tiny"
	numCtx     = 8192 // per-slot context; observe's 1000-word calibration prompt (~4,400 tokens) must fit
	slots      = 4    // OLLAMA_NUM_PARALLEL
	chunkLimit = 512  // the runner's num_batch: prompt tokens per slot per step
	seed       = "7"
	perLevel   = 40 // requests per observe run
)

// workload is the request shape of every run: prompts short enough that
// prefill stays close to linear in its length, outputs long enough that E2E
// is mostly decode. Every request runs to its max_tokens (the model can
// never sample EOS), so the output length is the workload's.
var workload = []string{
	"--seed", seed,
	"--prompt-tokens", "128", "--prompt-tokens-stdev", "64", "--prompt-tokens-min", "16", "--prompt-tokens-max", "320",
	"--output-tokens", "64", "--output-tokens-stdev", "16", "--output-tokens-min", "32", "--output-tokens-max", "96",
	"--streaming",
}

// modelfile is the server-side model: the prompt is sent as is (prompt
// tokens = bytes), one compute thread (two threads on two cores make the
// step time bimodal), the context above.
func modelfile(gguf string) string {
	return fmt.Sprintf("FROM %s\nTEMPLATE \"\"\"{{ .Prompt }}\"\"\"\nPARAMETER num_thread 1\nPARAMETER num_ctx %d\n", gguf, numCtx)
}

// hfConfig is the model's shape as a HuggingFace config.json, for the
// simulator's model loader.
func hfConfig(cfg gguf.LlamaConfig) string {
	return fmt.Sprintf(`{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":%d,`+
		`"num_hidden_layers":%d,"num_attention_heads":%d,"num_key_value_heads":%d,"intermediate_size":%d,`+
		`"vocab_size":%d,"max_position_embeddings":%d,"torch_dtype":"float32","tie_word_embeddings":false,`+
		`"hidden_act":"silu","rms_norm_eps":1e-05,"rope_theta":10000.0}`+"\n",
		cfg.Embed, cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.FFN, gguf.VocabSize, cfg.Context)
}

// deploymentYAML describes the server to the simulator: 4 slots
// (max_num_seqs), prefill chunked per request at 512 tokens, at most 4 × 512
// tokens a step, a KV cache of 4 × num_ctx tokens, each request capped at
// num_ctx. Blackbox latency model: step time = β₀ + β₁·prefill tokens +
// β₂·decode tokens, which is what one CPU thread running these small
// matrices does (the prefill curve bends only past the prompts used here).
func deploymentYAML(configPath string) string {
	return fmt.Sprintf(`model: %s
total_kv_blocks: %d
block_size: 16
max_model_len: %d
max_num_seqs: %d
max_num_batched_tokens: %d
long_prefill_token_threshold: %d
latency_model: blackbox
`, configPath, slots*numCtx/16, numCtx, slots, slots*chunkLimit, chunkLimit)
}

// level is one observe run.
// capUsers is the capped client's limit on requests in flight: more than
// the server's slots, so the server queues too.
const capUsers = 6

type level struct {
	name string
	args []string
	loop string // closed or open: how replay injects its rows
}

func TestOllamaLoop(t *testing.T) {
	s := loadSetup(t)
	began := time.Now()
	scratch := t.TempDir()

	// The model, its Modelfile and its HuggingFace twin.
	cfg := gguf.DefaultLlama()
	cfg.Context = numCtx
	f, err := gguf.NewLlama(cfg)
	if err != nil {
		t.Fatal(err)
	}
	modelPath := filepath.Join(scratch, "model.gguf")
	mf, err := os.Create(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := gguf.Write(mf, f); err != nil {
		t.Fatal(err)
	}
	if err := mf.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(scratch, "Modelfile"), modelfile(modelPath))
	configPath := filepath.Join(s.out, "config.json")
	writeFile(t, configPath, hfConfig(cfg))
	deployPath := filepath.Join(s.out, "ollama-deployment.yaml")
	writeFile(t, deployPath, deploymentYAML(configPath))

	srv := startOllama(t, s.ollama, scratch, filepath.Join(s.out, "ollama.log"), filepath.Join(s.out, "ollama.pid"))
	srv.create(t, modelName, filepath.Join(scratch, "Modelfile"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Load the model once, so no run pays for it.
	if code, body, err := srv.post(ctx, "/api/generate", `{"model":"`+modelName+`","prompt":"warm","stream":false,"options":{"num_predict":4}}`); err != nil || code != 200 {
		t.Fatalf("load model: %d %v %s", code, err, body)
	}
	t.Logf("server up and model loaded after %.1f s", time.Since(began).Seconds())

	t.Run("quirks", func(t *testing.T) { testQuirks(t, s, srv) })

	var probe prefillProbe
	t.Run("prefill", func(t *testing.T) {
		p, err := probePrefill(ctx, srv.url(), modelName, 4*chunkLimit)
		if err != nil {
			t.Fatal(err)
		}
		probe = p
		t.Logf("B's %d-token prefill: %d long gaps in A's stream (A's median gap %.2f ms; gaps %v ms); B's TTFT %.0f ms",
			4*chunkLimit, p.LongGaps, p.MedianGapMs, p.GapsMs, p.BTTFTMs)
		// Unchunked, the prefill is one step and A sees one long gap.
		if p.LongGaps < 3 || p.LongGaps > 6 {
			t.Errorf("long gaps = %d, want about %d (prefill chunked at %d tokens per step)", p.LongGaps, 4, chunkLimit)
		}
	})

	// The load levels. The open-loop rate is half the capacity measured at
	// 4 users: at 70% the Poisson run was near its own saturation, where
	// queueing multiplies every error of the step time (measured 26–63%
	// held-out E2E MAPE then). Every level runs twice,
	// the second time after all the others: the same requests sent again
	// measure the server's own noise at that level, the floor of any
	// prediction (grade_test.go).
	obs := func(l level) *run {
		prefix := filepath.Join(s.out, l.name)
		args := append([]string{"--url", srv.url(), "--model", modelName, "--record-itl", "--quiet",
			"--no-self-test", "--request-timeout", "60s", "-n", strconv.Itoa(perLevel), "--trace-output", prefix}, workload...)
		s.mustTool(t, 3*time.Minute, l.name+".observe.log", "observe", append(args, l.args...)...)
		return loadRun(t, l.name, prefix)
	}
	// One measurement of the loop: observe every level and its repeat, fit,
	// grade. The grading assumes the server keeps its speed through the
	// loop; on a shared host it may not (a fit level's repeat measured 37–48%
	// off its first run in two CI runs, and every held-out run then failed
	// its bound by as much). Such a loop is measured again once.
	var (
		rows     []gradeRow
		noise    map[string]levelNoise
		runs     map[string]*run
		capacity float64
		rate     string
		// capNoClient is the capped run's held-out E2E MAPE when replayed
		// at its recorded sends without its client (the summary compares).
		capNoClient float64
	)
	measure := func() {
		levels := []level{
			{"c1", []string{"--concurrency", "1"}, "closed"},
			{"c2", []string{"--concurrency", "2"}, "closed"},
			{"c4", []string{"--concurrency", "4"}, "closed"},
			{"c8", []string{"--concurrency", "8"}, "closed"},
		}
		runs = map[string]*run{}
		for _, l := range levels {
			runs[l.name] = obs(l)
		}
		c4 := runs["c4"].trace.Records
		span := float64(c4[len(c4)-1].LastChunkTimeUs-c4[0].SendTimeUs) / 1e6
		capacity = float64(len(c4)) / span
		openRate := 0.5 * capacity
		open := level{"open", []string{"--rate", strconv.FormatFloat(math.Round(openRate*10)/10, 'f', 1, 64), "--arrival", "poisson"}, "open"}
		levels = append(levels, open)
		runs["open"] = obs(open)
		// A capped client past the server's capacity: requests offered at
		// twice the capacity, at most capUsers in flight, so the run turns
		// into a closed loop whose sends follow completions. Its header
		// states the cap, and replay models that client.
		capped := level{"cap", []string{"--rate", strconv.FormatFloat(math.Round(2*capacity*10)/10, 'f', 1, 64), "--arrival", "poisson",
			"--max-concurrency", strconv.Itoa(capUsers)}, "open"}
		levels = append(levels, capped)
		runs["cap"] = obs(capped)
		for _, l := range levels[:6] {
			r := level{l.name + repeatSuffix, l.args, l.loop}
			levels = append(levels, r)
			runs[r.name] = obs(r)
		}
		t.Logf("capacity at 4 users %.2f req/s; open loop at %s req/s", capacity, open.args[1])

		// Fit on c1 and c4 (one slot busy; all four busy with prefills mixed
		// in), closed loop as replay grades them; every other run is held out.
		// α₁ (queue delay per prompt token) stays 0: the server's work per
		// prompt token outside the step is a byte tokenizer's, microseconds,
		// and at c1 α₁·P and β₁·P add up alike. Left free, the fit moved half
		// the prefill cost there in one loop of four (α₁ 199 µs, β₁ 150 µs per
		// token) and predicted c2 and c8 30% fast; held, the mean held-out E2E
		// MAPE of four loops' data was 17.7% against 18.8% free.
		train := filepath.Join(s.out, "train")
		mergeRuns(t, train, 3_000_000, runs["c1"], runs["c4"])
		fitted := filepath.Join(s.out, "fitted-deployment.yaml")
		alpha, beta := startCoefficients(t, runs["c1"], runs["c4"])
		t.Logf("fit starts from alpha %s, beta %s (read off c1 and c4)", alpha, beta)
		s.mustTool(t, 3*time.Minute, "fit.log", "calibrate", "fit", train+".csv", "--deployment", deployPath,
			"--alpha-coeffs", alpha, "--beta-coeffs", beta, "--session-mode", "closed-loop", "--hold-alpha", "1", "-o", fitted)

		rows = nil
		for _, l := range levels {
			rows = append(rows, grade(t, s, l, fitted, l.name == "c1" || l.name == "c4"))
		}
		capNoClient = gradeWithoutClient(t, s, capped, fitted)
		noise = map[string]levelNoise{}
		for _, l := range levels[:6] {
			noise[l.name] = repeatNoise(t, runs[l.name], runs[l.name+repeatSuffix])
		}
		rate = open.args[1]
	}
	for attempt := 1; ; attempt++ {
		measure()
		d := drift(rows, fitLevels()...)
		fails, _, assessed := heldOutVerdicts(rows, noise)
		if (d <= maxDrift && assessed >= minAssessed && len(fails) == 0) || attempt == 2 {
			t.Logf("the server's speed at the fit levels moved %.0f%% between a run and its repeat; %d held-out runs assessable", 100*d, assessed)
			break
		}
		// One more loop when the host disturbed this one, or when a run
		// missed its bound: on a shared 2-core host one loop in a few has
		// a burst of load that no bound on a single loop tells from a
		// simulator error; a simulator at fault misses it in both loops.
		t.Logf("the server's speed at the fit levels moved %.0f%% between a run and its repeat (at most %.0f%% wanted), %d held-out runs assessable (at least %d wanted), %d over their bound %q: measuring the loop again",
			100*d, 100*maxDrift, assessed, minAssessed, len(fails), fails)
	}
	t.Run("structure", func(t *testing.T) { checkStructure(t, s, runs) })
	t.Run("steps", func(t *testing.T) { stepTable(t, s) })
	t.Run("compare", func(t *testing.T) { checkCompare(t, s) })
	t.Run("verify", func(t *testing.T) { checkVerify(t, s, srv) })
	writeSummary(t, s, rows, noise, probe, capacity, rate, capNoClient, time.Since(began))
	checkHeldOut(t, rows, noise)
}

// stepTable reads the engine steps of the c4 run (all four slots busy)
// out of its chunk times and sets the fitted model's step times beside them
// (calibrate steps), into steps.md beside the summary: the real server's
// steps by type, the check of a step model the per-request grades cannot
// give.
//
// A step is placed only where every token of a request reached the client
// in its own read; on a busy host the client sometimes reads two tokens at
// once, so the busiest runs are tried in turn (c4, its repeat, c8) and one
// of them must show decode steps.
func stepTable(t *testing.T, s setup) {
	var tried []string
	for _, run := range []string{"c4", "c4" + repeatSuffix, "c8"} {
		out := filepath.Join(s.out, "steps.md")
		s.mustTool(t, time.Minute, "steps.log", "calibrate", "steps", filepath.Join(s.out, run+".csv"),
			"--deployment", filepath.Join(s.out, "fitted-deployment.yaml"), "--format", "markdown", "-o", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "decode") {
			t.Logf("engine steps of %s against the fitted model:\n%s", run, b)
			return
		}
		tried = append(tried, run+":\n"+string(b))
	}
	t.Errorf("no run shows decode steps:\n%s", strings.Join(tried, "\n"))
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startCoefficients are the fit's starting point, read off two runs in
// which the batch is known. At one user every decode step holds one token,
// so the median token gap g₁ = β₀ + β₂; at four users (all slots busy) it
// holds four, g₄ = β₀ + 4β₂. A first token comes after the pre-queue delay
// and one prefill step, so TTFT = α₀ + β₀ + β₁·P: β₁ is the slope between
// the medians of the shorter and the longer half of c1's prompts, α₀ what
// is left of the short half's TTFT. Medians, because a busy machine adds
// stalls of tens of milliseconds to a few requests.
func startCoefficients(t *testing.T, c1, c4 *run) (alpha, beta string) {
	t.Helper()
	g1 := median(t, c1.tokenGapsMs()) * 1000
	g4 := median(t, c4.tokenGapsMs()) * 1000
	b2 := math.Max((g4-g1)/3, 1)
	b0 := math.Max(g1-b2, 0)
	recs := slices.Clone(c1.trace.Records)
	slices.SortFunc(recs, func(a, b tracev2.Record) int { return a.ServerInputTokens - b.ServerInputTokens })
	half := len(recs) / 2
	var ps, ts, pl, tl []float64
	for i := range recs {
		p, ttft := float64(recs[i].ServerInputTokens), ttftMs(&recs[i])*1000
		if i < half {
			ps, ts = append(ps, p), append(ts, ttft)
		} else {
			pl, tl = append(pl, p), append(tl, ttft)
		}
	}
	mps, mts, mpl, mtl := median(t, ps), median(t, ts), median(t, pl), median(t, tl)
	b1 := math.Max((mtl-mts)/math.Max(mpl-mps, 1), 1)
	a0 := math.Max(mts-b0-b1*mps, 0)
	return fmt.Sprintf("%.0f,0,0", a0), fmt.Sprintf("%.0f,%.1f,%.0f", b0, b1, b2)
}
