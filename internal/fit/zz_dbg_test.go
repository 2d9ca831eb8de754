package fit

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

func floats(s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, v)
	}
	return out
}

func TestZZDbg(t *testing.T) {
	p := os.Getenv("DBG_TRACE")
	if p == "" {
		t.Skip()
	}
	tr, err := tracev2.Load(tracev2.Input{Path: p + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(p + ".itl.csv")
	itl, err := tracev2.ReadITL(f, "itl", tr.Origin)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := deploy.Load(os.Getenv("DBG_DEPLOY"), deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	cfg.AlphaCoeffs, cfg.BetaCoeffs = floats(os.Getenv("DBG_ALPHA")), floats(os.Getenv("DBG_BETA"))
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := strconv.Atoi(os.Getenv("DBG_ITER"))
	rg, _ := strconv.ParseFloat(os.Getenv("DBG_RIDGE"), 64)
	c := Config{Deploy: dep, Seed: 7, Replay: replay.TraceOptions{ClosedLoop: os.Getenv("DBG_CLOSED") != ""}, MaxIterations: it, Ridge: rg}
	c.Iteration = func(i int, f, h Errors, a, b []float64) {
		t.Logf("iter %d TTFT %.3f E2E %.3f a %.4g b %.4g", i, f.TTFTMAPE, f.E2EMAPE, a, b)
	}
	res, err := Fit(context.Background(), c, Input{Records: tr.Records, ITL: itl})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v itl %d eq %d resid %.3f\nRESULT alpha %.5g beta %.5g chosen %d fit %+v", res.Warnings, res.ITLRequests, res.Equations, res.Residual, res.Alpha, res.Beta, res.Chosen, res.Fit)
}
