package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"servesim/internal/tracev2"
)

// BenchmarkCalibrate1M runs the whole command over a 1M-request trace and its
// SimResults (JSON Lines), as files: reading both inputs, matching, every
// statistic, the JSON report on stdout and the HTML report to a file.
// cpu-s/op is the process's CPU time per run (user + system, GC included):
// on a machine shared with other jobs it is steadier than ns/op.
//
//	go test ./cmd/calibrate -run '^$' -bench Calibrate1M -benchtime 1x
func BenchmarkCalibrate1M(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	realPath, simPath := filepath.Join(dir, "real.trace"), filepath.Join(dir, "sim.jsonl")
	f, err := os.Create(realPath)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	tw, err := tracev2.NewStreamWriter(bw, fixtureHeader(), tracev2.Columns{})
	if err != nil {
		b.Fatal(err)
	}
	sims := make([]tracev2.SimResult, 0, n)
	for i := range int64(n) {
		prompt, out := 100+int(i%900), 20+int(i%200)
		send := 1 + i*1000
		ttft := int64(30_000 + 40*prompt + int(i%7)*1000)
		tpot := int64(12_000 + (i%5)*300)
		rec := tracev2.Record{RequestID: i, SLOClass: "critical", Streaming: true, InputTokens: prompt,
			OutputTokens: out, ServerInputTokens: prompt, ArrivalTimeUs: send, SendTimeUs: send,
			FirstChunkTimeUs: send + ttft, LastChunkTimeUs: send + ttft + int64(out-1)*tpot, NumChunks: out, Status: "ok"}
		if err := tw.Write(&rec); err != nil {
			b.Fatal(err)
		}
		st := float64(ttft) * (1 + float64(i%11-5)/100)
		sims = append(sims, tracev2.SimResult{RequestID: i, TTFTUs: st, E2EUs: st + float64(int64(out-1)*tpot)*0.98,
			InputTokens: prompt, OutputTokens: out, ArrivalUs: send})
	}
	if err := tw.Close(nil); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	sf, err := os.Create(simPath)
	if err != nil {
		b.Fatal(err)
	}
	sbw := bufio.NewWriterSize(sf, 1<<20)
	if err := tracev2.WriteSimResults(sbw, sims, tracev2.SimResultJSONL); err != nil {
		b.Fatal(err)
	}
	sbw.Flush()
	sf.Close()
	sims = nil
	html := filepath.Join(dir, "r.html")
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		err := run(context.Background(), []string{"calibrate", realPath, simPath, "--format", "json", "--html", html, "-q"},
			nil, io.Discard, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(n), "pairs/op")
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
