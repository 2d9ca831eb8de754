package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

const genHeader = "trace_version: 3\ntime_unit: us\nmode: generated\nwarm_up_requests: 0\n"

const coreColumns = "request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason\n"

// TestBadInput: a malformed or empty trace is exit 2 with the reader's
// located message, and nothing is written.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		stdin   string
		args    []string // the first one is resolved in the temp dir, unless "-"
		wantErr string   // exact, with DIR for the temp dir
	}{
		{
			name: "malformed row",
			files: map[string]string{"bad.yaml": genHeader, "bad.csv": coreColumns +
				"0,coder,t2,batch,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n" +
				"1,coder,t2,batch,,0,,0,false,82,-3,0,0,0,0,0,,0,0,710200,710200,0,0,0,ok,,\n"},
			args:    []string{"bad.csv"},
			wantErr: `DIR/bad.csv:3:11: column output_tokens: "-3" is negative`,
		},
		{
			name: "malformed last row",
			files: map[string]string{"late.yaml": genHeader, "late.csv": coreColumns +
				strings.Repeat("0,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n", 50) +
				"1,c,,,,0,,0,false,82,3,0,0,0,0,1.5,,0,0,710200,710200,0,0,0,ok,,\n"},
			args:    []string{"late.csv"},
			wantErr: `DIR/late.csv:52:16: column reason_ratio: "1.5" is outside [0, 1]`,
		},
		{
			name:    "empty trace",
			files:   map[string]string{"empty.yaml": genHeader, "empty.csv": coreColumns},
			args:    []string{"empty.csv"},
			wantErr: "DIR/empty.csv: the trace has no requests",
		},
		{
			name:    "empty import",
			files:   map[string]string{"az.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n"},
			args:    []string{"az.csv", "--from", "azure"},
			wantErr: "DIR/az.csv: the trace has no requests",
		},
		{
			name: "skip-failed leaves nothing",
			files: map[string]string{"f.yaml": genHeader, "f.csv": coreColumns +
				"0,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,timeout,,\n"},
			args:    []string{"f.csv", "--skip-failed"},
			wantErr: "DIR/f.csv: no request is left: all 1 rows have a status other than ok (--skip-failed)",
		},
		{
			name: "duplicate request id",
			files: map[string]string{"d.yaml": genHeader, "d.csv": coreColumns +
				"7,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n" +
				"7,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,90000,90000,0,0,0,ok,,\n"},
			args:    []string{"d.csv"},
			wantErr: "DIR/d.csv:3:1: column request_id: 7 is duplicated (first on line 2)",
		},
		{
			name:    "malformed import",
			files:   map[string]string{"m.jsonl": `{"timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": [1]}` + "\n" + `{"timestamp": 5, "input_length": -4, "output_length": 3, "hash_ids": []}` + "\n"},
			args:    []string{"m.jsonl", "--from", "mooncake"},
			wantErr: `DIR/m.jsonl:2:34: field input_length: -4 is negative`,
		},
		{
			name: "duplicate request id on stdin",
			stdin: "# trace_version: 3\n# time_unit: us\n# mode: generated\n# warm_up_requests: 0\n" + coreColumns +
				"7,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n" +
				"8,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,85000,85000,0,0,0,ok,,\n" +
				"7,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,90000,90000,0,0,0,ok,,\n",
			args:    []string{"-"},
			wantErr: "<stdin>:8:1: column request_id: 7 is duplicated (first on line 6)",
		},
		{
			name:    "malformed stdin",
			stdin:   "# trace_version: 3\n# time_unit: us\n" + coreColumns + "7,c,,,,0,,0,maybe,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n",
			args:    []string{"-"},
			wantErr: `<stdin>:4:9: column streaming: "maybe" is not a boolean`,
		},
		{
			name: "token count at int64's top",
			files: map[string]string{"h.yaml": genHeader, "h.csv": coreColumns +
				"0,c,,,,0,,0,false,9223372036854775807,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n"},
			args:    []string{"h.csv"},
			wantErr: `DIR/h.csv:2:10: column input_tokens: "9223372036854775807" exceeds 16777216, the largest token count a trace may hold`,
		},
		{
			name: "prefix and prompt overflow together",
			files: map[string]string{"o.yaml": genHeader, "o.csv": coreColumns +
				"0,c,,,,0,g,9223372036854775000,false,9000,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n"},
			args:    []string{"o.csv"},
			wantErr: `DIR/o.csv:2:8: column prefix_length: "9223372036854775000" exceeds 16777216, the largest token count a trace may hold`,
		},
		{
			name:    "imported count above the bound",
			files:   map[string]string{"az.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:04,2000000000,3\n"},
			args:    []string{"az.csv", "--from", "azure"},
			wantErr: `DIR/az.csv:2:2: field ContextTokens: "2000000000" exceeds 16777216, the largest token count a trace may hold`,
		},
		{
			name:    "import row beyond a spool row",
			files:   map[string]string{"big.jsonl": `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [` + strings.Repeat("1000000000000000000, ", 40000) + "7]}\n"},
			args:    []string{"big.jsonl", "--from", "mooncake"},
			wantErr: `DIR/big.jsonl:1:688198: field hash_ids[32768]: more than 32768 entries`,
		},
		{
			name:    "unrecognised CSV with a 200 KB first line",
			files:   map[string]string{"w.csv": "alpha,beta,gamma" + strings.Repeat(",column", 25000) + "\n1,2,3\n"},
			args:    []string{"w.csv"},
			wantErr: `DIR/w.csv:1:1: header: want a YAML mapping of keys, got the value "alpha,beta,gamma,column,column,column,column,col"… (not a TraceV2 trace, and not the shape of an Azure, Mooncake, Vidur, vllm-bench or LLMServingSim trace either; --from FORMAT forces one)`,
		},
		{
			name:    "missing file",
			args:    []string{"nope.csv"},
			wantErr: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			before := dirEntries(t, dir)
			args := append([]string{filepath.Join(dir, tt.args[0])}, tt.args[1:]...)
			if tt.args[0] == "-" {
				args[0] = "-"
			}
			args = append(args, "--results-path", filepath.Join(dir, "sim.json"), "--metrics-out", filepath.Join(dir, "m.json"),
				"--trace-output", filepath.Join(dir, "out"), "--timeline", filepath.Join(dir, "tl.json"))
			r := replayIn(strings.NewReader(tt.stdin), args...)
			if code := exitcode.Of(r.err); code != 2 {
				t.Fatalf("exit %d (err %v), want 2", code, r.err)
			}
			if want := strings.ReplaceAll(tt.wantErr, "DIR", dir); want != "" && r.err.Error() != want {
				t.Errorf("error\n got %q\nwant %q", r.err.Error(), want)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if after := dirEntries(t, dir); !reflect.DeepEqual(after, before) {
				t.Errorf("files after the failure %v, want %v", after, before)
			}
		})
	}
}

// TestUsageErrors: bad flags are exit 2 before anything is read.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "no trace: give TRACE, - for stdin, or --trace-header and --trace-data (see --help)"},
		{[]string{"t.csv", "--format", "yaml"}, `--format "yaml": want json, jsonl or text`},
		{[]string{"t.csv", "--inject-at", "now"}, `--inject-at "now": want send or arrival`},
		{[]string{"t.csv", "--session-mode", "open"}, `--session-mode "open": want fixed or closed-loop`},
		{[]string{"t.csv", "--from", "csv"}, `--from "csv": want one of [azure mooncake vidur vllm-bench llmservingsim]`},
		{[]string{"t.csv", "--trace-output", "-"}, "--results-path and --trace-output all ask for stdout; give all but one of them a file (--results-path defaults to stdout with --format json or jsonl)"},
		{[]string{"t.csv", "--think-time", "-1s"}, "--think-time -1s is negative"},
		{[]string{"t.csv", "--hash-block-tokens", "0"}, "--hash-block-tokens 0 must be positive"},
		{[]string{"t.csv", "--hash-block-tokens", "9223372036854775807"}, "--hash-block-tokens 9223372036854775807 exceeds 16777216, the largest prompt a trace may hold"},
		{[]string{"a.csv", "b.csv", "--from", "azure"}, "several traces are merged by time: --trace-header, --trace-data and --from take one"},
	}
	for _, tt := range tests {
		r := replayIn(nil, tt.args...)
		if exitcode.Of(r.err) != 2 || r.err.Error() != tt.want {
			t.Errorf("replay %q: err %v (exit %d), want %q (exit 2)", tt.args, r.err, exitcode.Of(r.err), tt.want)
		}
	}
}

// TestHelp: --help carries a real pipeline example.
func TestHelp(t *testing.T) {
	r := replayIn(nil, "--help")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, want := range []string{"run --workload summarization --rate 2 --trace-output - | replay - --results-path sim.json",
		"--session-mode", "--timeline", "--from", "--max-num-seqs"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// TestEpochSendTimes: a real trace whose send and chunk times are Unix
// epoch µs (BLIS observe) replays exactly like the same trace written as
// offsets, and --inject-at chooses between send and arrival.
func TestEpochSendTimes(t *testing.T) {
	dir := t.TempDir()
	execRun(t, "--workload-spec", writeFile(t, filepath.Join(dir, "spec.yaml"), sessionsSpec),
		"--trace-output", filepath.Join(dir, "gen"))
	tr, err := tracev2.Load(tracev2.Input{Path: filepath.Join(dir, "gen.csv")}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const epoch = int64(1_767_225_600_000_000) // 2026-01-01 in µs
	offsets := make([]tracev2.Record, len(tr.Records))
	epochs := make([]tracev2.Record, len(tr.Records))
	for i, rec := range tr.Records {
		lag := int64(i*37) % 900 // dispatch lag; row 0 has none, so E0 is exact
		rec.SendTimeUs += lag
		rec.FirstChunkTimeUs += lag
		rec.LastChunkTimeUs += lag
		offsets[i] = rec
		rec.SendTimeUs += epoch
		rec.FirstChunkTimeUs += epoch
		rec.LastChunkTimeUs += epoch
		epochs[i] = rec
	}
	h := tr.Header.Clone()
	h.Mode = tracev2.ModeReal
	write := func(name string, recs []tracev2.Record) string {
		if err := tracev2.WriteFiles(filepath.Join(dir, name+".yaml"), filepath.Join(dir, name+".csv"), h, tr.Columns, false, recs); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name+".csv")
	}
	off, ep := write("offsets", offsets), write("epoch", epochs)
	for _, mode := range []string{"send", "arrival"} {
		for _, sm := range []string{"fixed", "closed-loop"} {
			a := mustReplay(t, nil, off, "--inject-at", mode, "--session-mode", sm)
			b := mustReplay(t, nil, ep, "--inject-at", mode, "--session-mode", sm)
			if a.stdout != b.stdout {
				t.Errorf("--inject-at %s --session-mode %s: epoch trace replays differently from offsets", mode, sm)
			}
			if sm == "closed-loop" {
				continue
			}
			var rs []tracev2.SimResult
			if err := json.Unmarshal([]byte(a.stdout), &rs); err != nil {
				t.Fatal(err)
			}
			byID := map[int64]tracev2.Record{}
			for _, rec := range offsets {
				byID[rec.RequestID] = rec
			}
			for _, r := range rs {
				rec := byID[r.RequestID]
				want := rec.SendTimeUs
				if mode == "arrival" {
					want = rec.ArrivalTimeUs
				}
				if r.ArrivalUs != want {
					t.Fatalf("--inject-at %s: request %d arrives at %d, want %d", mode, r.RequestID, r.ArrivalUs, want)
				}
			}
		}
	}
}

// TestReplayedTrace: --trace-output writes a replayed trace (mode
// replayed, rows numbered by the replayed list, the input's header facts
// kept), and replaying it again gives the same summary.
func TestReplayedTrace(t *testing.T) {
	dir := t.TempDir()
	execRun(t, "--workload-spec", writeFile(t, filepath.Join(dir, "spec.yaml"), prefixSpec), "--trace-output", filepath.Join(dir, "gen"))
	mustReplay(t, nil, filepath.Join(dir, "gen.csv"), "--trace-output", filepath.Join(dir, "rep"),
		"--metrics-out", filepath.Join(dir, "m1.json"), "--results-path", filepath.Join(dir, "s1.json"))
	tr, err := tracev2.Load(tracev2.Input{Path: filepath.Join(dir, "rep.csv")}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.Mode != tracev2.ModeReplayed || tr.Header.WorkloadSeed != nil || len(tr.Header.GoodputSLOTargets) != 2 {
		t.Errorf("header mode %q seed %v targets %v, want replayed, none, the input's two", tr.Header.Mode, tr.Header.WorkloadSeed, tr.Header.GoodputSLOTargets)
	}
	if !tr.Columns.Instance || !tr.Columns.Preemptions || !tr.Columns.SLOTarget {
		t.Errorf("columns %+v, want ext_instance, ext_preemptions and the input's slo_target_us", tr.Columns)
	}
	seen := make([]bool, len(tr.Records))
	for _, rec := range tr.Records {
		if rec.RequestID < 0 || int(rec.RequestID) >= len(seen) || seen[rec.RequestID] {
			t.Fatalf("request_id %d: want each of 0..%d once", rec.RequestID, len(seen)-1)
		}
		seen[rec.RequestID] = true
		if rec.Status != "ok" || rec.SendTimeUs != rec.ArrivalTimeUs || rec.LastChunkTimeUs < rec.FirstChunkTimeUs || rec.FirstChunkTimeUs <= rec.SendTimeUs || rec.Instance != "instance_0" {
			t.Fatalf("row %+v: want a completed simulated row", rec)
		}
	}
	mustReplay(t, nil, filepath.Join(dir, "rep.csv"), "--metrics-out", filepath.Join(dir, "m2.json"), "--results-path", filepath.Join(dir, "s2.json"))
	m1, _ := os.ReadFile(filepath.Join(dir, "m1.json"))
	m2, _ := os.ReadFile(filepath.Join(dir, "m2.json"))
	if string(m1) != string(m2) {
		diffSummaries(t, summaryOf(t, m2), summaryOf(t, m1))
	}
}

// replayWarns replays a trace of rows (below the core columns, under a
// generated header) written to DIR/NAME.csv, with args in which DIR stands
// for the temp dir; it must succeed and warn exactly once with want. It
// returns the dir.
func replayWarns(t *testing.T, name, rows, want string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, name+".yaml"), genHeader)
	trace := writeFile(t, filepath.Join(dir, name+".csv"), coreColumns+rows)
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "DIR", dir)
	}
	r := replayIn(nil, append([]string{trace, "--log-level", "warn"}, args...)...)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	if strings.Count(r.stderr, want) != 1 {
		t.Errorf("stderr should hold %q once:\n%s", want, r.stderr)
	}
	return dir
}

// TestOverlongRowsWarn: a row longer than the deployment's context is
// dropped as unservable, as vLLM would, and a warning says so.
func TestOverlongRowsWarn(t *testing.T) {
	dir := replayWarns(t, "l", "0,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n"+
		"1,c,,,,0,,0,false,5000,12,0,0,0,0,0,,0,0,90000,90000,0,0,0,ok,,\n"+
		"2,c,,,,0,,0,false,3000,2000,0,0,0,0,0,,0,0,95000,95000,0,0,0,ok,,\n",
		"2 requests exceed max_model_len 4096 (the first, request 1: 5000 prompt + 12 output tokens): dropped as unservable",
		"--max-model-len", "4096", "--results-path", "DIR/s.json", "--metrics-out", "DIR/m.json")
	b, err := os.ReadFile(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Dropped   int `json:"dropped_unservable"`
		Completed int `json:"completed_requests"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Dropped != 2 || m.Completed != 1 {
		t.Errorf("summary dropped %d completed %d (%v), want 2 and 1", m.Dropped, m.Completed, err)
	}
}

// TestTornTraceReplays: a trace whose last row a full disk cut short
// replays the rows before it, with one warning.
func TestTornTraceReplays(t *testing.T) {
	dir := replayWarns(t, "t", "0,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n"+
		"1,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,90000,90000,0,0,0,ok,,\n"+
		"2,c,,,,0,,0,false,40,12,0,0,0,",
		"t.csv:4: the last row is cut short (no line end: missing: the row has 15 fields, the column row 27); skipped",
		"--results-path", "DIR/s.json")
	if got := readSimResults(t, filepath.Join(dir, "s.json")); len(got) != 2 {
		t.Errorf("%d results, want 2", len(got))
	}
}

// TestUnknownStatusWarns: a status outside docs/tracev2.md §4.6 is replayed,
// with one warning naming it, its first line and how many rows have one.
func TestUnknownStatusWarns(t *testing.T) {
	replayWarns(t, "s", "0,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n"+
		"1,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,90000,90000,0,0,0,weird,,\n"+
		"2,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,95000,95000,0,0,0,odd,,\n"+
		"3,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,99000,99000,0,0,0,weird,,\n",
		`s.csv:3: status weird and 1 other unknown values on 3 rows: not ok, error, timeout or incomplete; treated as not ok (replayed all the same; --skip-failed leaves them out)`,
		"--results-path", "DIR/r.json")
}
