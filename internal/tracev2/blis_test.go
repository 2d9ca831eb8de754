package tracev2

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"servesim/internal/testkit/blistest"
)

const blisE0 = 1772359200000000 // t0 of the BLIS sample, Unix µs

// TestBLISSample loads a BLIS-style real trace (epoch send times,
// time_unit microseconds, network: {}) and checks every field, raw and
// normalised.
func TestBLISSample(t *testing.T) {
	r, h, err := Open(Input{Path: "testdata/blis/real.csv"}, Options{Warn: noWarn(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	wantHeader := &Header{
		TraceVersion: 3, TimeUnit: "microseconds", CreatedAt: "2026-03-01T10:00:00Z", Mode: ModeReal,
		WarmUpRequests: 2, WorkloadSeed: i64(7), WorkloadSpec: "preset:chatbot",
		Server:            &Server{Type: "vllm", Model: "acme/chat-8b"},
		Network:           &Network{},
		GoodputSLOTargets: map[string]SLOTargets{"critical": {TTFTMs: 250, E2EMs: 2000}},
	}
	if !reflect.DeepEqual(h, wantHeader) {
		t.Errorf("header:\ngot  %+v\nwant %+v", h, wantHeader)
	}
	raw := readAllRecords(t, r)
	want := []Record{
		{RequestID: 3, ClientID: "web", TenantID: "acme", SLOClass: "critical", PrefixGroup: "sys", PrefixLength: 64,
			Streaming: true, InputTokens: 180, OutputTokens: 24, ServerInputTokens: 251, ArrivalTimeUs: 250000,
			SendTimeUs: blisE0 + 250310, FirstChunkTimeUs: blisE0 + 291800, LastChunkTimeUs: blisE0 + 470200,
			NumChunks: 26, Status: "ok", FinishReason: "length", XRequestID: "0b6f4c1e-2a7d-4f0e-9c1b-5d3e8a7f6b21"},
		{RequestID: 2, ClientID: "web", TenantID: "acme", SLOClass: "critical", PrefixGroup: "sys", PrefixLength: 64,
			Streaming: true, InputTokens: 95, OutputTokens: 24, ServerInputTokens: 166, ArrivalTimeUs: 125000,
			SendTimeUs: blisE0 + 125200, FirstChunkTimeUs: blisE0 + 170100, LastChunkTimeUs: blisE0 + 352000,
			NumChunks: 26, Status: "ok", FinishReason: "length", XRequestID: "7e21d0a4-93c5-4b8e-a1f2-0c6d9b4e3a17"},
		{RequestID: 4, ClientID: "bulk", TenantID: "beta", SLOClass: "batch", VLLMPriority: 5, Streaming: true,
			InputTokens: 900, ArrivalTimeUs: 375000, SendTimeUs: blisE0 + 375150, Status: "error",
			ErrorMessage: "HTTP 503: server overloaded", XRequestID: "c4a9e2b0-5f1d-4c7a-8e3b-2d9f6a1c0e58"},
	}
	if !reflect.DeepEqual(raw, want) {
		t.Fatalf("raw records:\ngot  %+v\nwant %+v", raw, want)
	}
	if got, want := r.Columns(), (Columns{VLLMPriority: true, XRequestID: true}); got != want {
		t.Errorf("columns: got %+v, want %+v", got, want)
	}
	o, err := r.Origin()
	if err != nil {
		t.Fatal(err)
	}
	// Rule 2: E0 = min(send − arrival) = 150 µs after the true t0 (row 4).
	if want := (Origin{Rule: RuleEpochSend, E0: blisE0 + 150}); o != want {
		t.Fatalf("origin: got %+v, want %+v", o, want)
	}

	tr, err := Load(Input{Path: "testdata/blis/real.yaml"}, Options{Warn: noWarn(t)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	norm := []struct{ send, first, last int64 }{{250160, 291650, 470050}, {125050, 169950, 351850}, {375000, 0, 0}}
	for i, w := range norm {
		got := tr.Records[i]
		if got.SendTimeUs != w.send || got.FirstChunkTimeUs != w.first || got.LastChunkTimeUs != w.last || got.ArrivalTimeUs != want[i].ArrivalTimeUs {
			t.Errorf("normalised row %d: send/first/last/arrival = %d/%d/%d/%d, want %d/%d/%d/%d", i, got.SendTimeUs,
				got.FirstChunkTimeUs, got.LastChunkTimeUs, got.ArrivalTimeUs, w.send, w.first, w.last, want[i].ArrivalTimeUs)
		}
	}
	if want := []int{2, 3, 4}; !reflect.DeepEqual(tr.Lines, want) {
		t.Errorf("lines: got %v, want %v", tr.Lines, want)
	}

	itl, err := OpenITL("testdata/blis/real.itl.csv", nil, tr.Origin)
	if err != nil {
		t.Fatal(err)
	}
	defer itl.Close()
	var rows []ITLRow
	for {
		var row ITLRow
		if err := itl.Read(&row); err != nil {
			break
		}
		rows = append(rows, row)
	}
	wantITL := []ITLRow{{3, 0, 291650}, {3, 1, 291676}, {3, 2, 298900}, {3, 25, 470050}}
	if !reflect.DeepEqual(rows, wantITL) {
		t.Errorf("ITL: got %v, want %v", rows, wantITL)
	}
}

// TestOlderLayouts loads every BLIS column layout of docs/tracev2.md §4.5.
func TestOlderLayouts(t *testing.T) {
	base := Record{RequestID: 7, ClientID: "c", TenantID: "t", SLOClass: "standard", SessionID: "s", RoundIndex: 1,
		PrefixGroup: "g", Streaming: true, InputTokens: 10, OutputTokens: 5, TextTokens: 10, ReasonRatio: 0.25,
		ArrivalTimeUs: 100, SendTimeUs: 110, FirstChunkTimeUs: 150, LastChunkTimeUs: 300, NumChunks: 6, Status: "ok"}
	with := func(f func(*Record)) Record { r := base; f(&r); return r }
	tests := []struct {
		name, cols, row string
		want            Record
	}{
		{"22 columns (v2, Feb 2026)",
			"request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message",
			"7,c,t,standard,s,1,g,true,10,5,10,0,0,0,0.25,100,110,150,300,6,ok,",
			base},
		{"25 columns (+model, deadline_us, server_input_tokens)",
			"request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message",
			"7,c,t,standard,s,1,g,true,10,5,10,0,0,0,0.25,m,5000,42,100,110,150,300,6,ok,",
			with(func(r *Record) { r.Model, r.DeadlineUs, r.ServerInputTokens = "m", 5000, 42 })},
		{"26 columns (+finish_reason)",
			"request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason",
			"7,c,t,standard,s,1,g,true,10,5,10,0,0,0,0.25,m,5000,42,100,110,150,300,6,ok,, stop ",
			with(func(r *Record) { r.Model, r.DeadlineUs, r.ServerInputTokens, r.FinishReason = "m", 5000, 42, "stop" })},
		{"27 columns (+prefix_length)",
			strings.Join(Columns{}.Names(), ","),
			"7,c,t,standard,s,1,g,32,true,10,5,10,0,0,0,0.25,m,5000,42,100,110,150,300,6,ok,,stop",
			with(func(r *Record) {
				r.Model, r.DeadlineUs, r.ServerInputTokens, r.FinishReason, r.PrefixLength = "m", 5000, 42, "stop", 32
			})},
		{"27 + optional columns",
			strings.Join(Columns{VLLMPriority: true, SLOTarget: true, XRequestID: true, Adapter: true, ThinkTime: true}.Names(), ","),
			"7,c,t,standard,1,s,1,g,32,true,10,5,10,0,0,0,0.25,m,5000,250000,42,100,110,150,300,6,ok,,stop, id-1 , lora ,",
			with(func(r *Record) {
				r.Model, r.DeadlineUs, r.ServerInputTokens, r.FinishReason, r.PrefixLength = "m", 5000, 42, "stop", 32
				r.VLLMPriority, r.SLOTargetUs, r.XRequestID, r.Adapter = 1, 250000, "id-1", "lora"
			})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.cols+"\n"+tc.row+"\n"), "old.csv", Options{Warn: noWarn(t)})
			if err != nil {
				t.Fatalf("NewReader: %v", err)
			}
			got := readAllRecords(t, r)
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestBLISStrictLoader: the loader above rejects what BLIS rejects (x_ext, an
// unknown server key), so the tests that pass through it can fail.
func TestBLISStrictLoader(t *testing.T) {
	for mode := range slices.Values(modes) {
		var buf bytes.Buffer
		if err := EncodeHeader(&buf, sampleHeader(mode)); err != nil {
			t.Fatal(err)
		}
		if err := blistest.StrictHeader(buf.Bytes()); err == nil || !strings.Contains(err.Error(), "x_ext") {
			t.Errorf("%s: a header with x_ext: got %v, want an error naming x_ext", mode, err)
		}
		h := sampleHeader(mode)
		h.XExt = nil
		buf.Reset()
		if err := EncodeHeader(&buf, h); err != nil {
			t.Fatal(err)
		}
		if err := blistest.StrictHeader(buf.Bytes()); err != nil {
			t.Errorf("%s: without x_ext: %v", mode, err)
		}
	}
	if err := blistest.StrictHeader([]byte("trace_version: 3\nserver:\n    num_gpu_blocks: 5\n")); err == nil {
		t.Error("an unknown server key: got nil, want an error")
	}
}
