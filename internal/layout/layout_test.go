package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "servesim"

// testkit is the folder of the test-support packages (fakes, fixtures,
// harnesses, data finders): only _test files import them, and they are
// exempt from the other rules, as they may import what the tests need
// (testing, hence flag; the CLI libraries; HTTP).
const testkit = module + "/internal/testkit/"

// rule forbids packages matching a prefix from depending (directly or not)
// on any of the listed import paths or prefixes.
type rule struct {
	pkgPrefix string
	forbidden []string
	why       string
}

func rules() []rule {
	cliLibs := []string{"github.com/urfave/cli", "github.com/schollz/progressbar"}
	return []rule{
		{module + "/internal/tracev2", []string{module + "/internal/"}, "tracev2 is a leaf: it knows no other internal package but the leaves outfile, jsonscan, clip and strictyaml"},
		{module + "/internal/tracev2/input", []string{module + "/internal/des", module + "/internal/replay", module + "/internal/cli", "github.com/urfave/cli"},
			"the one trace input layer serves every command: it knows no simulator and no command line"},
		{module + "/internal/tracev2/playback", []string{module + "/internal/des", module + "/internal/replay", module + "/internal/live", module + "/internal/httpload", module + "/internal/workload", module + "/internal/cli"}, "playback is the one trace playback of replay and observe: it knows TraceV2 only"},
		{module + "/internal/jsonscan", []string{module + "/internal/"}, "jsonscan is a leaf: a JSON scanner that knows nothing of what it reads"},
		{module + "/internal/outfile", []string{module + "/internal/"}, "outfile is a leaf: how every output file is written, knowing nothing of what is in it"},
		{module + "/internal/flagspec", []string{module + "/internal/"}, "flagspec is a leaf: flag descriptions that know no flag library and no domain"},
		{module + "/internal/suggest", []string{module + "/internal/"}, "suggest is a leaf: the one did-you-mean, over any names"},
		{module + "/internal/strictyaml", []string{module + "/internal/"}, "strictyaml is a leaf: strict located YAML decoding that knows no document it decodes"},
		{module + "/internal/deploy", []string{module + "/internal/workload", module + "/internal/cli"}, "the deployment describes its flags (flagspec) and never reads a command line or a workload"},
		{module + "/internal/nnls", []string{module + "/internal/"}, "nnls is a leaf: a solver that knows nothing of what its unknowns mean"},
		{module + "/internal/fanout", []string{module + "/internal/"}, "fanout is a leaf: a worker's slice I/N of a job, knowing nothing of the job"},
		{module + "/internal/clip", []string{module + "/internal/"}, "clip is a leaf: text cut short for messages, knowing nothing of the text"},
		{module + "/internal/quantile", []string{module + "/internal/"}, "quantile is a leaf: the one percentile rule, knowing nothing of what the values measure"},
		{module + "/internal/noise", []string{module + "/internal/"}, "noise is a leaf: the mean, Student-t interval and CV of repeated measurements, knowing nothing of what they measure"},
		{module + "/internal/steady", []string{module + "/internal/"}, "steady is a leaf: the one steady-state test, over arrival and service-start times, for the simulator's summary and both sweeps"},
		{module + "/internal/exitcode", []string{module + "/internal/"}, "exitcode is a leaf: the one home of the exit codes, which every error of every package may carry"},
		{module + "/internal/infile", []string{module + "/internal/"}, "infile is a leaf: how every input read whole is bounded, knowing nothing of what is in it"},
		{module + "/internal/ociimage", []string{module + "/internal/"}, "ociimage is a leaf: it puts files in a container image, knowing nothing of what they are"},
		{module + "/internal/render", []string{module + "/internal/report", module + "/internal/sweep", module + "/internal/tracev2", module + "/internal/des",
			module + "/internal/replay", module + "/internal/live", module + "/internal/httpload", module + "/internal/calibrate", module + "/internal/cli"},
			"render draws numbers, tables and charts for every page: it knows no trace, sweep or simulator, only the leaves (quantile)"},
		{module + "/internal/des", []string{"net/http", "flag", "encoding/csv", module + "/internal/httpload", module + "/internal/report", module + "/internal/cli"}, "the simulator never imports HTTP, CSV, flag or CLI code"},
		{module + "/internal/des/autoscale", []string{module + "/internal/des/cluster", module + "/internal/des/instance", module + "/internal/des/kvcache", module + "/internal/des/latency"},
			"the autoscaler's decisions are pure functions of their signals: they read no instance, cache or cluster"},
		{module + "/internal/httpload", []string{module + "/internal/des", module + "/internal/report"}, "the load generator knows no simulator or report"},
		{module + "/internal/report", []string{module + "/internal/des", module + "/internal/httpload"}, "reports know no simulator internals"},
		{module + "/internal/replay", []string{module + "/internal/report", module + "/internal/httpload", module + "/internal/live"},
			"the simulator's driver renders no report: a sweep's pages come in from the command (sweep.Pages)"},
		{module + "/internal/fit", []string{module + "/internal/report", module + "/internal/httpload", module + "/internal/live", module + "/internal/fidelity"},
			"the one fitter replays and solves; it renders no report, loads no server, and serves the held-out evaluation, never the reverse"},
		{module + "/internal/calibrate", []string{module + "/internal/cli", module + "/internal/httpload"}, "calibrate's library half opens files and calls report and fit; it knows no CLI and no load generator"},
		{module + "/internal/abtest", []string{module + "/internal/des", module + "/internal/replay", module + "/internal/fit", module + "/internal/httpload",
			module + "/internal/live", module + "/internal/calibrate", module + "/internal/cli"},
			"the A/B comparison judges two real runs' records: it reads no file, loads no server and knows no simulator or command line"},
		{module + "/internal/steps", []string{module + "/internal/tracev2", module + "/internal/deploy", module + "/internal/replay", module + "/internal/fit",
			module + "/internal/report", module + "/internal/httpload", module + "/internal/cli"},
			"the step extraction reads chunk timelines, not files, and knows the simulator only through latency.Step"},
		{module + "/internal/workload", []string{module + "/internal/des", module + "/internal/httpload", module + "/internal/report", module + "/internal/cli"}, "workloads are a shared language below the engines"},
		{module + "/internal/sweep", []string{module + "/internal/des", module + "/internal/deploy", module + "/internal/replay", module + "/internal/httpload",
			module + "/internal/report", module + "/internal/workload", module + "/internal/tracev2", module + "/internal/cli"},
			"sweeps are engine-free: grid, SLO, rows, analysis and merge serve the simulated and the live sweep alike"},
		{module + "/internal/live", []string{module + "/internal/cli", module + "/internal/replay"},
			"observe's library half is driven by a typed config: no CLI, and no simulator beyond what deploy's key list brings"},
		{module + "/internal/verify", []string{module + "/internal/cli"},
			"verify joins observe's probes, calibrate's fit and run's sweep behind a typed config: no CLI"},
		{module + "/cmd/", []string{testkit}, "a command is built from real code only: test support stays in tests"},
		{module + "/", []string{testkit}, "testkit packages are test support: only _test files import them"},
		{module + "/internal/", cliLibs, "only cmd/* and internal/cli import urfave/cli and progressbar"},
	}
}

// leafDep reports the packages a leaf may still import, leaves themselves:
// outfile, how every output file is written, below tracev2's writers,
// jsonscan, the JSON scanner of the load generator's chunks, the Mooncake
// importer's lines and tracev2's SimResults, suggest, the did-you-mean of
// strictyaml's unknown keys, clip, how tracev2's messages and the logs are
// cut short, strictyaml, whose words for a YAML node's kind tracev2's
// header errors share, flagspec, the flag descriptions of fanout's --shard,
// exitcode, the exit codes the leaves' errors carry, and infile, the bound
// on tracev2's header sidecar read whole.
func leafDep(d string) bool {
	switch d {
	case module + "/internal/outfile", module + "/internal/jsonscan", module + "/internal/suggest",
		module + "/internal/clip", module + "/internal/strictyaml", module + "/internal/flagspec", module + "/internal/exitcode",
		module + "/internal/infile":
		return true
	}
	return false
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}:{{join .Deps " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		// A package built with a main package's PGO profile is listed
		// again as "path [servesim/cmd/x]"; its rules are the path's.
		pkg, _, _ = strings.Cut(pkg, " [")
		if !strings.HasPrefix(pkg, module+"/") {
			continue
		}
		for _, r := range rules() {
			// internal/cli is the CLI layer itself; testkit packages are test
			// support, which the testkit rule keeps out of real code.
			if !strings.HasPrefix(pkg, r.pkgPrefix) || pkg == module+"/internal/cli" || strings.HasPrefix(pkg, module+"/internal/cli/") ||
				strings.HasPrefix(pkg, testkit) {
				continue
			}
			checked++
			for _, d := range strings.Fields(deps) {
				for _, f := range r.forbidden {
					// A package may use its own subpackages, except under
					// the rules that apply to every package (their prefix
					// is the module's, which would exempt everything).
					own := r.pkgPrefix != module+"/" && strings.HasPrefix(d, r.pkgPrefix)
					if (d == f || strings.HasPrefix(d, f)) && !own && !leafDep(d) {
						t.Errorf("%s depends on %s: %s", pkg, d, r.why)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package was checked: the go list pattern matched nothing")
	}
}
