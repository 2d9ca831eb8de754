package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/sweep"
	"servesim/internal/testkit/clitest"
)

// bins holds the binaries built by this test process (removed by TestMain).
var bins clitest.Binaries

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Remove()
	os.Exit(code)
}

// mustRun runs a command in-process and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := runCmd(t, "", append(args, "--quiet")...)
	if code != 0 {
		t.Fatalf("run %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

func decodeDoc(t *testing.T, s string) *sweep.Doc {
	t.Helper()
	d, err := sweep.DecodeDoc("stdout", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A sweep's cases are exactly the runs of the same flags: each case's
// summary (--summaries) is byte for byte what run prints for it, and the
// case's row carries that summary's figures.
func TestSweepRowsEqualRuns(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--workload", "chatbot", "--num-requests", "300", "--seed", "7"}
	out := mustRun(t, append([]string{"sweep", "--grid", "rate=8,30", "--grid", "max_num_seqs=8,64",
		"--grid", "latency_model=trained-physics,roofline", "--slo", "ttft.p99<300ms", "--format", "json",
		"--summaries", dir}, base...)...)
	d := decodeDoc(t, out)
	if d.Cases != 8 || len(d.Rows) != 8 {
		t.Fatalf("got %d cases and %d rows, want 8 and 8", d.Cases, len(d.Rows))
	}
	for _, r := range d.Rows {
		args := append([]string{"--format", "json"}, base...)
		for _, p := range r.Params {
			args = append(args, "--"+strings.ReplaceAll(p.Key, "_", "-"), p.Value)
		}
		want := mustRun(t, args...)
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("case-%04d.json", r.Case)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("case %d (%s): the sweep's summary differs from run %s", r.Case, sweep.ParamText(r.Params), strings.Join(args, " "))
		}
		var s map[string]float64
		json.Unmarshal([]byte(strings.ReplaceAll(want, `"per_class"`, `"x_per_class"`)), &s)
		if r.Completed != int64(s["completed_requests"]) || r.ThroughputRPS != s["responses_per_sec"] || r.Preemptions != int64(s["preemption_count"]) ||
			r.KVUtilizationPeak != s["kv_utilization_peak"] || r.DurationS != s["vllm_estimated_duration_s"] {
			t.Errorf("case %d: row %+v does not carry the summary's counts", r.Case, r)
		}
		if r.Status == sweep.StatusOK && (r.TTFT.P99 != s["ttft_p99_ms"] || r.ITL.P50 != s["itl_p50_ms"] || r.E2E.P90 != s["e2e_p90_ms"] || r.TPOT.Mean != s["tpot_mean_ms"]) {
			t.Errorf("case %d: row latencies differ from the summary's", r.Case)
		}
		if r.GPUs != 1 || r.CostPerHour == nil || *r.CostPerHour != 3.95 {
			t.Errorf("case %d: %d GPUs at %v $/h, want 1 H100 at 3.95", r.Case, r.GPUs, r.CostPerHour)
		}
	}
	// The same case swept alone gives the same row (but for its index).
	solo, errs, code := runCmd(t, "", append([]string{"sweep", "--grid", "rate=30", "--grid", "max_num_seqs=64",
		"--grid", "latency_model=roofline", "--slo", "ttft.p99<300ms", "--format", "json", "--quiet"}, base...)...)
	if code != 0 && code != 3 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	alone := decodeDoc(t, solo)
	r := alone.Rows[0]
	r.Case = 7
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(d.Rows[7])
	if string(a) != string(b) {
		t.Errorf("case 7 alone:\n%s\nin the grid:\n%s", a, b)
	}
}

// The search's max rate agrees with a dense grid to its precision: the SLO
// holds at the rate found and fails just above it.
func TestSweepMaxRateAgreesWithDenseGrid(t *testing.T) {
	base := []string{"--workload", "chatbot", "--num-requests", "2000", "--slo", "ttft.p99<150ms", "--format", "json"}
	d := decodeDoc(t, mustRun(t, append([]string{"sweep", "--find", "max-rate", "--precision", "2%"}, base...)...))
	if len(d.Answer.MaxRates) != 1 {
		t.Fatalf("got %d max rates, want 1", len(d.Answer.MaxRates))
	}
	m := d.Answer.MaxRates[0]
	lo, hi := m.MaxRateRPS, m.FailRateRPS
	if !(lo > 0 && hi > lo && hi <= lo*1.02*1.0001) {
		t.Fatalf("bracket [%v, %v] is not within 2%%", lo, hi)
	}
	// Dense grid: 0.5% steps from 5% below to 5% above the rate found.
	var rates []string
	for k := -10; k <= 10; k++ {
		rates = append(rates, strconv.FormatFloat(lo*(1+0.005*float64(k)), 'f', 4, 64))
	}
	dense := decodeDoc(t, mustRun(t, append([]string{"sweep", "--grid", "rate=" + strings.Join(rates, ",")}, base...)...))
	firstFail := math.Inf(1)
	for _, r := range dense.Rows {
		if !r.Met() {
			firstFail = math.Min(firstFail, r.RateRPS)
		}
	}
	passing := 0.0
	for _, r := range dense.Rows {
		if r.Met() && r.RateRPS < firstFail {
			passing = math.Max(passing, r.RateRPS)
		}
		if math.Abs(r.RateRPS-lo) < 1e-3 && !r.Met() {
			t.Errorf("the SLO fails at the rate found, %v: %v", lo, r.SLOFailures)
		}
		if r.RateRPS >= lo*1.02 && r.Met() {
			t.Errorf("the SLO still holds at %v, beyond the precision above %v", r.RateRPS, lo)
		}
	}
	if math.Abs(passing-lo) > 0.02*lo {
		t.Errorf("dense grid max rate %v, search %v: more than 2%% apart", passing, lo)
	}
	if len(d.Answer.Knees) != 1 {
		t.Errorf("want the knee of the curve, got %+v", d.Answer.Knees)
	}
}

// shardsArgs is a small sweep cut into shards by the tests below.
var shardArgs = []string{"sweep", "--workload", "chatbot", "--num-requests", "200", "--grid", "num_instances=1,2",
	"--grid", "rate=10,40", "--grid", "max_num_seqs=16,128", "--slo", "ttft.p99<200ms", "--find", "min-cost"}

// Sharded with GNU parallel and merged, the sweep prints what one local
// run prints, in every format, and the same page. CI installs parallel and
// sets SERVESIM_REQUIRE_PARALLEL so that this test cannot skip there.
func TestSweepShardsWithGNUParallel(t *testing.T) {
	par, err := exec.LookPath("parallel")
	if err != nil {
		if os.Getenv("SERVESIM_REQUIRE_PARALLEL") != "" {
			t.Fatal("GNU parallel is required ($SERVESIM_REQUIRE_PARALLEL is set) but not installed")
		}
		t.Skip("GNU parallel is not installed (apt-get install parallel)")
	}
	bin := bins.Path(t, "run")
	dir := t.TempDir()
	cmd := exec.Command(par, append(append([]string{"--quote", "--halt", "now,fail=1", bin}, shardArgs...),
		"--quiet", "--shard", "{}/3", "--format", "json", "-o", filepath.Join(dir, "shard-{}.json"), ":::", "0", "1", "2")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("parallel: %v\n%s", err, out)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "shard-*.json"))
	if len(shards) != 3 {
		t.Fatalf("parallel wrote %v", shards)
	}
	for _, format := range []string{"text", "csv", "json"} {
		page := filepath.Join(dir, "merged-"+format+".html")
		merged, err := exec.Command(bin, append(append([]string{"sweep", "merge"}, shards...), "--format", format, "--html", page)...).Output()
		if err != nil {
			t.Fatalf("merge: %v", err)
		}
		one := filepath.Join(dir, "one-"+format+".html")
		whole := mustRun(t, append(append([]string{}, shardArgs...), "--format", format, "--html", one)...)
		if string(merged) != whole {
			t.Errorf("%s: merged shards differ from one run:\n%s\n--- one run\n%s", format, merged, whole)
		}
		a, _ := os.ReadFile(page)
		b, _ := os.ReadFile(one)
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s: the merged page differs from one run's", format)
		}
	}
}

// A shard may take its index from a Kubernetes Indexed Job or a Slurm
// array; merged, the shards print what one run prints.
func TestSweepShardsFromEnvironment(t *testing.T) {
	whole := mustRun(t, append(append([]string{}, shardArgs...), "--format", "json")...)
	for _, env := range []struct{ index, min string }{{"JOB_COMPLETION_INDEX", ""}, {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN"}} {
		dir := t.TempDir()
		var files []string
		for i := 0; i < 3; i++ {
			id := i
			if env.min != "" {
				id = i + 1 // Slurm arrays often count from 1
				t.Setenv(env.min, "1")
			}
			t.Setenv(env.index, strconv.Itoa(id))
			f := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
			mustRun(t, append(append([]string{}, shardArgs...), "--shard", "3", "--format", "json", "-o", f)...)
			files = append(files, f)
			d, _ := os.ReadFile(f)
			if want := fmt.Sprintf(`"shard": "%d/3"`, i); !strings.Contains(string(d), want) {
				t.Errorf("%s=%d: the shard file does not say %s", env.index, id, want)
			}
		}
		os.Unsetenv(env.index)
		os.Unsetenv(env.min)
		merged := mustRun(t, append([]string{"sweep", "merge", "--format", "json"}, files...)...)
		if merged != whole {
			t.Errorf("%s: merged shards differ from one run", env.index)
		}
	}
	// Merging an incomplete set says which shard is missing.
	dir := t.TempDir()
	f := filepath.Join(dir, "only.json")
	mustRun(t, append(append([]string{}, shardArgs...), "--shard", "0/2", "--format", "json", "-o", f)...)
	if _, errs, code := runCmd(t, "", "sweep", "merge", f); code != 2 || !strings.Contains(errs, "shards missing: 1/2") {
		t.Errorf("incomplete merge: exit %d, %s", code, errs)
	}
}

// Bad sweep files and flags are located errors (exit 2); an empty grid is
// a message, not an empty table; an SLO no case meets is exit 3 after the
// table.
func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	n := 0
	file := func(content string) string {
		n++
		p := filepath.Join(dir, strconv.Itoa(n), "s.yaml")
		os.Mkdir(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wl := []string{"--workload", "chatbot", "--rate", "5", "--num-requests", "50", "--quiet"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--sweep", file("grid:\n  num_instances: 4..1\n")}, 2, "s.yaml:2:18: grid.num_instances: range \"4..1\""},
		{[]string{"--sweep", file("grid:\n  num_instance: [1, 2]\n")}, 2, "s.yaml:2:3: grid: unknown key num_instance (did you mean \"num_instances\"?): want a deployment key"},
		{[]string{"--sweep", file("grid:\n  max_num_seqs: [8, lots]\n")}, 2, `s.yaml:2:21: grid.max_num_seqs: value lots: "lots" is not an integer`},
		{[]string{"--sweep", file("grid:\n  rate: [5, -1]\n")}, 2, "s.yaml:2:13: grid.rate: \"-1\": want a positive number"},
		{[]string{"--sweep", file("grid:\n  pd_split: ['1:2', '3']\n")}, 2, "s.yaml:2:21: grid.pd_split: \"3\": want P:D"},
		{[]string{"--sweep", file("slo: ttft.p99<1\n")}, 2, "s.yaml:1:16: slo: 1: give the unit"},
		{[]string{"--sweep", file("grid:\n  rate: [5]\nfind: max-rate\nslo: ttft.p99<1s\n")}, 2, "s.yaml:2:3: grid.rate: --find max-rate searches the rate itself"},
		{[]string{"--sweep", file("grid:\n  num_instances: [1, 2]\nfind: [min-cost]\nslo: ttft.p99<1s\n")}, 2, "s.yaml:3:7: find: want max-rate, min-cost, min-gpus or min-shed, got a list"},
		{[]string{"--sweep", file("grid:\n  num_instances: [1, 2]\nslo: [ttft.p99<1s]\n")}, 2, "s.yaml:3:6: slo: want an SLO such as 'ttft.p99<500ms', got a list"},
		{[]string{"--sweep", file("grid:\n  num_instances: [1, 2]\n---\nfind: min-cost\n")}, 2, "s.yaml:3:1: more than one YAML document"},
		{[]string{"--sweep", file("grid:\n  num_instances: [1, 2]\nprices:\n  H100: 1e308\n")}, 2, "s.yaml:4:9: prices.H100: 1e+308 USD per GPU-hour: want a finite price in [0, 1e+06]"},
		{[]string{"--num-instances", "2", "--grid", "routing_scorers=queue-depth:1,queue-depth:NaN", "--grid", "routing_policy=weighted"}, 2,
			`--grid: column 31: grid.routing_scorers: value queue-depth:NaN: "queue-depth:NaN": scorer "queue-depth": weight "NaN" must be a positive number`},
		{[]string{"--num-instances", "2", "--grid", "routing_policy=weighted", "--grid", `routing_scorers=["queue-depth:-1"]`}, 2,
			`--grid: column 18: grid.routing_scorers: value queue-depth:-1: "queue-depth:-1": scorer "queue-depth": weight "-1" must be a positive number`},
		{[]string{"--grid", "num_instances=1,01"}, 2, "--grid: column 17: grid.num_instances: value 01 is 1 again (first at --grid: column 15)"},
		{[]string{"--grid", "Num-Instances=1,2"}, 2, `--grid: column 1: grid: key "Num_Instances": keys are lower case with underscores (did you mean "num_instances"?)`},
		{[]string{"--grid", "tp=1,2"}, 2, `--grid: column 1: grid: unknown key tp (did you mean "tensor_parallel"?)`},
		{[]string{"--grid", "tensor_parallel_siz=1,2"}, 2, `--grid: column 1: grid: unknown key tensor_parallel_siz (did you mean "tensor_parallel"?)`},
		{nil, 2, "the grid is empty"},
		{[]string{"--grid", "rate=5", "--find", "min-cost"}, 2, "--find min-cost needs an SLO"},
		{[]string{"--grid", "rate=5", "--format", "xml"}, 2, "--format \"xml\": want text, csv or json"},
		{[]string{"--grid", "rate=5", "--shard", "3/2"}, 2, "--shard \"3/2\": slice index 3 is outside [0, 2)"},
		{[]string{"--grid", "gpu=B300"}, 2, "every case is infeasible; case 0 (gpu=B300)"},
		{[]string{"--grid", "rate=5", "--jobs", "5000"}, 2, "--jobs 5000 is outside [0, 1024]"},
		{[]string{"--find", "max-rate", "--slo", "ttft.p99<1s", "--concurrency", "4"}, 2, "a closed-loop workload (--concurrency) has none"},
	} {
		out, errs, code := runCmd(t, "", append(append([]string{"sweep"}, tc.args...), wl...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", tc.args, code, errs, tc.code, tc.want)
		}
		if out != "" {
			t.Errorf("%v: wrote a table on bad input:\n%s", tc.args, out)
		}
	}
	out, errs, code := runCmd(t, "", append([]string{"sweep", "--grid", "num_instances=1,2", "--slo", "ttft.p99<1ms", "--find", "min-cost"}, wl...)...)
	if code != 3 || !strings.Contains(errs, "no deployment of the grid meets ttft.p99<1ms (0 of 2); the closest, num_instances=2") || !strings.Contains(out, "num_instances") {
		t.Errorf("impossible SLO: exit %d, stderr %q, stdout %q", code, errs, out)
	}
	_, errs, code = runCmd(t, "", "sweep", "--workload", "chatbot", "--num-requests", "300", "--slo", "ttft.p99<1ms", "--find", "max-rate", "--quiet")
	if code != 3 || !strings.Contains(errs, "the deployment: no rate meets the SLO") {
		t.Errorf("impossible SLO for max-rate: exit %d, stderr %q", code, errs)
	}
}

// A deployment that cannot be built is a row saying why, not an error.
func TestSweepInfeasibleCases(t *testing.T) {
	out, errs, code := runCmd(t, "", "sweep", "--workload", "chatbot", "--rate", "5", "--num-requests", "100", "--model", "llama-3.1-70b-instruct",
		"--grid", "tensor_parallel=1,4", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	d := decodeDoc(t, out)
	if d.Rows[0].Status != sweep.StatusInfeasible || d.Rows[0].Reason == "" || d.Rows[0].GPUs != 1 || d.Rows[0].TTFT != nil {
		t.Errorf("tp=1 of a 70B model on an H100: got %+v, want an infeasible row with a reason", d.Rows[0])
	}
	if d.Rows[1].Status != sweep.StatusOK || d.Rows[1].GPUs != 4 {
		t.Errorf("tp=4: got %+v", d.Rows[1])
	}
	if !strings.Contains(errs, "infeasible case") {
		t.Errorf("stderr should warn of the infeasible case: %s", errs)
	}
}

// Prices: the built-in list, a sweep file's prices over it, --prices over
// both; each row's cost is GPUs × price, and the page names the source.
func TestSweepPrices(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.yaml")
	os.WriteFile(spec, []byte("grid:\n  num_instances: [2]\nprices:\n  H100: 2.49\n  L40S: 1\n"), 0o644)
	ours := filepath.Join(dir, "p.yaml")
	os.WriteFile(ours, []byte("h100: 1.5\n"), 0o644)
	wl := []string{"--workload", "chatbot", "--rate", "5", "--num-requests", "50", "--format", "json"}
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{[]string{"--grid", "num_instances=2"}, 2 * 3.95},
		{[]string{"--sweep", spec}, 2 * 2.49},
		{[]string{"--sweep", spec, "--prices", ours}, 2 * 1.5},
		{[]string{"--grid", "num_instances=2", "--prices", ours}, 2 * 1.5},
	} {
		d := decodeDoc(t, mustRun(t, append(append([]string{"sweep"}, tc.args...), wl...)...))
		r := d.Rows[0]
		if r.CostPerHour == nil || math.Abs(*r.CostPerHour-tc.want) > 1e-9 || r.CostPerMTok == nil {
			t.Errorf("%v: cost %v $/h, want %v", tc.args, r.CostPerHour, tc.want)
		}
		if len(d.Prices) != 1 || d.Prices[0].GPU == "L40S" {
			t.Errorf("%v: the document lists the prices of the GPUs used only: %+v", tc.args, d.Prices)
		}
	}
	if _, errs, code := runCmd(t, "", append([]string{"sweep", "--grid", "rate=5", "--prices", filepath.Join(dir, "none.yaml")}, wl...)...); code != 2 || !strings.Contains(errs, "none.yaml: prices:") {
		t.Errorf("missing price file: exit %d, %s", code, errs)
	}
}

// A deployment's GPUs count its data-parallel ranks: TP 2 × DP 2 is four
// GPUs, and costs four GPU-hours an hour.
func TestSweepCountsDataParallelGPUs(t *testing.T) {
	d := decodeDoc(t, mustRun(t, "sweep", "--workload", "chatbot", "--rate", "5", "--num-requests", "50", "--tensor-parallel", "2",
		"--grid", "data_parallel=1,2", "--slo", "ttft.p99<10s", "--find", "min-gpus", "--format", "json"))
	for i, want := range []int{2, 4} {
		r := d.Rows[i]
		if r.GPUs != want || r.CostPerHour == nil || math.Abs(*r.CostPerHour-float64(want)*3.95) > 1e-9 {
			t.Errorf("%s: %d GPUs at %v $/h, want %d GPUs at $%.2f/h", sweep.ParamText(r.Params), r.GPUs, r.CostPerHour, want, float64(want)*3.95)
		}
	}
}

// sweep merge refuses a shard a sweep cannot have written, located, with
// exit 2 and nothing on stdout; a shard's SLO verdicts are judged again.
func TestSweepMergeRefusesTamperedShards(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := 0; i < 2; i++ {
		f := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		mustRun(t, append(append([]string{}, shardArgs...), "--shard", fmt.Sprintf("%d/2", i), "--format", "json", "-o", f)...)
		files = append(files, f)
	}
	orig, _ := os.ReadFile(files[1])
	write := func(s string) { os.WriteFile(files[1], []byte(s), 0o644) }
	for _, tc := range []struct {
		edit func(string) string
		want string
	}{
		{func(s string) string { return s + "garbage" }, ":1: data after the document"},
		{func(s string) string { return strings.Replace(s, `"case": 1,`, `"case": "1",`, 1) }, `: rows[0].case: want an integer, got a string`},
		{func(s string) string { return strings.Replace(s, `"find": "min-cost"`, `"find": "min-gpus"`, 1) }, `: find: "min-gpus" here, "min-cost" in ` + files[0]},
	} {
		write(tc.edit(string(orig)))
		out, errs, code := runCmd(t, "", "sweep", "merge", files[0], files[1])
		if code != 2 || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("exit %d, stderr %q, stdout %d bytes; want exit 2 with %q", code, errs, len(out), tc.want)
		}
	}
}
