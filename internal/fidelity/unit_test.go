package fidelity

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/fit"
	"servesim/internal/tracev2"
)

// TestDeployment derives the deployment of both meta.json layouts.
func TestDeployment(t *testing.T) {
	root := filepath.Join("testdata", "runs")
	dirs, err := FindRuns(root)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{RunName(root, dirs[0]), RunName(root, dirs[1])}
	if len(dirs) != 2 || !reflect.DeepEqual(names, []string{"RTX4090/Llama-3.1-8B", "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507"}) {
		t.Fatalf("runs %v", names)
	}
	type want struct {
		model, gpu                                  string
		tp, seqs, tokens, longPrefill, blocks, mlen int
		hardware                                    string
		warnings                                    int
	}
	tests := []want{
		// meta.json names the device and the KV blocks vLLM allocated.
		{"llama-3.1-8b-instruct", "RTX4090", 1, 256, 2048, 0, 2588, 32768, "RTX4090", 0},
		// Older layout: the GPU comes from the cluster config, the blocks
		// from memory; DP 2 is one lockstep instance with twice the limits
		// and a rank's budget as the chunk cap.
		{"qwen3-30b-a3b", "RTXPRO6000", 1, 256, 4096, 2048, 0, 0, "RTXPRO6000", 3},
	}
	for i, d := range dirs {
		r, err := LoadRun(names[i], d)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Records) != 5 || len(r.Scheduled) != 5 || r.Scheduled[0] <= 0 {
			t.Errorf("%s: %d records, scheduled %v", r.Name, len(r.Records), r.Scheduled)
		}
		cfg, warns, err := Deployment(r, pkgAssets())
		if err != nil {
			t.Fatal(err)
		}
		w := tests[i]
		got := want{cfg.Model, cfg.GPU, cfg.TP, cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens, cfg.LongPrefillTokenThreshold,
			cfg.TotalKVBlocks, cfg.MaxModelLen, r.Hardware, len(warns)}
		if got != w {
			t.Errorf("%s:\n got %+v\nwant %+v (warnings %q)", r.Name, got, w, warns)
		}
		if cfg.HardwareFile != "data/hardware.json" || cfg.BlockSize != 16 || cfg.GPUMemoryUtilization != 0.9 {
			t.Errorf("%s: hardware %q block %d util %v", r.Name, cfg.HardwareFile, cfg.BlockSize, cfg.GPUMemoryUtilization)
		}
		if _, err := deploy.Resolve(cfg); err != nil {
			t.Errorf("%s: %v", r.Name, err)
		}
	}
	// Qwen3-32B is embedded; a model that is not comes from the asset folder.
	if m, err := resolveModel("Qwen/Qwen3-32B", pkgAssets()); err != nil || m != "qwen3-32b" {
		t.Errorf("Qwen3-32B: %q, %v", m, err)
	}
	assets := Assets{ModelDir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(assets.ModelDir, "acme-7b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(assets.ModelDir, "acme-7b", "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := resolveModel("acme/Acme-7B", assets); err != nil || m != filepath.Join(assets.ModelDir, "acme-7b") {
		t.Errorf("a model of the asset folder: %q, %v", m, err)
	}
	if _, err := resolveModel("acme/unknown-7b", pkgAssets()); err == nil || !strings.Contains(err.Error(), "neither embedded") {
		t.Errorf("unknown model: %v", err)
	}
}

// TestHardwareFile: both GPUs load with their data-sheet figures.
func TestHardwareFile(t *testing.T) {
	for _, tt := range []struct {
		name           string
		peak, fp8, bw  float64
		memGiB, mfuMin float64
	}{{"RTX4090", 165.2, 330.3, 1.008, 23.52, 0.3}, {"RTXPRO6000", 500, 1000, 1.597, 95.59, 0.1}} {
		g, err := latency.ResolveGPU(tt.name, pkgAssets().HardwareFile)
		if err != nil {
			t.Fatal(err)
		}
		if g.TFlopsPeak != tt.peak || g.TFlopsFP8 != tt.fp8 || g.BwPeakTBs != tt.bw || g.MemoryGiB != tt.memGiB || g.MfuDecode < tt.mfuMin {
			t.Errorf("%s: %+v", tt.name, g)
		}
	}
}

// testModel is a physics model of Llama-3.1-8B on the RTX 4090 with known
// GPU coefficients (the host and link terms 0), used to make synthetic
// profiles and runs.
func testModel(t testing.TB, tp int) (*latency.Physics, *latency.ModelConfig, []float64) {
	t.Helper()
	mc, err := latency.LookupModel("llama-3.1-8b-instruct")
	if err != nil {
		t.Fatal(err)
	}
	g, err := latency.ResolveGPU("RTX4090", pkgAssets().HardwareFile)
	if err != nil {
		t.Fatal(err)
	}
	beta := make([]float64, latency.PhNumBetas)
	beta[latency.PhBwEff], beta[latency.PhFlopsEff], beta[latency.PhKnee] = 0.83, 0.61, 0.45
	beta[latency.PhAttnEff], beta[latency.PhKVEff], beta[latency.PhMixedKV], beta[latency.PhMixedKVWide] = 0.48, 0.7, 1.7, 2.5
	beta[latency.PhLayerUs], beta[latency.PhSeqUs] = 12, 6
	beta[latency.PhLinkEff] = 1
	k, err := latency.NewPhysics(latency.PhysicsConfig{Model: mc, GPU: g, TP: tp, Alpha: []float64{0, 0, 0}, Beta: beta})
	if err != nil {
		t.Fatal(err)
	}
	return k, mc, beta
}

// TestFitGPURecovers: a profile measured from a physics model is fitted
// back to the same coefficients (within the grid's 1% steps) and step
// times.
func TestFitGPURecovers(t *testing.T) {
	k, mc, beta := testModel(t, 1)
	L := float64(mc.Layers)
	ub, uf, kn := 1/beta[latency.PhBwEff], 1/beta[latency.PhFlopsEff], beta[latency.PhKnee]
	// The true model splits its floors between the dense ops and attention,
	// and between the sampler and attention's per-sequence work.
	const denseLayer, attnLayer, sampleSeq, attnSeq = 8, 4, 2, 4
	p := &fit.Profile{Dense: map[string][]fit.Point{}, PerSequence: map[string][]fit.Point{}}
	for _, tok := range []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048} {
		q := k.Quantities(&latency.Step{DecodeCount: int(tok)})
		p.Dense["qkv_proj"] = append(p.Dense["qkv_proj"], fit.Point{X: tok, Us: (latency.Knee(q.DenseW*ub, q.DenseF*uf, kn)+q.Elem*ub)/L + denseLayer})
		p.PerSequence["lm_head"] = append(p.PerSequence["lm_head"], fit.Point{X: tok, Us: latency.Knee(q.LMW*ub, q.LMF*uf, kn) + tok*sampleSeq})
	}
	for _, chunk := range []int{0, 16, 256, 2048} {
		for _, kvp := range []int{0, 1024} {
			for _, n := range []int{0, 1, 32, 128} {
				for _, kvd := range []int{128, 1024, 4096} {
					if chunk == 0 && n == 0 {
						continue
					}
					s := latency.Step{DecodeCount: n, DecodeContextSum: int64(n * kvd)}
					seqs := float64(n)
					if chunk > 0 {
						s.Prefill = []latency.PrefillWork{{NewTokens: chunk, Context: kvp, Target: kvp + chunk + 1}}
						seqs++
					}
					q := k.Quantities(&s)
					us := q.Attn/beta[latency.PhAttnEff] + (q.KV+beta[latency.PhMixedKV]*q.MixedKV+beta[latency.PhMixedKVWide]*q.MixedKVWide)/beta[latency.PhKVEff] +
						L*attnLayer + seqs*attnSeq
					p.Attention = append(p.Attention, fit.AttentionRow{Chunk: chunk, KVPrefill: kvp, NDecode: n, KVDecode: kvd, Us: us / L})
				}
			}
		}
	}
	gf, err := fit.Kernels(k, mc, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, st := range gf.Groups {
		if st.MaxRel > 0.02 {
			t.Errorf("group %s: max error %v at %s", name, st.MaxRel, st.WorstAt)
		}
	}
	for _, i := range []int{latency.PhBwEff, latency.PhFlopsEff, latency.PhKnee, latency.PhAttnEff, latency.PhKVEff, latency.PhMixedKV, latency.PhMixedKVWide} {
		if got, want := gf.Beta[i], beta[i]; math.Abs(got-want) > 0.03*want+0.01 {
			t.Errorf("%s: fitted %v, true %v", latency.PhysicsBetaNames()[i], got, want)
		}
	}
	if got := gf.Beta[latency.PhLayerUs]; math.Abs(got-(denseLayer+attnLayer)) > 1.5 {
		t.Errorf("layer floor: fitted %v µs, true %v", got, denseLayer+attnLayer)
	}
}

// syntheticCase is a 120-request run whose latencies come from the
// simulator itself under known universal coefficients.
func syntheticCase(t *testing.T, truth Universal) *Case {
	t.Helper()
	k, mc, beta := testModel(t, 1)
	_ = k
	cfg := deploy.Default()
	cfg.Model, cfg.GPU, cfg.HardwareFile = "llama-3.1-8b-instruct", "RTX4090", pkgAssets().HardwareFile
	cfg.LatencyModel, cfg.TotalKVBlocks, cfg.MaxNumSeqs = string(latency.KindPhysics), 3000, 64
	rng := rand.New(rand.NewPCG(9, 9))
	r := &Run{Name: "synthetic"}
	at := int64(0)
	for i := range 120 {
		at += int64(rng.ExpFloat64() * 150000)
		r.Records = append(r.Records, tracev2.Record{RequestID: int64(i), InputTokens: 100 + rng.IntN(1500),
			OutputTokens: 20 + rng.IntN(400), ArrivalTimeUs: at, SendTimeUs: at, Status: "ok"})
	}
	c := newCase(r, cfg, mc, &fit.KernelFit{Beta: beta})
	rp, err := c.simulate(context.Background(), truth)
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's own times in vLLM's terms play the measurement:
	// TTFT and E2E from the step in flight at arrival, the first schedule
	// when the batch was formed.
	r.Scheduled = make([]int64, len(r.Records))
	for _, s := range rp.sims {
		rec := &r.Records[s.RequestID]
		rec.FirstChunkTimeUs = rec.SendTimeUs + int64(s.TTFTUs)
		rec.LastChunkTimeUs = rec.SendTimeUs + int64(s.E2EUs)
		rec.NumChunks = rec.OutputTokens
		et := rp.rec.results[s.RequestID]
		q := rp.rec.queuedAt(et.arrival)
		r.Scheduled[s.RequestID] = rec.SendTimeUs + rp.rec.scheduledAt(et.firstSched, q) - q
	}
	r.KVPeak = rp.summary.KVUtilizationPeak
	return newCase(r, cfg, mc, &fit.KernelFit{Beta: beta})
}

// TestFitUniversalRecovers: latencies simulated under known host terms are
// fitted back from another start.
func TestFitUniversalRecovers(t *testing.T) {
	truth := Universal{HostStepUs: 900, HostSeqUs: 12, EagerLayerUs: 60}
	c := syntheticCase(t, truth)
	res, err := FitUniversal(context.Background(), []*Case{c}, FitOptions{Start: Universal{HostStepUs: 100}, Iterations: 12})
	if err != nil {
		t.Fatal(err)
	}
	if res.Objective > 0.01 || res.Objective >= res.Start {
		t.Errorf("objective %v (start %v), want below 1%%", res.Objective, res.Start)
	}
	t.Logf("objective %v from %v, fit %+v, per run %+v", res.Objective, res.Start, res.Universal, res.PerRun)
	// Per-step and per-request host time trade off at the run's typical
	// batch (about 40 requests); their sum there is what the run pins down.
	got := res.Universal.HostStepUs + 40*res.Universal.HostSeqUs
	if want := truth.HostStepUs + 40*truth.HostSeqUs; math.Abs(got-want) > 0.1*want {
		t.Errorf("host time at 40 requests %v µs, want %v (fit %+v)", got, want, res.Universal)
	}
}

// TestWriteDeployment: the YAML loads back into the same deployment.
func TestWriteDeployment(t *testing.T) {
	cfg := deploy.Default()
	cfg.Model, cfg.GPU, cfg.HardwareFile, cfg.TP = "data/models/qwen3-32b", "RTXPRO6000", "data/hardware.json", 2
	cfg.LatencyModel, cfg.TotalKVBlocks, cfg.LongPrefillTokenThreshold = "physics", 1234, 2048
	cfg.AlphaCoeffs = []float64{39740.48397591585, 0, 0}
	cfg.BetaCoeffs = make([]float64, latency.PhNumBetas)
	for i := range cfg.BetaCoeffs {
		cfg.BetaCoeffs[i] = 1 / float64(i+3)
	}
	var buf bytes.Buffer
	if err := WriteDeployment(&buf, cfg, []string{"first line", ""}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "# first line\n#\n# alpha_coeffs: Q, A_end, A_tok") {
		t.Errorf("comments:\n%s", buf.String())
	}
	got, err := deploy.Decode("d.yaml", buf.Bytes(), deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !sameDeployment(got, cfg) || !reflect.DeepEqual(got.BetaCoeffs, cfg.BetaCoeffs) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, cfg)
	}
	rel := Relocate(cfg, pkgAssets(), DefaultAssets())
	if rel.Model != "internal/fidelity/data/models/qwen3-32b" || rel.HardwareFile != "internal/fidelity/data/hardware.json" {
		t.Errorf("relocated: %q %q", rel.Model, rel.HardwareFile)
	}
	if back := Relocate(rel, DefaultAssets(), pkgAssets()); back.Model != cfg.Model || back.HardwareFile != cfg.HardwareFile {
		t.Errorf("relocated back: %q %q", back.Model, back.HardwareFile)
	}
	emb := cfg
	emb.Model = "llama-3.1-8b-instruct"
	if Relocate(emb, pkgAssets(), DefaultAssets()).Model != "llama-3.1-8b-instruct" {
		t.Error("an embedded model name was relocated")
	}
}

// TestProfileFiles loads a profile in LLMServingSim's layout and checks the
// per-step sums and the interpolation.
func TestProfileFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"dense.csv":        "layer,tokens,time_us\nqkv_proj,1,10\nqkv_proj,100,30\nlayernorm,1,1\nlayernorm,100,2\nembedding,1,5\nembedding,100,5\n",
		"per_sequence.csv": "layer,sequences,time_us\nlm_head,1,100\nlm_head,10,120\nsampler,1,3\nsampler,10,6\n",
		"attention.csv":    "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n0,0,1,16,9\n16,0,0,0,10\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := LoadProfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	// 50.5 tokens: qkv 20, layernorm 1.5 (twice per layer), embedding 5 once;
	// 3 layers → 3·(20 + 3) + 5 = 74. Above the last point: proportional.
	for _, c := range []struct{ t, want float64 }{{50.5, 74}, {1, 3*(10+2) + 5}, {200, 3*(60+2*4) + 10}} {
		if got := p.DenseStep(c.t, 3); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("DenseStep(%v) = %v, want %v", c.t, got, c.want)
		}
	}
	if got := p.SampleStep(4); math.Abs(got-(100+20.0/3+4)) > 1e-9 {
		t.Errorf("SampleStep(4) = %v", got)
	}
	if len(p.Attention) != 2 || len(p.MoE) != 0 || !reflect.DeepEqual(p.DenseTokens(), []float64{1, 100}) {
		t.Errorf("profile %+v", p)
	}
	if err := os.Remove(filepath.Join(dir, "attention.csv")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfile(dir); err == nil || !strings.Contains(err.Error(), "attention.csv") {
		t.Errorf("missing attention.csv: %v", err)
	}
}

// TestMarkdownGolden renders a hand-made report (testdata/report.md,
// rewritten with -update).
func TestMarkdownGolden(t *testing.T) {
	mk := func(realMean, simMean, mape, r float64) Metrics {
		return Metrics{N: 300, RealMean: realMean, SimMean: simMean, MeanErr: (simMean - realMean) / realMean,
			P50Err: -0.01, P90Err: 0.02, P99Err: 0.03, MAPE: mape, PearsonR: r}
	}
	runs := []RunReport{
		{Name: "GPU-A/model-x", Model: "org/model-x", GPU: "GPU-A", TP: 1, DP: 1,
			Universal: Universal{HostStepUs: 640, HostSeqUs: 2, LinkInv: 3.1, LinkOpUs: 27},
			Fit:       &FitResult{Objective: 0.028}, Kernels: map[string]fit.GroupError{"dense": {RMSRel: 0.035}, "attention": {RMSRel: 0.07}},
			Metrics: map[string]Metrics{"ttft": mk(65.5e6, 65.9e6, 0.038, 0.998), "tpot": mk(32400, 32300, 0.05, 0.765), "e2e": mk(86.6e6, 86.9e6, 0.013, 0.999)},
			Sources: Sources{N: 300, RealQueueUs: 65.2e6, SimQueueUs: 65.6e6, RealFirstUs: 266e3, SimFirstUs: 333e3, QueueErr: 0.031,
				QueueAbsErr: 0.05, FirstErr: -0.018, FirstAbsErr: 0.027, QueuedN: 287, OtherN: 13, QueuedTTFTMAPE: 0.028, OtherTTFTMAPE: 0.25,
				RealTPOTUs: 32400, SimTPOTUs: 32300, RealBatch: 35, SimBatch: 34.9, RealPeak: 42, SimPeak: 41, RealKVPeak: 0.9996, SimKVPeak: 1,
				SimPreemptions: 226, SimPreempted: 150}},
		{Name: "GPU-B/model-y", Model: "org/model-y", GPU: "GPU-B", TP: 1, DP: 2,
			Universal: Universal{HostStepUs: 380, LinkInv: 2.5, LinkOpUs: 32.5},
			Fit:       &FitResult{Objective: 0.021}, Kernels: map[string]fit.GroupError{"moe": {RMSRel: 0.072}},
			Metrics: map[string]Metrics{"ttft": mk(1.09e6, 1.03e6, 0.117, 0.995), "tpot": mk(47300, 47200, 0.005, 0.997), "e2e": mk(32.3e6, 32.3e6, 0.005, 0.998)},
			Sources: Sources{RealKVPeak: -1, SimKVPeak: 0.41}},
	}
	// The new sections: GPU-A with its intervals and unfitted replay (the
	// hand-made run of TestIntervalByRegime), GPU-B without.
	hr, mid, lo, hi := intervalRun()
	iv, err := intervalOf(hr, 0.0439, mid, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	ivu := *iv
	ivu.Sigma = 0.08
	runs[0].Interval = iv
	runs[0].Unfitted = &Assessment{Metrics: map[string]Metrics{"ttft": mk(65.5e6, 70e6, 0.09, 0.99), "tpot": mk(32400, 35000, 0.08, 0.7),
		"e2e": mk(86.6e6, 95e6, 0.097, 0.99)}, Regimes: map[Regime]RegimeErrors{RegimeLight: {N: 20, TTFTMAPE: 0.4, E2EMAPE: 0.1},
		RegimeSaturated: {N: 280, TTFTMAPE: 0.07, E2EMAPE: 0.097}}, Interval: &ivu}
	rep := &Report{Runs: runs}
	pool(rep)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep, DefaultTargets()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.md")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if buf.String() != string(want) {
		t.Errorf("Markdown differs from %s (run with -update):\n%s", golden, buf.String())
	}
	// The overall TTFT MAPE (7.75%) meets its target, GPU-B's own 11.7%
	// does not: a target is met only on every run.
	met := DefaultTargets().Met(rep)
	if want := map[string]bool{"e2e_mape": true, "tpot_mean": true, "ttft_mape": false, "e2e_pearson_r": true}; !reflect.DeepEqual(met, want) {
		t.Errorf("targets: got %v, want %v", met, want)
	}
	if o := rep.Overall["ttft"]; math.Abs(o.MAPE-(0.038+0.117)/2) > 1e-12 || o.N != 600 {
		t.Errorf("overall ttft %+v", o)
	}
}
