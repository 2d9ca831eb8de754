package tracev2

import (
	"strings"
	"testing"
)

// shardTrace is worker i of n's trace starting at t0 (µs since the epoch),
// with the given request ids arriving 1 ms apart from offset at.
func shardTrace(name string, i, n int, t0 int64, at int64, ids ...int64) *Trace {
	h := DefaultHeader()
	h.Mode, h.WorkloadSpec = ModeReal, "preset:chatbot"
	h.XExt = &Ext{T0UnixUs: t0, Shard: ""}
	if n > 0 {
		h.XExt.Shard = string(rune('0'+i)) + "/" + string(rune('0'+n))
	}
	t := &Trace{Name: name, Header: h}
	for k, id := range ids {
		t.Records = append(t.Records, Record{RequestID: id, ArrivalTimeUs: at + int64(k)*1000, SendTimeUs: at + int64(k)*1000 + 50,
			FirstChunkTimeUs: at + int64(k)*1000 + 900, Status: "ok"})
		t.Lines = append(t.Lines, 2+k)
	}
	return t
}

// TestMergeShards: two workers' traces, the second started 5 ms after the
// first, merge onto the first's origin in arrival order; a missing shard
// is a warning.
func TestMergeShards(t *testing.T) {
	a := shardTrace("w0.csv", 0, 3, 1_700_000_000_000_000, 1000, 0, 3, 6)
	b := shardTrace("w1.csv", 1, 3, 1_700_000_000_005_000, 0, 1, 4)
	m, info, err := Merge([]*Trace{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	var at []int64
	for _, r := range m.Records {
		got, at = append(got, r.RequestID), append(at, r.ArrivalTimeUs)
	}
	want, wantAt := []int64{0, 3, 6, 1, 4}, []int64{1000, 2000, 3000, 5000, 6000}
	if len(got) != 5 || got[3] != want[3] || at[3] != wantAt[3] || at[0] != wantAt[0] || at[4] != wantAt[4] {
		t.Errorf("merged ids %v at %v µs, want %v at %v", got, at, want, wantAt)
	}
	if r := m.Records[3]; r.SendTimeUs != 5050 || r.FirstChunkTimeUs != 5900 {
		t.Errorf("shifted row: send %d, first chunk %d; want 5050, 5900", r.SendTimeUs, r.FirstChunkTimeUs)
	}
	if m.Header.XExt.Shard != "" || m.Header.XExt.T0UnixUs != a.Header.XExt.T0UnixUs || info.Parts[1].ShiftUs != 5000 {
		t.Errorf("header shard %q t0 %d, shift %d", m.Header.XExt.Shard, m.Header.XExt.T0UnixUs, info.Parts[1].ShiftUs)
	}
	if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "shard 2/3 is missing") {
		t.Errorf("warnings %q, want shard 2/3 missing", info.Warnings)
	}
}

// TestMergeRefuses traces that are not slices of one run.
func TestMergeRefuses(t *testing.T) {
	other := shardTrace("w1.csv", 1, 2, 1_700_000_000_000_000, 0, 1)
	other.Header.WorkloadSpec = "preset:multidoc"
	fan := shardTrace("w1.csv", 1, 3, 1_700_000_000_000_000, 0, 1)
	tp := shardTrace("w1.csv", 1, 2, 1_700_000_000_000_000, 0, 1)
	tp.Header.SetDeployment(map[string]any{"model": "m", "tensor_parallel": 4}, nil)
	model := shardTrace("w1.csv", 1, 2, 1_700_000_000_000_000, 0, 1)
	model.Header.Server = &Server{Type: "vllm", Model: "other"}
	rate := shardTrace("w1.csv", 1, 2, 1_700_000_000_000_000, 0, 1)
	rate.Header.XExt.Client = &Client{RateRPS: 20, Arrival: "poisson"}
	moved := shardTrace("w1.csv", 1, 2, 1_700_000_000_000_000+292*365*24*3600*1_000_000, 0, 1)
	garbage := shardTrace("w1.csv", 1, 2, 1_700_000_000_000_000, 0, 1)
	garbage.Header.XExt.Shard = "1/2garbage"
	for _, tc := range []struct {
		name string
		b    *Trace
		want string
	}{
		{"same id twice", shardTrace("w1.csv", 1, 2, 1_700_000_000_000_000, 0, 7, 3), "w1.csv:3:1: column request_id: 3 is also on line 3 of w0.csv"},
		{"another run", other, `w1.csv: workload_spec "preset:multidoc" differs from w0.csv's "preset:chatbot"`},
		{"another fan-out", fan, "w1.csv: shard 1/3 is not of the same fan-out as the others (of 2)"},
		{"same shard", shardTrace("w1.csv", 0, 2, 1_700_000_000_000_000, 0, 9), "w1.csv: shard 0/2 is also w0.csv"},
		{"not a shard", shardTrace("w1.csv", 0, 0, 1_700_000_000_000_000, 0, 9), "w1.csv: is not a shard"},
		{"another tensor parallelism", tp, "w1.csv: deployment tensor_parallel 4 differs from w0.csv's 2: not the same run"},
		{"another model", model, "w1.csv: deployment model other differs from w0.csv's m: not the same run"},
		{"another rate", rate, "w1.csv: x_ext.client.rate_rps 20 differs from w0.csv's 10: not the same run"},
		{"a t0 292 years later", moved, "w1.csv: starts 2557920h0m0s after the earliest input (t0 2315-09-05T22:13:20Z"},
		{"a shard with garbage", garbage, `w1.csv: x_ext.shard: "1/2garbage" is not I/N (two integers, as in 0/4)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w0 := shardTrace("w0.csv", 0, 2, 1_700_000_000_000_000, 0, 0, 3)
			w0.Header.SetDeployment(map[string]any{"model": "m", "tensor_parallel": 2}, nil)
			w0.Header.XExt.Client = &Client{RateRPS: 10, Arrival: "poisson"}
			if tc.b.Header.XExt.Client == nil {
				tc.b.Header.XExt.Client = &Client{RateRPS: 10, Arrival: "poisson"}
			}
			_, _, err := Merge([]*Trace{w0, tc.b})
			if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestShardLocated: a header whose x_ext.shard is not exactly I/N is
// refused where it stands.
func TestShardLocated(t *testing.T) {
	for _, shard := range []string{"1/2garbage", "-1/2", " 1/2", "2/2", "1/0", "1"} {
		text := "trace_version: 3\ntime_unit: us\nmode: real\nx_ext:\n  shard: \"" + shard + "\"\n"
		_, err := ReadHeader(strings.NewReader(text), "w.yaml", Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "w.yaml:5:10: key x_ext.shard: ") {
			t.Errorf("shard %q: error %v, want one at w.yaml:5:10", shard, err)
		}
	}
	if _, err := ReadHeader(strings.NewReader("trace_version: 3\ntime_unit: us\nmode: real\nx_ext:\n  shard: 1/2\n"), "w.yaml", Options{}); err != nil {
		t.Errorf("shard 1/2: %v", err)
	}
}
