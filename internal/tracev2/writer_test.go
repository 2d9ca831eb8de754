package tracev2

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
)

// TestQuotingMatchesEncodingCSV: string fields are quoted exactly as
// encoding/csv quotes them (docs/tracev2.md §4.1).
func TestQuotingMatchesEncodingCSV(t *testing.T) {
	for _, s := range []string{"", "plain", "a,b", `say "hi"`, "two\nlines", "cr\rhere", " lead", "\tlead", "trail ",
		`\.`, `\.x`, "\u00a0nbsp", "ünï", `"`, ","} {
		var want bytes.Buffer
		cw := csv.NewWriter(&want)
		cw.Write([]string{s})
		cw.Flush()
		got := string(appendString(nil, s)) + "\n"
		if got != want.String() {
			t.Errorf("appendString(%q) = %q, encoding/csv writes %q", s, got, want.String())
		}
	}
}

func TestColumnOrder(t *testing.T) {
	all := Columns{VLLMPriority: true, SLOTarget: true, XRequestID: true, Adapter: true, ThinkTime: true,
		FirstTokenTime: true, CachedTokens: true, Instance: true, Preemptions: true, HashIDs: true}
	want := "request_id,client_id,tenant_id,slo_class,vllm_priority,session_id,round_index,prefix_group,prefix_length," +
		"streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model," +
		"deadline_us,slo_target_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us," +
		"last_chunk_time_us,num_chunks,status,error_message,finish_reason,x_request_id,adapter,think_time_us," +
		"ext_first_token_time_us,ext_cached_tokens,ext_instance,ext_preemptions,ext_hash_ids"
	if got := strings.Join(all.Names(), ","); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if n := len(Columns{}.Names()); n != 27 {
		t.Errorf("core columns: %d, want 27", n)
	}
}

func TestWriterRejects(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{"negative tokens", Record{RequestID: 4, OutputTokens: -3}, "trace row (request_id 4): column output_tokens: -3 is negative"},
		{"NaN ratio", Record{RequestID: 5, ReasonRatio: math.NaN()}, "trace row (request_id 5): column reason_ratio: NaN is outside [0, 1]"},
		{"deadline before arrival", Record{RequestID: 6, DeadlineUs: 5, ArrivalTimeUs: 9}, "trace row (request_id 6): column deadline_us: 5 is before arrival_time_us 9"},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		w, _ := NewWriter(&b, Columns{})
		n := b.Len()
		if err := w.Write(&tc.rec); err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
		if b.Len() != n {
			t.Errorf("%s: a rejected row was written", tc.name)
		}
	}
}

func TestReasonRatioFormat(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.01: "0.01", 0.5: "0.5", 1: "1", 1e-7: "0.0000001", 1.0 / 3: "0.3333333333333333"} {
		got := string(appendField(nil, colReasonRatio, &Record{ReasonRatio: v}))
		if got != want {
			t.Errorf("reason_ratio %v written as %q, want %q", v, got, want)
		}
	}
}
