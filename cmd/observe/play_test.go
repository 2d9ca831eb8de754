package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

// writeTrace writes records as a single-stream TraceV2 file and returns its
// path; accumulate sets session_context_growth.
func writeTrace(t testing.TB, recs []tracev2.Record, accumulate bool) string {
	t.Helper()
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeGenerated
	if accumulate {
		h.SessionContextGrowth = tracev2.SessionAccumulate
	}
	cols := tracev2.Columns{ThinkTime: true, HashIDs: true}
	var b strings.Builder
	if err := tracev2.WriteStream(&b, h, cols, recs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "in.trace")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// play runs observe --trace against srv and loads the capture.
func play(t *testing.T, srv *fakevllm.Server, trace string, extra ...string) *tracev2.Trace {
	t.Helper()
	args := append([]string{"--url", srv.URL(), "--quiet", "--no-self-test", "--streaming", "--trace", trace}, extra...)
	o := observeIn(testCtx(t), args...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	return loadStream(t, o.Stdout)
}

// byUUID indexes a capture's rows by x_request_id.
func byUUID(tr *tracev2.Trace) map[string]*tracev2.Record {
	m := map[string]*tracev2.Record{}
	for i := range tr.Records {
		m[tr.Records[i].XRequestID] = &tr.Records[i]
	}
	return m
}

// TestPlaySharedPrefixes plays a Mooncake trace (hash_ids of 512-token
// blocks) and a TraceV2 trace with prefix groups: on the server, each
// request's leading tokens identical to an earlier request's are exactly
// what the trace shares — the common leading hash-id blocks, or the
// common part of the group prefix, or a whole shorter prompt made of them —
// give or take a coincidental word of the synthetic text.
func TestPlaySharedPrefixes(t *testing.T) {
	mooncake := filepath.Join("..", "..", "internal", "tracev2", "importer", "testdata", "mooncake", "conversation_trace_head20.jsonl")
	var groups []tracev2.Record
	for i := range 24 {
		g, pre := "alpha", 100
		if i%3 == 1 {
			g, pre = "beta", 60+i // a group's prefix grows: shorter ones are its start
		}
		r := tracev2.Record{RequestID: int64(i), PrefixGroup: g, PrefixLength: pre, InputTokens: 20 + i,
			OutputTokens: 2, ArrivalTimeUs: int64(i) * 2000, Status: "ok"}
		if i%3 == 2 {
			r.PrefixGroup, r.PrefixLength = "", 0
		}
		groups = append(groups, r)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"mooncake", []string{"--from", "mooncake", "--time-scale", "0.01", "--trace", mooncake}},
		{"prefix-groups", []string{"--trace", writeTrace(t, groups, false)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startFake(t, fakevllm.Config{CountSharedPrefix: true, MaxModelLen: 1 << 18, OutputTokens: 2})
			tr := play(t, srv, tc.args[len(tc.args)-1], tc.args[:len(tc.args)-2]...)
			rows := byUUID(tr)
			reqs := srv.Requests()
			if len(reqs) != len(tr.Records) || len(reqs) < 20 {
				t.Fatalf("server saw %d requests, the capture has %d rows", len(reqs), len(tr.Records))
			}
			checked := 0
			for k, q := range reqs {
				r := rows[q.Header.Get("X-Request-Id")]
				if r == nil {
					t.Fatalf("request %d has no row", q.N)
				}
				want := 0
				for _, e := range reqs[:k] {
					want = max(want, sharedTokens(r, rows[e.Header.Get("X-Request-Id")]))
				}
				if n := r.PromptTokens(); q.PromptTokens != n+1 {
					t.Errorf("row %d: the server counted %d prompt tokens, want %d and a BOS", r.RequestID, q.PromptTokens, n)
				}
				if got := q.SharedPrefixTokens; got < want || got > want+3 {
					t.Errorf("row %d (group %q, hash ids %v): %d leading tokens shared with earlier requests, want %d",
						r.RequestID, r.PrefixGroup, head64(r.HashIDs, 4), got, want)
				}
				if want > 0 {
					checked++
				}
			}
			if checked < 10 {
				t.Errorf("only %d requests shared a prefix; the test checks too little", checked)
			}
		})
	}
}

// sharedTokens is what two captured rows share by the trace's structure:
// common leading hash-id blocks (512 tokens each), or a group's prefix,
// never more than the shorter prompt. Rows hold their total prompt length
// as prefix_length + input_tokens.
func sharedTokens(a, b *tracev2.Record) int {
	na, nb := a.PromptTokens(), b.PromptTokens()
	switch {
	case len(a.HashIDs) > 0 && len(b.HashIDs) > 0:
		c := 0
		for c < len(a.HashIDs) && c < len(b.HashIDs) && a.HashIDs[c] == b.HashIDs[c] {
			c++
		}
		return min(c*tracev2.DefaultHashBlockTokens, na, nb)
	case a.PrefixGroup != "" && a.PrefixGroup == b.PrefixGroup:
		return min(a.PrefixLength, b.PrefixLength)
	}
	return 0
}

func head64(xs []int64, n int) []int64 { return xs[:min(n, len(xs))] }

// TestPlaySessionsKeepTheirOrder plays accumulating sessions in both
// session modes. Every session's rounds are sent in order (closed loop: each
// after its predecessor's last chunk plus its think time, so the server sees
// them in order too), and each round's prompt begins with the whole
// previous round's prompt: the server's prefix counter sees it.
func TestPlaySessionsKeepTheirOrder(t *testing.T) {
	var recs []tracev2.Record
	id := int64(0)
	for s := range 4 {
		in := 30
		for k := range 4 {
			arr := int64(s*5000 + k*20000) // rounds 20 ms apart, sessions interleaved
			recs = append(recs, tracev2.Record{RequestID: id, SessionID: fmt.Sprintf("s%d", s), RoundIndex: k,
				InputTokens: in, OutputTokens: 3, ArrivalTimeUs: arr, ThinkTimeUs: 2000, Status: "ok"})
			id++
			in += 3 + 10 // the answer, then the next question
		}
	}
	for _, mode := range []string{"fixed", "closed-loop"} {
		t.Run(mode, func(t *testing.T) {
			srv := startFake(t, fakevllm.Config{CountSharedPrefix: true, TTFT: 3 * time.Millisecond, ITL: time.Millisecond})
			tr := play(t, srv, writeTrace(t, recs, true), "--session-mode", mode)
			if len(tr.Records) != len(recs) || tr.Header.SessionContextGrowth != tracev2.SessionAccumulate {
				t.Fatalf("%d rows (want %d), context growth %q", len(tr.Records), len(recs), tr.Header.SessionContextGrowth)
			}
			if wantLoop := map[string]string{"fixed": "open", "closed-loop": "closed"}[mode]; tr.Header.XExt.Loop != wantLoop {
				t.Errorf("x_ext.loop %q, want %q", tr.Header.XExt.Loop, wantLoop)
			}
			reqs := srv.Requests() // in the order the server counted shared prefixes
			seen := map[string]int{}
			for i, q := range reqs {
				seen[q.Header.Get("X-Request-Id")] = i
			}
			bySession := map[string][]*tracev2.Record{}
			for i := range tr.Records {
				r := &tr.Records[i]
				bySession[r.SessionID] = append(bySession[r.SessionID], r)
			}
			checked := 0
			for sid, rs := range bySession {
				slices.SortFunc(rs, func(a, b *tracev2.Record) int { return a.RoundIndex - b.RoundIndex })
				for k := 1; k < len(rs); k++ {
					prev, r := rs[k-1], rs[k]
					// Fixed: rounds are dispatched in order at their own times;
					// two overdue ones leave within the same instant (each on
					// its own goroutine), so their send stamps may swap by µs.
					if r.ArrivalTimeUs <= prev.ArrivalTimeUs || r.SendTimeUs < prev.SendTimeUs-1000 ||
						(mode == "closed-loop" && r.SendTimeUs < prev.LastChunkTimeUs+2000) {
						t.Errorf("%s round %d sent at %d µs; round %d was sent at %d µs and ended at %d µs (think 2 ms)", sid,
							r.RoundIndex, r.SendTimeUs, prev.RoundIndex, prev.SendTimeUs, prev.LastChunkTimeUs)
					}
					if r.ThinkTimeUs != 2000 {
						t.Errorf("%s round %d: think_time_us %d, want 2000", sid, r.RoundIndex, r.ThinkTimeUs)
					}
					q := reqs[seen[r.XRequestID]]
					if seen[prev.XRequestID] > seen[r.XRequestID] {
						if mode == "closed-loop" {
							t.Errorf("%s: round %d reached the server before round %d", sid, r.RoundIndex, prev.RoundIndex)
						}
						continue // sent in order, overtaken on the way (a loaded machine)
					}
					checked++
					if q.SharedPrefixTokens < prev.PromptTokens() {
						t.Errorf("%s round %d shares %d leading tokens, want the previous prompt's %d", sid,
							r.RoundIndex, q.SharedPrefixTokens, prev.PromptTokens())
					}
				}
			}
			if checked < 9 {
				t.Errorf("only %d of 12 rounds reached the server after their predecessors", checked)
			}
		})
	}
}

// TestPlayTimesScaledAndShifted: rows go out at their recorded times minus
// the first played row's, times --time-scale, from --trace-offset on, at
// most --num-requests of them; a row keeps its lengths, class and tenant.
func TestPlayTimesScaledAndShifted(t *testing.T) {
	var recs []tracev2.Record
	for i := range 10 {
		recs = append(recs, tracev2.Record{RequestID: int64(i), InputTokens: 10 + i, OutputTokens: 2 + i%3,
			ArrivalTimeUs: 1_000_000 + int64(i)*10_000, SLOClass: "batch", TenantID: "t" + strconv.Itoa(i%2), Status: "ok"})
	}
	srv := startFake(t, fakevllm.Config{})
	tr := play(t, srv, writeTrace(t, recs, false), "--time-scale", "0.5", "--trace-offset", "20ms", "--num-requests", "6")
	if len(tr.Records) != 6 {
		t.Fatalf("%d rows, want 6 (rows 2..7)", len(tr.Records))
	}
	for _, r := range tr.Records {
		src := recs[r.RequestID+2]
		if want := (src.ArrivalTimeUs - recs[2].ArrivalTimeUs) / 2; r.ArrivalTimeUs != want {
			t.Errorf("row %d: arrival %d µs, want %d", r.RequestID, r.ArrivalTimeUs, want)
		}
		if r.InputTokens != src.InputTokens || r.OutputTokens != src.OutputTokens || r.SLOClass != "batch" ||
			r.TenantID != src.TenantID || r.VLLMPriority != tracev2.VLLMPriority("batch") {
			t.Errorf("row %d: %+v does not keep source row %+v", r.RequestID, r, src)
		}
	}
	if !strings.HasPrefix(tr.Header.WorkloadSpec, "trace:") {
		t.Errorf("workload_spec %q", tr.Header.WorkloadSpec)
	}
	if c := tr.Header.XExt.Client; c == nil || c.Arrival != "trace" || c.SessionMode != "fixed" {
		t.Errorf("the header's client %+v, want arrival trace, session mode fixed", c)
	}
}

// TestPlayRefusesWorkloadFlags: the trace gives the requests; workload
// flags, bad play flags and play flags without --trace are usage errors.
func TestPlayRefusesWorkloadFlags(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	path := writeTrace(t, []tracev2.Record{{RequestID: 0, InputTokens: 4, OutputTokens: 1, Status: "ok"}}, false)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--trace", path, "--rate", "3"}, "--rate does not apply to --trace"},
		{[]string{"--trace", path, "--time-scale", "0"}, "--time-scale 0: must be > 0"},
		{[]string{"--trace", path, "--session-mode", "open"}, `--session-mode "open"`},
		{[]string{"--trace", path, "--from", "parquet"}, `--from "parquet"`},
		{[]string{"--trace", path, "--trace-offset", "1h"}, "no request is left"},
		{[]string{"--time-scale", "2"}, "--time-scale applies to --trace only"},
		{[]string{"--trace", filepath.Join(t.TempDir(), "missing.csv")}, "missing.csv"},
	} {
		o := observeIn(testCtx(t), append([]string{"--url", srv.URL(), "--quiet", "--no-self-test"}, tc.args...)...)
		if o.Code != 2 || !strings.Contains(o.Stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, o.Code, o.Stderr, tc.msg)
		}
	}
}

// TestPlayCaptureReplayCalibrate is the loop in three commands: a
// production trace (Mooncake) played against a server, the capture replayed
// through the simulator (its hash ids kept), and graded by calibrate.
func TestPlayCaptureReplayCalibrate(t *testing.T) {
	replay, calibrate := bins.Path(t, "replay"), bins.Path(t, "calibrate")
	mooncake := filepath.Join("..", "..", "internal", "tracev2", "importer", "testdata", "mooncake", "conversation_trace_head20.jsonl")
	srv := startFake(t, fakevllm.Config{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, MaxModelLen: 1 << 18})
	dir := t.TempDir()
	prefix := filepath.Join(dir, "prod")
	o := observeIn(testCtx(t), "--url", srv.URL(), "--quiet", "--no-self-test", "--streaming", "--trace", mooncake,
		"--from", "mooncake", "--time-scale", "0.05", "--num-requests", "10", "--trace-output", prefix)
	if o.Err != nil {
		t.Fatalf("observe: exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	cap := loadFiles(t, prefix)
	if len(cap.Records) != 10 || !cap.Columns.HashIDs || len(cap.Records[0].HashIDs) == 0 {
		t.Fatalf("capture: %d rows, hash ids column %v", len(cap.Records), cap.Columns.HashIDs)
	}
	sim := filepath.Join(dir, "sim.json")
	if out, err := exec.Command(replay, prefix+".csv", "--model", "qwen3-14b", "--quiet", "--results-path", sim).CombinedOutput(); err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	out, err := exec.Command(calibrate, prefix+".csv", sim, "--format", "json", "--quiet").Output()
	if err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	var rep struct {
		TraceInfo struct {
			NumRequests  int `json:"num_requests"`
			MatchedPairs int `json:"matched_pairs"`
		} `json:"trace_info"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("calibrate JSON: %v\n%s", err, head(string(out), 400))
	}
	if rep.TraceInfo.NumRequests != 10 || rep.TraceInfo.MatchedPairs != 10 {
		t.Errorf("calibrate: %+v, want 10 requests, all matched", rep.TraceInfo)
	}
}

// endlessTrace is a single-stream trace whose rows never end: one request
// every 10 ms, written as a server would list them (a little out of order).
type endlessTrace struct {
	buf  []byte
	next int64
}

func (e *endlessTrace) Read(p []byte) (int, error) {
	if e.buf == nil {
		e.buf = []byte("# trace_version: 3\n# time_unit: us\n# mode: real\n# warm_up_requests: 0\n" +
			"request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens," +
			"output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens," +
			"arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason\n")
	}
	for len(e.buf) < len(p) {
		id := e.next ^ 1 // pairs swapped
		at := 10_000 * id
		e.buf = fmt.Appendf(e.buf, "%d,c,,,,0,,0,true,8,4,0,0,0,0,0,,0,8,%d,%d,%d,%d,5,ok,,length\n", id, at, at, at+1000, at+2000)
		e.next++
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// TestTraceWindowOfEndlessPipe: --trace - with -n 100 (or --duration) on a
// trace that never ends reads as far as the window needs and plays its
// first 100 requests (or the first second's), in order.
func TestTraceWindowOfEndlessPipe(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-n", "100"}, 100},
		{[]string{"--duration", "1s"}, 101}, // 0 ms … 1000 ms
	} {
		o := clitest.Run(testCtx(t), "observe", run, &endlessTrace{}, append([]string{"--dry-run", "--quiet", "--trace", "-", "-o", "-"}, tc.args...)...)
		if o.Err != nil {
			t.Fatalf("%v: exit %d: %v\n%s", tc.args, o.Code, o.Err, o.Stderr)
		}
		tr := loadStream(t, o.Stdout)
		if len(tr.Records) != tc.want {
			t.Fatalf("%v: %d rows planned, want %d", tc.args, len(tr.Records), tc.want)
		}
		for i, r := range tr.Records {
			if r.ArrivalTimeUs != int64(i)*10_000 {
				t.Fatalf("%v: row %d arrives at %d µs, want %d", tc.args, i, r.ArrivalTimeUs, i*10_000)
			}
		}
	}
}
